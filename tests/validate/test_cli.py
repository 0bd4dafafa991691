"""`gpuav validate`: exit status, one line per diagnostic, JSON, device descriptions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest

from gpuav.cli import main
from gpuav.report.shader_info import ShaderInfo
from gpuav.validate.cli import render_line
from gpuav.validate.diagnostics import Diagnostic, Severity
from gpuav.validate.rules_capabilities import CAPABILITY_NOT_ENABLED_RULE, SPIRV_VERSION_RULE
from tests.shaders.glsl import TargetEnv, compile_glsl

DOUBLE_FRAGMENT = """#version 450
layout(location = 0) out vec4 color;
void main() {
    double d = double(gl_FragCoord.x);
    color = vec4(float(d));
}
"""
PLAIN_COMPUTE = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; };
void main() { values[gl_GlobalInvocationID.x] = 7u; }
"""


def _write(
    tmp_path: Path,
    words: list[int],
    name: str = "module.spv",
    order: Literal["little", "big"] = "little",
) -> Path:
    path = tmp_path / name
    path.write_bytes(b"".join(word.to_bytes(4, order) for word in words))
    return path


@pytest.fixture
def double_module(tmp_path: Path) -> Path:
    return _write(tmp_path, compile_glsl(DOUBLE_FRAGMENT, "frag", debug="g"))


def test_valid_module_exits_0_silently(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, compile_glsl(PLAIN_COMPUTE, "comp"))
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_broken_rule_exits_1_with_one_line_naming_rule_and_instruction(
    double_module: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(double_module)]) == 1
    (line,) = capsys.readouterr().out.splitlines()
    assert line == (
        f"{double_module}: error: {CAPABILITY_NOT_ENABLED_RULE}: capability Float64 needs "
        "feature shaderFloat64, which is not enabled (vulkan1.1) | "
        "instruction 1: OpCapability Float64"
    )


def test_features_and_extensions_options(double_module: Path) -> None:
    assert main(["validate", str(double_module), "--features", "shaderInt64, shaderFloat64"]) == 0
    assert main(["validate", str(double_module), "--extensions", "VK_KHR_8bit_storage"]) == 1


def test_json_output(double_module: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", str(double_module), "--json", "--target-env", "vulkan1.2"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] is False
    assert report["target_env"] == "vulkan1.2"
    (entry,) = report["diagnostics"]
    assert entry["rule"] == CAPABILITY_NOT_ENABLED_RULE
    assert entry["severity"] == "error"
    assert entry["instruction_index"] == 1
    assert entry["instruction"] == "OpCapability Float64"
    assert entry["source"] is None  # capabilities come before any OpLine


def test_device_json_gives_features_and_target_env(
    double_module: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    device = tmp_path / "device.json"
    device.write_text(
        json.dumps(
            {
                "VkPhysicalDeviceProperties": {"apiVersion": "1.3.0", "limits": {}},
                "VkPhysicalDeviceFeatures": {"shaderFloat64": True},
            }
        )
    )
    assert main(["validate", str(double_module), "--device-json", str(device), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["target_env"] == "vulkan1.3"
    # --target-env wins over the device's version.
    assert main(["validate", str(double_module), "--device-json", str(device), "--json",
                 "--target-env", "vulkan1.0"]) == 1  # fmt: skip
    assert json.loads(capsys.readouterr().out)["target_env"] == "vulkan1.0"


def test_big_endian_file_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    words = compile_glsl(DOUBLE_FRAGMENT, "frag")
    path = _write(tmp_path, words, order="big")
    assert main(["validate", str(path)]) == 1
    assert "OpCapability Float64" in capsys.readouterr().out


@pytest.mark.parametrize("content", [b"", b"\x03\x02\x23", b"not spir-v at all", b"\x00" * 40])
def test_unreadable_module_exits_2(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.spv"
    path.write_bytes(content)
    assert main(["validate", str(path)]) == 2
    assert "gpuav validate" in capsys.readouterr().err


def test_missing_file_and_bad_device_json_exit_2(tmp_path: Path, double_module: Path) -> None:
    assert main(["validate", str(tmp_path / "absent.spv")]) == 2
    device = tmp_path / "device.json"
    device.write_text("{not json")
    assert main(["validate", str(double_module), "--device-json", str(device)]) == 2


def test_line_names_the_source_line_with_debug_info() -> None:
    words = compile_glsl(DOUBLE_FRAGMENT, "frag", debug="g", source_name="double.frag")
    info = ShaderInfo(words)
    convert = next(
        index
        for index, instruction in enumerate(info.instructions)
        if "OpFConvert" in (info.instruction_text(index) or "")
    )
    diagnostic = Diagnostic("GPUAV-test", "a message", convert, Severity.WARNING)
    line = render_line("x.spv", diagnostic, info)
    assert line.startswith("x.spv: warning: GPUAV-test: a message | ")
    assert f"instruction {convert}: " in line and "OpFConvert" in line
    assert line.endswith("| double.frag:4: double d = double(gl_FragCoord.x);")


def test_command_line_entry_point(double_module: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gpuav.cli", "validate", str(double_module)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert CAPABILITY_NOT_ENABLED_RULE in result.stdout


@pytest.mark.parametrize(
    ("compiled_for", "chosen"),
    [("vulkan1.0", "vulkan1.1"), ("vulkan1.1", "vulkan1.1"), ("vulkan1.2", "vulkan1.2"),
     ("vulkan1.3", "vulkan1.3")],
)  # fmt: skip
def test_default_target_env_follows_the_spirv_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], compiled_for: TargetEnv, chosen: str
) -> None:
    path = _write(tmp_path, compile_glsl(PLAIN_COMPUTE, "comp", target_env=compiled_for))
    # glslang writes LocalSizeId for Vulkan 1.3, which needs maintenance4.
    assert main(["validate", str(path), "--json", "--features", "maintenance4"]) == 0
    assert json.loads(capsys.readouterr().out)["target_env"] == chosen
    # Asked for an environment too old for the module, the version rule is broken.
    if compiled_for != "vulkan1.0":
        assert main(["validate", str(path), "--target-env", "vulkan1.0"]) == 1
        assert SPIRV_VERSION_RULE in capsys.readouterr().out
