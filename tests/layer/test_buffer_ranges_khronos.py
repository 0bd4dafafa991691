"""Buffer ranges behind uniform and storage buffer descriptors, side by side with the Khronos
layer 1.4.309's GPU-AV: each scenario (after the Khronos layer's own GPU-AV tests of buffer
ranges: runtime arrays, sub-ranges, dynamic offsets, uniform blocks, atomics, struct strides,
negative indices) runs ``apps/buffer_range_app.c`` under gpuav and under the Khronos layer.
Whatever the Khronos layer reports, gpuav reports under the same VUID, with the exact bytes;
where both are silent, the program's results are those of a run without layer. The Khronos
layer misses out-of-range atomics, on buffers and texel buffers (``khronos_finds=False``);
gpuav reports them. It crashes (SIGSEGV) on lavapipe when a texel buffer is pushed with a
descriptor update template (``khronos_runs=False``).
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
from tests.shaders.glsl import compile_glsl
from tests.workflow.programs import gpuav_run

pytestmark = pytest.mark.vulkan

HEADER = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 1) buffer Out { uint o[16]; } o;
layout(push_constant) uniform P { int index; } p;
"""
SHADERS = {
    "read": "layout(set = 0, binding = 0) buffer Data { uint v[]; } data;\n"
    "void main() {\n    o.o[0] = data.v[p.index];\n}\n",
    "write": "layout(set = 0, binding = 0) buffer Data { uint v[]; } data;\n"
    "void main() {\n    data.v[p.index] = 7u;\n    o.o[0] = 1u;\n}\n",
    "atomic": "layout(set = 0, binding = 0) buffer Data { uint v[]; } data;\n"
    "void main() {\n    o.o[0] = atomicAdd(data.v[p.index], 1u);\n}\n",
    "uniform": "layout(set = 0, binding = 0) uniform Data { uvec4 v[8]; } data;\n"
    "void main() {\n    o.o[0] = data.v[p.index].y;\n}\n",
    "texel_fetch": "layout(set = 0, binding = 0) uniform usamplerBuffer texels;\n"
    "void main() {\n    o.o[0] = texelFetch(texels, p.index).x;\n}\n",
    "texel_store": "layout(set = 0, binding = 0, r32ui) uniform uimageBuffer texels;\n"
    "void main() {\n    imageStore(texels, p.index, uvec4(7u));\n    o.o[0] = 1u;\n}\n",
    "texel_atomic": "layout(set = 0, binding = 0, r32ui) uniform uimageBuffer texels;\n"
    "void main() {\n    o.o[0] = imageAtomicAdd(texels, p.index, 1u);\n}\n",
    "ubo_two_ints": "layout(set = 0, binding = 0) uniform Data { int x; int y; } data;\n"
    "void main() {\n    o.o[0] = uint(data.x + data.y + p.index);\n}\n",
    "ssbo_two_ints": "layout(set = 0, binding = 0) readonly buffer Data { int x; int y; } data;\n"
    "void main() {\n    o.o[0] = uint(data.x + data.y + p.index);\n}\n",
    "ubo_array17": "layout(set = 0, binding = 0) uniform Data { int x[17]; } data;\n"
    "void main() {\n    int y = p.index;\n    for (int i = 0; i < 17; i++) y += data.x[i];\n"
    "    o.o[0] = uint(y);\n}\n",
    "ubo_nested": "struct S { int x; int y; };\n"
    "layout(set = 0, binding = 0) uniform Data { int a; S b; } data;\n"
    "void main() {\n    o.o[0] = uint(data.a + data.b.x + data.b.y + p.index);\n}\n",
    "struct": "struct Particle { vec4 position; vec4 velocity; };\n"
    "layout(set = 0, binding = 0) buffer Data { Particle particles[]; } data;\n"
    "void main() {\n    o.o[0] = floatBitsToUint(data.particles[p.index].velocity.z);\n}\n",
}


def access_line(shader: str) -> int:
    """The source line of main's first access to the tested descriptor."""
    lines = (HEADER + SHADERS[shader]).splitlines()
    body = lines.index("void main() {")
    return next(
        number
        for number, line in enumerate(lines[body:], body + 1)
        if "data." in line or "texels" in line
    )


