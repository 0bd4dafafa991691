"""Static validation at vkCreateShaderModule, end to end through the loader.

The Python app enables shaderInt64 only (through pEnabledFeatures or, with --features2,
VkPhysicalDeviceFeatures2). A shader declaring Float64 breaks
VUID-VkShaderModuleCreateInfo-pCode-08740 and is reported through the app's messenger, yet it
is passed on and runs (lavapipe supports doubles), so the results match a run without gpuav.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gpuav.layer import shader_validation
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


# -- the engine part, without a device ------------------------------------------------------


class _Collect:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    def emit(self, message: Any, objects: object = ()) -> None:
        self.messages.append(message)


def _environment(*features: str) -> shader_validation.ShaderEnvironment:
    return shader_validation.ShaderEnvironment("vulkan1.1", frozenset(features), frozenset())


def test_engine_reports_each_creation_and_validates_each_module_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    words = compile_glsl(REGION_WITH.format(wide="double"), "comp")
    device = 0x5EED
    shader_validation.post_call_record_create_device(device, _environment("shaderInt64"))
    calls: list[bytes] = []
    original = shader_validation._validate

    def counting(data: bytes, environment: shader_validation.ShaderEnvironment) -> Any:
        calls.append(data)
        return original(data, environment)

    monkeypatch.setattr(shader_validation, "_validate", counting)
    reporter = _Collect()
    for _ in range(3):
        found = shader_validation.pre_call_validate_create_shader_module(
            device,
            words,
            reporter,  # type: ignore[arg-type]
        )
        assert [d.rule for d in found] == [CAPABILITY_NOT_ENABLED_RULE]
    assert len(reporter.messages) == 3 and len(calls) == 1
    # Another device with the feature enabled: a different environment, validated afresh.
    shader_validation.post_call_record_create_device(device + 1, _environment("shaderFloat64"))
    assert not shader_validation.pre_call_validate_create_shader_module(
        device + 1,
        words,
        reporter,  # type: ignore[arg-type]
    )
    assert len(calls) == 2
    for handle in (device, device + 1):
        shader_validation.pre_call_record_destroy_device(handle)
    assert not shader_validation.has_environment(device)


def test_engine_reports_words_that_are_not_spirv_and_never_raises() -> None:
    device = 0xBAD
    shader_validation.post_call_record_create_device(device, _environment())
    reporter = _Collect()
    found = shader_validation.pre_call_validate_create_shader_module(
        device,
        [1, 2, 3, 4, 5, 6],
        reporter,  # type: ignore[arg-type]
    )
    assert [d.rule for d in found] == [shader_validation.INVALID_SPIRV_RULE]
    # A word that does not fit 32 bits makes the conversion itself fail: an internal error.
    found = shader_validation.pre_call_validate_create_shader_module(
        device,
        [1 << 40],
        reporter,  # type: ignore[arg-type]
    )
    assert found == []
    assert reporter.messages[-1].message_id == "GPUAV-internal-error"
    shader_validation.pre_call_record_destroy_device(device)


def test_setting_off_records_no_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(shader_validation.SETTING, "0")
    shader_validation.post_call_record_create_device(0xF00, _environment())
    assert not shader_validation.has_environment(0xF00)
    assert shader_validation.target_env_for((1 << 22) | (3 << 12)) == "vulkan1.3"
    assert shader_validation.target_env_for((1 << 22) | (9 << 12)) == "vulkan1.4"


def test_inline_stage_code_is_validated_at_pipeline_creation(
    run_python_app: RunPython, layer_folder: Path, tmp_path: Path
) -> None:
    # VK_KHR_maintenance5: no module, the code rides in the stage's pNext chain.
    shader = _shader(tmp_path, "double")
    run = run_python_app(_arguments(shader, "--inline-module"), layer_folder)
    (message,) = run.with_id(CAPABILITY_NOT_ENABLED_RULE)
    assert message["text"] == (
        "vkCreateComputePipelines: inline code of stage 0x20 of create info 0 (instruction 1): "
        "capability Float64 needs feature shaderFloat64, which is not enabled (vulkan1.3)"
    )
