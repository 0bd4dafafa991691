"""Float-controls execution modes against the device's per-width support and independence.

These are device rules: spirv-val, which does not know the device, accepts every module here
(the tests check that, so each module is valid SPIR-V and only the device decides)."""

from __future__ import annotations

import pytest

from gpuav.spirv.grammar import ExecutionMode
from gpuav.validate import rules_float_controls as rules
from tests.shaders.glsl import compile_glsl
from tests.validate.asm import assemble, spirv_val, validate_words
from tests.validate.asm import rules as broken

FAMILY = [rules.check]
ENV = "vulkan1.2"

GLSL = """
#version 450
#extension GL_EXT_spirv_intrinsics : require
spirv_execution_mode(extensions = ["SPV_KHR_float_controls"], capabilities = [4464], 4459, 32);
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Data { float x; } data;
void main() { data.x = data.x * 0.5; }
"""


def test_glsl_denorm_preserve_needs_its_property() -> None:
    words = compile_glsl(GLSL, "comp", target_env="vulkan1.2")
    # Support unknown (no float-controls property given): not judged.
    assert validate_words(words, families=FAMILY, target_env=ENV) == []
    # Known and unsupported: a device that only flushes.
    unsupported = ["shaderDenormFlushToZeroFloat32"]
    (diagnostic,) = validate_words(words, families=FAMILY, target_env=ENV, features=unsupported)
    assert diagnostic.rule == "VUID-RuntimeSpirv-shaderDenormPreserveFloat32-06297"
    assert "shaderDenormPreserveFloat32" in diagnostic.message
    on = ["shaderDenormPreserveFloat32"]
    assert validate_words(words, families=FAMILY, target_env=ENV, features=on) == []
    # A property read from the device lands in limits; nonzero means supported.
    limits = {"shaderDenormPreserveFloat32": 1}
    assert validate_words(words, families=FAMILY, target_env=ENV, limits=limits) == []


MODULE = """
OpCapability Shader
OpCapability Float16
OpCapability Float64
{capabilities}
OpExtension "SPV_KHR_float_controls"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
{modes}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""

MODES = [
    ExecutionMode.SignedZeroInfNanPreserve,
    ExecutionMode.DenormPreserve,
    ExecutionMode.DenormFlushToZero,
    ExecutionMode.RoundingModeRTE,
    ExecutionMode.RoundingModeRTZ,
]
NAMES = {mode: rules.MODE_NAMES[mode] for mode in MODES}


def module(modes: list[tuple[int, int]]) -> list[int]:
    names = sorted({NAMES[mode] for mode, _ in modes})
    text = MODULE.format(
        capabilities="\n".join(f"OpCapability {name}" for name in names),
        modes="\n".join(f"OpExecutionMode %main {NAMES[mode]} {width}" for mode, width in modes),
    )
    words = assemble(text, ENV)
    accepted, message = spirv_val(words, ENV)
    assert accepted, message
    return words


@pytest.mark.parametrize("width", [16, 32, 64])
@pytest.mark.parametrize("mode", MODES, ids=[NAMES[mode] for mode in MODES])
def test_each_mode_and_width_needs_its_property(mode: int, width: int) -> None:
    words = module([(mode, width)])
    feature = rules.feature_name(mode, width)
    found = validate_words(words, families=FAMILY, target_env=ENV, limits={feature: 0})
    assert broken(found) == {rules.rule_for(mode, width)}
    assert feature.endswith(str(width)) and feature in found[0].message
    assert validate_words(words, families=FAMILY, target_env=ENV, features=[feature]) == []


ALL_PROPERTIES = [rules.feature_name(mode, width) for mode in MODES for width in (16, 32, 64)]


@pytest.mark.parametrize(
    ("modes", "independence", "rule"),
    [
        # 32_BIT_ONLY: 16 and 64 must match, 32 is free.
        (
            [(ExecutionMode.DenormPreserve, 16), (ExecutionMode.DenormPreserve, 64)],
            rules.INDEPENDENCE_32_BIT_ONLY,
            None,
        ),
        (
            [(ExecutionMode.DenormPreserve, 16), (ExecutionMode.DenormFlushToZero, 64)],
            rules.INDEPENDENCE_32_BIT_ONLY,
            rules.DENORM_16_64,
        ),
        (
            [
                (ExecutionMode.DenormFlushToZero, 32),
                (ExecutionMode.DenormPreserve, 16),
                (ExecutionMode.DenormPreserve, 64),
            ],
            rules.INDEPENDENCE_32_BIT_ONLY,
            None,
        ),
        # NONE: every width the same.
        (
            [
                (ExecutionMode.RoundingModeRTE, 16),
                (ExecutionMode.RoundingModeRTE, 32),
                (ExecutionMode.RoundingModeRTZ, 64),
            ],
            rules.INDEPENDENCE_NONE,
            rules.ROUNDING_ALL,
        ),
        (
            [(ExecutionMode.RoundingModeRTZ, 16), (ExecutionMode.RoundingModeRTZ, 64)],
            rules.INDEPENDENCE_32_BIT_ONLY,
            None,
        ),
        (
            [(ExecutionMode.RoundingModeRTZ, 16)],
            rules.INDEPENDENCE_32_BIT_ONLY,
            rules.ROUNDING_16_64,
        ),
        # ALL: anything goes.
        (
            [(ExecutionMode.DenormPreserve, 16), (ExecutionMode.DenormFlushToZero, 64)],
            rules.INDEPENDENCE_ALL,
            None,
        ),
    ],
)
def test_independence(modes: list[tuple[int, int]], independence: int, rule: str | None) -> None:
    words = module(modes)
    limits = {"denormBehaviorIndependence": independence, "roundingModeIndependence": independence}
    found = broken(
        validate_words(
            words, families=FAMILY, target_env=ENV, features=ALL_PROPERTIES, limits=limits
        )
    )
    assert found == ({rule} if rule else set())
    # Without the independence limits the combination is not judged.
    assert validate_words(words, families=FAMILY, target_env=ENV, features=ALL_PROPERTIES) == []
