"""Static validation at vkCreateShaderModule, end to end through the loader.

The Python app enables shaderInt64 only (through pEnabledFeatures or, with --features2,
VkPhysicalDeviceFeatures2). A shader declaring Float64 breaks
VUID-VkShaderModuleCreateInfo-pCode-08740 and is reported through the app's messenger, yet it
is passed on and runs (lavapipe supports doubles), so the results match a run without gpuav.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuav.validate.rules_capabilities import CAPABILITY_NOT_ENABLED_RULE
from tests.layer.conftest import RunPython
from tests.shaders.glsl import compile_glsl

pytestmark = pytest.mark.vulkan

ERROR_SEVERITY = 0x1000

# region.comp's interface and results, with a 64-bit type that changes nothing.
REGION_WITH = """#version 450
#extension GL_ARB_gpu_shader_int64 : enable
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data {{ uint values[]; }} data;
layout(push_constant) uniform Push {{ uint base; uint bad_index; }} push;

void main() {{
    uint i = push.base + gl_GlobalInvocationID.x;
    {wide} zero = {wide}(push.base) - {wide}(push.base);
    data.values[i] = data.values[i] * 3u + i + uint(zero);
}}
"""


def _shader(tmp_path: Path, wide: str) -> Path:
    words = compile_glsl(REGION_WITH.format(wide=wide), "comp")
    path = tmp_path / f"region_{wide}.spv"
    path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
    return path


def _arguments(shader: Path, *extra: str) -> list[str]:
    return ["--shader", str(shader), "--messenger", *extra]


@pytest.mark.parametrize("features2", [False, True], ids=["pEnabledFeatures", "features2"])
def test_capability_without_its_feature_is_reported_and_the_shader_still_runs(
    run_python_app: RunPython, layer_folder: Path, tmp_path: Path, features2: bool
) -> None:
    shader = _shader(tmp_path, "double")
    extra = ["--features2"] if features2 else []
    run = run_python_app(_arguments(shader, *extra), layer_folder)
    (message,) = run.with_id(CAPABILITY_NOT_ENABLED_RULE)
    assert message["severity"] == ERROR_SEVERITY
    assert message["text"] == (
        "vkCreateShaderModule: a shader module (instruction 1): capability Float64 needs "
        "feature shaderFloat64, which is not enabled (vulkan1.3)"
    )
    without = run_python_app(_arguments(shader, *extra))
    assert run.result["data_sha256"] == without.result["data_sha256"]


@pytest.mark.parametrize("features2", [False, True], ids=["pEnabledFeatures", "features2"])
def test_capability_whose_feature_the_app_enabled_is_not_reported(
    run_python_app: RunPython, layer_folder: Path, tmp_path: Path, features2: bool
) -> None:
    shader = _shader(tmp_path, "int64_t")
    extra = ["--features2"] if features2 else []
    run = run_python_app(_arguments(shader, *extra), layer_folder)
    assert not [m for m in run.messages if m["id"].startswith("VUID-")], run.messages


def test_validation_can_be_turned_off(
    run_python_app: RunPython, layer_folder: Path, tmp_path: Path
) -> None:
    shader = _shader(tmp_path, "double")
    run = run_python_app(_arguments(shader), layer_folder, extra={"GPUAV_VALIDATE_SHADERS": "0"})
    assert run.with_id(CAPABILITY_NOT_ENABLED_RULE) == []
