"""Buffer device addresses, side by side with the Khronos layer 1.4.309's GPU-AV: each scenario
(after the Khronos layer's own tests in ``gpu_av_buffer_device_address.cpp``: reads and writes
before and past a buffer, scalar-layout struct members, misaligned loads and stores against
their ``Aligned`` operand) runs ``apps/address_app.c`` under gpuav and under the Khronos
layer. Whatever the Khronos layer reports, gpuav reports under the same id, with the exact
address and size and the buffer it falls in or is nearest to; where both are silent, the
program's results are those of a run without layer. Beyond it: an access into a destroyed
buffer is a use after free.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from gpuav.report.json_report import report_schema
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APP_TIMEOUT, APPS, app_environment, parse_c_output
from tests.layer.test_khronos_below import NewerKhronos, newer_khronos  # noqa: F401
from tests.shaders.glsl import TargetEnv, compile_glsl
from tests.workflow.programs import gpuav_run

pytestmark = pytest.mark.vulkan

HEADER = """#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_scalar_block_layout : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Out { uint o[16]; } o;
"""
WORDS = "layout(buffer_reference, std430, buffer_reference_align = 4) buffer Data { uint v[]; };\n"
PUSH = "layout(push_constant) uniform P { {kind} data; int index; } p;\n"
SHADERS = {
    "read": WORDS
    + PUSH.replace("{kind}", "Data")
    + "void main() {\n    o.o[0] = p.data.v[p.index];\n}\n",
    "write": WORDS
    + PUSH.replace("{kind}", "Data")
    + "void main() {\n    p.data.v[p.index] = 7u;\n    o.o[0] = 1u;\n}\n",
    "atomic": WORDS
    + PUSH.replace("{kind}", "Data")
    + "void main() {\n    o.o[0] = atomicAdd(p.data.v[p.index], 1u);\n}\n",
    "quad_store": "layout(buffer_reference, std430, buffer_reference_align = 16) buffer Quad "
    "{ uvec4 q; };\n"
    + PUSH.replace("{kind}", "Quad")
    + "void main() {\n    p.data.q = uvec4(7u);\n    o.o[0] = 1u;\n}\n",
    "scalar_struct": "layout(buffer_reference, scalar, buffer_reference_align = 4) buffer S "
    "{ float f; vec3 v; };\n"
    + PUSH.replace("{kind}", "S")
    + "void main() {\n    p.data.v = vec3(1.0, 2.0, 3.0);\n    o.o[0] = 1u;\n}\n",
}


def access_line(shader: str) -> int:
    """The source line of main's first statement (the access)."""
    lines = (HEADER + SHADERS[shader]).splitlines()
    return lines.index("void main() {") + 2


@dataclass(frozen=True)
class Scenario:
    shader: str
    size: int
    offset: int  # added to the buffer's address
    index: int
    # gpuav's first line after "device address <access>: "; None: silent
    expected: str | None
    khronos_id: str | None = "UNASSIGNED-Device address out of bounds"
    options: str = ""

    def arguments(self) -> list[str]:
        return [str(self.size), str(self.offset), str(self.index), "particles", self.options]


OUT_OF_BOUNDS = "UNASSIGNED-Device address out of bounds"
MISALIGNED = "VUID-RuntimeSpirv-PhysicalStorageBuffer64-06315"
PARTICLES = r"buffer 'particles' \(0x[0-9a-f]+, {size} bytes at 0x[0-9a-f]+\)"
SCENARIOS = {
    "one_past_the_end": Scenario(
        "read",
        64,
        0,
        16,
        "read: 4 bytes at 0x[0-9a-f]+, 0 bytes after the end of " + PARTICLES.format(size=64),
    ),
    "last_word": Scenario("read", 64, 0, 15, None),
    "far_out": Scenario(
        "read",
        64,
        0,
        1000,
        "read: 4 bytes at 0x[0-9a-f]+, 3936 bytes after the end of " + PARTICLES.format(size=64),
    ),
    "before_the_start": Scenario(
        "read",
        64,
        -16,
        0,
        "read: 4 bytes at 0x[0-9a-f]+, 16 bytes before the start of " + PARTICLES.format(size=64),
    ),
    "write_past_the_end": Scenario(
        "write",
        64,
        0,
        16,
        "write: 4 bytes at 0x[0-9a-f]+, 0 bytes after the end of " + PARTICLES.format(size=64),
    ),
    "write_inside": Scenario("write", 64, 0, 3, None),
    "atomic_past_the_end": Scenario(
        "atomic",
        64,
        0,
        20,
        "atomic: 4 bytes at 0x[0-9a-f]+, 16 bytes after the end of " + PARTICLES.format(size=64),
    ),
    "scalar_struct_member": Scenario(
        "scalar_struct",
        12,
        0,
        0,
        "write: 12 bytes at 0x[0-9a-f]+, at offset 4 of "
        + PARTICLES.format(size=12)
        + ", 4 of its bytes past the end",
    ),
    "misaligned_store": Scenario(
        "quad_store",
        256,
        4,
        0,
        "write: 16 bytes at 0x[0-9a-f]+, which is not a multiple of "
        "the 16 bytes its Aligned memory operand promises \\(4 bytes past one\\)",
        khronos_id=MISALIGNED,
    ),
    "aligned_store": Scenario("quad_store", 256, 16, 0, None),
    "use_after_free": Scenario(
        "read",
        64,
        0,
        2,
        "read: 4 bytes at 0x[0-9a-f]+, at offset 8 of buffer 'freed' "
        r"\(0x[0-9a-f]+, 64 bytes at 0x[0-9a-f]+\), which was destroyed \(use after free\)",
        options="destroyed",
    ),
}