@dataclass(frozen=True)
class Scenario:
    shader: str
    descriptor_type: str
    size: int
    offset: int
    range: int  # 0: VK_WHOLE_SIZE
    dynamic: int
    index: int
    # gpuav's first line: the access, its first byte and size, the range; None: silent
    expected: str | None
    khronos_finds: bool = True  # False where the Khronos layer 1.4.309 misses the error
    khronos_runs: bool = True  # False where it crashes on the program (no comparison)
    options: str = ""  # buffer_range_app's: template, push

    def arguments(self) -> list[str]:
        values = (self.size, self.offset, self.range, self.dynamic, self.index)
        options = [self.options] if self.options else []
        return [self.descriptor_type, *(str(value) for value in values), "particles", *options]


SCENARIOS = {
    "one_past_the_end": Scenario(
        "read", "storage", 64, 0, 0, 0, 16, "read: 4 bytes at offset 64 .* 64 bytes bound"
    ),
    "last_word": Scenario("read", "storage", 64, 0, 0, 0, 15, None),
    "far_out": Scenario(
        "read", "storage", 64, 0, 0, 0, 100_000, "read: 4 bytes at offset 400000 .* 64 bytes"
    ),
    "negative": Scenario(
        "read", "storage", 64, 0, 0, 0, -1, "read: 4 bytes at offset -4 \\(a negative index\\)"
    ),
    "sub_range_write": Scenario(
        "write", "storage", 512, 256, 64, 0, 16, "write: 4 bytes at offset 64 .* 64 bytes bound"
    ),
    "sub_range_inside": Scenario("write", "storage", 512, 256, 64, 0, 15, None),
    "whole_size_from_offset": Scenario(
        "read", "storage", 512, 256, 0, 0, 64, "read: 4 bytes at offset 256 .* 256 bytes"
    ),
    "dynamic_offset": Scenario(
        "read", "storage_dynamic", 512, 0, 64, 256, 16, "read: 4 bytes at offset 64 .* 64 bytes"
    ),
    "dynamic_inside": Scenario("read", "storage_dynamic", 512, 0, 64, 256, 15, None),
    "atomic": Scenario(
        "atomic",
        "storage",
        64,
        0,
        0,
        0,
        16,
        "atomic: 4 bytes at offset 64 .* 64 bytes bound",
        khronos_finds=False,
    ),
    "uniform_block": Scenario(
        "uniform", "uniform", 256, 0, 64, 0, 4, "uniform buffer read: 4 bytes at offset 68"
    ),
    "uniform_inside": Scenario("uniform", "uniform", 256, 0, 64, 0, 3, None),
    "struct_stride": Scenario(
        "struct", "storage", 256, 0, 88, 0, 2, "read: 4 bytes at offset 88 .* 88 bytes bound"
    ),
    "struct_inside": Scenario("struct", "storage", 256, 0, 96, 0, 2, None),
    "texel_fetch_past_the_view": Scenario(
        "texel_fetch",
        "uniform_texel",
        512,
        256,
        64,
        0,
        16,
        "uniform texel buffer fetch: texel 16 .* holds 16 texels",
    ),
    "texel_fetch_inside": Scenario("texel_fetch", "uniform_texel", 512, 256, 64, 0, 15, None),
    "texel_store_negative": Scenario(
        "texel_store",
        "storage_texel",
        512,
        0,
        0,
        0,
        -3,
        "storage texel buffer write: texel -3 .* holds 128 texels",
    ),
    "texel_atomic_past_the_view": Scenario(
        "texel_atomic",
        "storage_texel",
        512,
        0,
        256,
        0,
        64,
        "storage texel buffer atomic: texel 64 .* holds 64 texels",
        khronos_finds=False,
    ),
    "texel_atomic_inside": Scenario("texel_atomic", "storage_texel", 512, 0, 256, 0, 63, None),
    # After the Khronos layer's own tests of blocks bound too small (UniformBufferTooSmall,
    # ...TooSmall2, StorageBufferTooSmall, ...TooSmallArray, ...TooSmallNestedStruct).
    "uniform_too_small": Scenario(
        "ubo_two_ints", "uniform", 4, 0, 4, 0, 0, "uniform buffer read: 4 bytes at offset 4"
    ),
    "uniform_half_bound": Scenario(
        "ubo_two_ints", "uniform", 256, 0, 4, 0, 0, "uniform buffer read: 4 bytes at offset 4"
    ),
    "storage_too_small": Scenario(
        "ssbo_two_ints", "storage", 4, 0, 4, 0, 0, "storage buffer read: 4 bytes at offset 4"
    ),
    "uniform_array_too_small": Scenario(
        "ubo_array17", "uniform", 256, 0, 64, 0, 0, "uniform buffer read: 4 bytes at offset 64"
    ),
    "uniform_nested_struct": Scenario(
        "ubo_nested", "uniform", 256, 0, 8, 0, 0, "uniform buffer read: 4 bytes at offset 16"
    ),
    "uniform_nested_inside": Scenario("ubo_nested", "uniform", 256, 0, 24, 0, 0, None),
    "update_template": Scenario(
        "write",
        "storage",
        512,
        256,
        64,
        0,
        16,
        "write: 4 bytes at offset 64 .* 64 bytes bound",
        options="template",
    ),
    "pushed": Scenario(
        "read", "storage", 512, 256, 64, 0, 16, "read: 4 bytes at offset 64 .*", options="push"
    ),
    "pushed_inside": Scenario("read", "storage", 512, 256, 64, 0, 15, None, options="push"),
    "pushed_with_template": Scenario(
        "texel_fetch",
        "uniform_texel",
        512,
        256,
        64,
        0,
        16,
        "texel buffer fetch: texel 16 .* holds 16 texels",
        options="push,template",
        khronos_runs=False,
    ),
}
KHRONOS_IDS = {"storage": "storageBuffers-06936", "uniform": "uniformBuffers-06935"}
# The Khronos layer's id for texel buffers (the spec has no VUID), and gpuav's.
KHRONOS_TEXEL_ID = "UNASSIGNED-Descriptor Texel Buffer texel out of bounds"
GPUAV_TEXEL_ID = "GPUAV-texel-buffer-out-of-bounds"


