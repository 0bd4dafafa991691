"""Atomics: storage classes, value types and the 64-bit / float atomic features, on glslang
shaders and assembly, compared with spirv-val (SPIRV-Tools 2023.1) where it checks the rule."""

from __future__ import annotations

import pytest

from gpuav.validate import rules_atomics as rules
from tests.shaders.glsl import compile_glsl
from tests.validate.asm import assemble, assert_verdicts, spirv_val, validate_words
from tests.validate.asm import rules as broken

FAMILY = [rules.check]
ENV = "vulkan1.2"

INT64_GLSL = """
#version 450
#extension GL_EXT_shader_atomic_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer Data { uint64_t total; uint count; } data;
shared uint64_t partial;
void main() {
    atomicAdd(partial, uint64_t(gl_LocalInvocationIndex));
    atomicAdd(data.total, uint64_t(1));
    atomicAdd(data.count, 1u);
}
"""

FLOAT_GLSL = """
#version 450
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer Data { float sum; } data;
shared float partial;
void main() {
    atomicAdd(partial, 1.0);
    atomicExchange(data.sum, 2.0);
}
"""


@pytest.mark.parametrize(
    ("source", "needed"),
    [
        (
            INT64_GLSL,
            {
                rules.SHARED_INT64: "shaderSharedInt64Atomics",
                rules.BUFFER_INT64: "shaderBufferInt64Atomics",
            },
        ),
        (
            FLOAT_GLSL,
            {
                rules.SHARED_FLOAT: "shaderSharedFloat32AtomicAdd",
                rules.BUFFER_FLOAT: "shaderBufferFloat32Atomics",
            },
        ),
    ],
    ids=["int64", "float"],
)
def test_atomic_features(source: str, needed: dict[str, str]) -> None:
    """Each storage class names its own feature; with all of them the shader is clean, and
    with all but one exactly that one is reported."""
    words = compile_glsl(source, "comp", target_env="vulkan1.2")
    assert broken(validate_words(words, families=FAMILY, target_env=ENV)) == set(needed)
    features = set(needed.values())
    assert validate_words(words, families=FAMILY, target_env=ENV, features=features) == []
    for rule, feature in needed.items():
        found = validate_words(
            words, families=FAMILY, target_env=ENV, features=features - {feature}
        )
        assert broken(found) == {rule}
        assert feature in found[0].message


MODULE = """
OpCapability Shader
{capabilities}
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %var
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%device = OpConstant %uint 1
%relaxed = OpConstant %uint 0
{types}
%ptr = OpTypePointer {storage} %value
%var = OpVariable %ptr {storage}
%main = OpFunction %void None %fn
%entry = OpLabel
%r = OpAtomicIAdd %value %var %device %relaxed %one
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize(
    ("capabilities", "types", "storage", "rule", "val"),
    [
        ("", "%value = OpTypeInt 32 1\n%one = OpConstant %value 1", "Workgroup", None, True),
        (
            "",
            "%value = OpTypeInt 32 1\n%one = OpConstant %value 1",
            "Private",
            rules.STORAGE_CLASS,
            False,
        ),
        (
            "OpCapability Int16",
            "%value = OpTypeInt 16 0\n%one = OpConstant %value 1",
            "Workgroup",
            rules.VALUE_TYPE,
            True,  # spirv-val 2023.1 accepts 16-bit atomics; seed 004 allows 32/64-bit only
        ),
        (
            "OpCapability Int64",
            "%value = OpTypeInt 64 0\n%one = OpConstant %value 1",
            "Workgroup",
            rules.VALUE_TYPE,
            False,
        ),
    ],
    ids=["workgroup", "private", "int16", "int64-without-Int64Atomics"],
)
def test_atomic_storage_and_type(
    capabilities: str, types: str, storage: str, rule: str | None, val: bool
) -> None:
    text = MODULE.format(capabilities=capabilities, types=types, storage=storage)
    assert_verdicts(text, FAMILY, ENV, rule, val)


IMAGE = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %image
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %image DescriptorSet 0
OpDecorate %image Binding 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%int = OpTypeInt 32 1
%v2int = OpTypeVector %int 2
%zero = OpConstant %int 0
%coord = OpConstantComposite %v2int %zero %zero
%device = OpConstant %uint 1
%relaxed = OpConstant %uint 0
%one = OpConstant %uint 1
%image_type = OpTypeImage %uint 2D 0 0 0 2 {format}
%image_ptr = OpTypePointer UniformConstant %image_type
%image = OpVariable %image_ptr UniformConstant
%texel_ptr = OpTypePointer Image %uint
%main = OpFunction %void None %fn
%entry = OpLabel
%texel = OpImageTexelPointer %texel_ptr %image %coord %relaxed
%r = OpAtomicIAdd %uint %texel %device %relaxed %one
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize(
    ("format_", "rule"), [("R32ui", None), ("Rgba8ui", rules.TEXEL_POINTER_FORMAT)]
)
def test_image_texel_pointer_format(format_: str, rule: str | None) -> None:
    words = assemble(IMAGE.format(format=format_), ENV)
    found = broken(validate_words(words, families=FAMILY, target_env=ENV))
    assert found == ({rule} if rule else set())
    # spirv-val 2023.1 checks the format of texel pointers used by atomics too.
    assert spirv_val(words, ENV)[0] == (rule is None)