@pytest.fixture(scope="module")
def address_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("address_app")
    return compile_c_program(folder / "address_app", [APPS / "address_app.c"])


@pytest.fixture(scope="module")
def shader_file(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, TargetEnv], Path]:
    folder = tmp_path_factory.mktemp("address_shaders")

    def compile_(name: str, target_env: TargetEnv = "vulkan1.2") -> Path:
        path = folder / f"{name}-{target_env}.spv"
        if not path.exists():
            words = compile_glsl(HEADER + SHADERS[name], "comp", target_env=target_env, debug="g")
            path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        return path

    return compile_


def _errors(stdout: str) -> list[dict[str, str]]:
    messages = parse_c_output(stdout)["messages"]
    ids = (OUT_OF_BOUNDS, MISALIGNED)
    return [m for m in messages if m["severity"] >= 0x1000 and m["id"] in ids]


def _results(stdout: str) -> tuple[str, str]:
    parsed = parse_c_output(stdout)
    return parsed["result"], parsed["data"]


def _run(command: list[str], environment: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        command, env=environment, cwd=cwd, capture_output=True, text=True, timeout=APP_TIMEOUT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("name", SCENARIOS)
def test_gpuav_reports_what_khronos_reports_with_the_buffer(
    name: str,
    address_app: Path,
    shader_file: Callable[[str, TargetEnv], Path],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    scenario = SCENARIOS[name]
    argv = [str(address_app), str(shader_file(scenario.shader, "vulkan1.2")), *scenario.arguments()]
    khronos_environment = newer_khronos.gpu_assisted_environment()
    khronos = _errors(_run(newer_khronos.command(argv), khronos_environment, tmp_path))
    gpuav_out = _run(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    gpuav = _errors(gpuav_out)
    plain = _run(argv, app_environment(None), tmp_path)
    if scenario.expected is None:
        assert khronos == []
        assert gpuav == []
        assert _results(gpuav_out) == _results(plain)
        return
    # The Khronos layer finds every one (the destroyed buffer's too, as out of bounds), with
    # the same number of bytes; gpuav names the buffer and how far.
    assert [m["id"] for m in khronos] == [scenario.khronos_id], khronos
    assert [m["id"] for m in gpuav] == [scenario.khronos_id], gpuav
    text = gpuav[0]["text"]
    assert re.search("device address " + scenario.expected, text), text
    assert f"line {access_line(scenario.shader)}" in text
    khronos_bytes = re.search(
        r"(\d+) bytes (?:read|written)|Aligned operand of (\d+)", khronos[0]["text"]
    )
    assert khronos_bytes is not None, khronos[0]["text"]
    assert f" {khronos_bytes.group(1) or khronos_bytes.group(2)} bytes " in text
    # The failing access was skipped: a read or atomic gave zero, a write changed nothing.
    result, data = _results(gpuav_out)
    if scenario.shader in ("read", "atomic"):
        assert result.split()[0] == "0"
    else:
        untouched = [str(1000 + k) for k in range(min(scenario.size // 4, 16))]
        assert data.split() == untouched


@pytest.mark.parametrize("target_env", ["vulkan1.0", "vulkan1.2"])
def test_pointers_before_and_after_spirv_1_5_are_checked(
    target_env: TargetEnv,
    address_app: Path,
    shader_file: Callable[[str, TargetEnv], Path],
    layer_folder: Path,
    tmp_path: Path,
) -> None:
    """SPIR-V 1.0 reads pointers as 64-bit integers (the layer turned shaderInt64 on), 1.5
    as two words: both report the same bytes."""
    scenario = SCENARIOS["one_past_the_end"]
    argv = [str(address_app), str(shader_file("read", target_env)), *scenario.arguments()]
    gpuav = _errors(_run(argv, app_environment(layer_folder, instrumenter=None), tmp_path))
    assert [m["id"] for m in gpuav] == [OUT_OF_BOUNDS]
    assert re.search("device address " + str(scenario.expected), gpuav[0]["text"])


def test_json_report_carries_the_address_and_the_buffer(
    address_app: Path, shader_file: Callable[[str, TargetEnv], Path], tmp_path: Path
) -> None:
    scenario = SCENARIOS["before_the_start"]
    argv = [str(address_app), str(shader_file(scenario.shader, "vulkan1.2")), *scenario.arguments()]
    report = tmp_path / "report.json"
    gpuav_run(["--json", str(report)], argv, tmp_path)
    content = json.loads(report.read_text())
    jsonschema.validate(content, report_schema())
    (error,) = [m for m in content["messages"] if m["severity"] == "error"]
    assert error["id"] == OUT_OF_BOUNDS
    facts = error["error"]["address"]
    assert facts["relation"] == "before-start"
    assert (facts["size"], facts["distance"], facts["alignment"]) == (4, 16, 4)
    assert facts["buffer"]["name"] == "particles"
    assert facts["buffer"]["size"] == 64
    assert facts["address"] == facts["buffer"]["address"] - 16