@pytest.fixture(scope="module")
def buffer_range_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("buffer_range_app")
    return compile_c_program(folder / "buffer_range_app", [APPS / "buffer_range_app.c"])


@pytest.fixture(scope="module")
def shader_file(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    folder = tmp_path_factory.mktemp("buffer_range_shaders")

    def compile_(name: str) -> Path:
        path = folder / f"{name}.spv"
        if not path.exists():
            words = compile_glsl(HEADER + SHADERS[name], "comp", debug="g")
            path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        return path

    return compile_


def _errors(stdout: str) -> list[dict[str, str]]:
    messages = parse_c_output(stdout)["messages"]
    found = ("VUID-", KHRONOS_TEXEL_ID, GPUAV_TEXEL_ID)
    return [m for m in messages if m["severity"] >= 0x1000 and m["id"].startswith(found)]


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
def test_gpuav_reports_what_khronos_reports_with_the_bytes(
    name: str,
    buffer_range_app: Path,
    shader_file: Callable[[str], Path],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    scenario = SCENARIOS[name]
    argv = [str(buffer_range_app), str(shader_file(scenario.shader)), *scenario.arguments()]
    khronos_environment = newer_khronos.gpu_assisted_environment()
    khronos: list[dict[str, str]] = []
    if scenario.khronos_runs:
        khronos = _errors(_run(newer_khronos.command(argv), khronos_environment, tmp_path))
    gpuav_out = _run(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    gpuav = _errors(gpuav_out)
    kind = "uniform" if scenario.descriptor_type.startswith("uniform") else "storage"
    vuid = f"VUID-vkCmdDispatch-{KHRONOS_IDS[kind]}"
    khronos_id = vuid
    if scenario.descriptor_type.endswith("texel"):
        vuid, khronos_id = GPUAV_TEXEL_ID, KHRONOS_TEXEL_ID
    if scenario.expected is None:
        assert khronos == []
        assert gpuav == []
        plain = _run(argv, app_environment(None), tmp_path)
        assert _results(gpuav_out) == _results(plain)
        return
    finds = scenario.khronos_finds and scenario.khronos_runs
    assert {m["id"] for m in khronos} == ({khronos_id} if finds else set()), khronos
    assert {m["id"] for m in gpuav} == {vuid}, gpuav
    # One message per instruction (with a count) where the Khronos layer repeats itself.
    text = gpuav[0]["text"]
    assert re.search(scenario.expected, text), text
    assert f"line {access_line(scenario.shader)}" in text
    if "push" not in scenario.options:  # pushed descriptors' buffers are not named yet
        assert "buffer 'particles'" in text.lower()


def test_robust_buffer_access_makes_it_a_warning_or_silence(
    buffer_range_app: Path,
    shader_file: Callable[[str], Path],
    layer_folder: Path,
    tmp_path: Path,
) -> None:
    """With robustBufferAccess on, the access is defined: a warning by default, nothing with
    the layer setting robust_buffer_warnings = false given through VK_EXT_layer_settings."""
    scenario = SCENARIOS["one_past_the_end"]
    argv = [str(buffer_range_app), str(shader_file(scenario.shader)), *scenario.arguments()]
    environment = app_environment(layer_folder, instrumenter=None)
    messages = parse_c_output(_run([*argv, "robust"], environment, tmp_path))["messages"]
    warnings = [m for m in messages if m["id"] == "VUID-vkCmdDispatch-storageBuffers-06936"]
    assert [m["severity"] for m in warnings] == [0x100]
    assert "Robust buffer access is on" in warnings[0]["text"]
    quiet = parse_c_output(_run([*argv, "robust,quiet"], environment, tmp_path))["messages"]
    assert not [m for m in quiet if "storageBuffers" in m["id"]]


def test_pipeline_robustness_makes_it_a_warning_as_for_the_khronos_layer(
    buffer_range_app: Path,
    shader_file: Callable[[str], Path],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    """VK_EXT_pipeline_robustness asking robust buffer access for the pipeline alone: the
    Khronos layer 1.4.309 warns (its RobustBuffer test), and so does gpuav."""
    scenario = SCENARIOS["one_past_the_end"]
    argv = [str(buffer_range_app), str(shader_file(scenario.shader)), *scenario.arguments()]
    argv.append("per_pipeline")
    environment = app_environment(layer_folder, instrumenter=None)
    ours = parse_c_output(_run(argv, environment, tmp_path))["messages"]
    khronos = parse_c_output(
        _run(newer_khronos.command(argv), newer_khronos.gpu_assisted_environment(), tmp_path)
    )["messages"]
    assert [m["severity"] for m in ours if "storageBuffers" in m["id"]] == [0x100]
    assert any(m["severity"] == 0x100 and "out of bounds" in m["text"] for m in khronos)
    assert not [m for m in khronos if m["severity"] >= 0x1000 and "storageBuffers" in m["id"]]


@pytest.mark.parametrize("name", ["negative", "texel_fetch_past_the_view"])
def test_json_report_carries_the_bytes_and_the_buffer(
    name: str, buffer_range_app: Path, shader_file: Callable[[str], Path], tmp_path: Path
) -> None:
    scenario = SCENARIOS[name]
    argv = [str(buffer_range_app), str(shader_file(scenario.shader)), *scenario.arguments()]
    report = tmp_path / "report.json"
    gpuav_run(["--json", str(report)], argv, tmp_path)
    content = json.loads(report.read_text())
    jsonschema.validate(content, report_schema())
    (error,) = [m for m in content["messages"] if m["severity"] == "error"]
    memory = error["memory"]
    assert memory["buffer"]["name"] == "particles"
    assert (memory["set"], memory["binding"], memory["index"]) == (0, 0, 0)
    if name == "negative":
        assert memory["kind"] == "storage-buffer"
        assert (memory["offset"], memory["size"], memory["bound"]) == (-4, 4, 64)
        assert memory["negative_index"] is True
        assert memory["buffer"]["size"] == 64
    else:
        assert memory["kind"] == "uniform-texel-buffer"
        assert (memory["texel"], memory["texels"]) == (16, 16)
        assert (memory["buffer"]["offset"], memory["buffer"]["range"]) == (256, 64)
        assert memory["buffer"]["view"]
