"""Storage classes, initializers and 8/16-bit storage: one passing and one failing module per
rule, compared with spirv-val (SPIRV-Tools 2023.1) where it checks the same rule."""

from __future__ import annotations

import pytest

from gpuav.validate import rules_storage as rules
from tests.shaders.glsl import compile_glsl
from tests.validate.asm import assemble, assert_verdicts, spirv_val, validate_words
from tests.validate.asm import rules as broken

FAMILY = [rules.check]
ENV = "vulkan1.2"

MODULE = """
OpCapability Shader
{capabilities}
OpMemoryModel Logical GLSL450
OpEntryPoint {model} %main "main" %var
{modes}
{annotations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%uint_0 = OpConstant %uint 0
%uint_7 = OpConstant %uint 7
%null = OpConstantNull %uint
{types}
%main = OpFunction %void None %fn
%entry = OpLabel
{body}
OpReturn
OpFunctionEnd
"""

MODES = {
    "GLCompute": "OpExecutionMode %main LocalSize 1 1 1",
    "Fragment": "OpExecutionMode %main OriginUpperLeft",
}


def module(
    types: str,
    body: str = "",
    model: str = "GLCompute",
    capabilities: str = "",
    annotations: str = "",
) -> str:
    return MODULE.format(
        capabilities=capabilities,
        model=model,
        modes=MODES.get(model, ""),
        annotations=annotations,
        types=types,
        body=body,
    )


def variable(storage: str, initializer: str = "") -> str:
    return f"%ptr = OpTypePointer {storage} %uint\n%var = OpVariable %ptr {storage} {initializer}"


CASES = [
    # (id, module, features, rule or None, spirv-val accepts)
    ("private", module(variable("Private")), (), None, True),
    (
        "cross-workgroup",
        module(variable("CrossWorkgroup")),
        (),
        rules.STORAGE_CLASS,
        False,
    ),
    (
        "output-in-compute",
        module(variable("Output"), "OpStore %var %uint_7"),
        (),
        rules.OUTPUT_STAGE,
        False,
    ),
    (
        "workgroup-in-fragment",
        module(variable("Workgroup"), "OpStore %var %uint_7", model="Fragment"),
        (),
        rules.WORKGROUP_STAGE,
        False,
    ),
    ("private-initializer", module(variable("Private", "%uint_7")), (), None, True),
    (
        "input-initializer",
        module(variable("Input", "%uint_7"), model="Fragment"),
        (),
        rules.INITIALIZER_CLASS,
        False,
    ),
    (
        "workgroup-initializer-not-null",
        module(variable("Workgroup", "%uint_7")),
        ("shaderZeroInitializeWorkgroupMemory",),
        rules.WORKGROUP_INITIALIZER_NULL,
        False,
    ),
    (
        "workgroup-null-without-feature",
        module(variable("Workgroup", "%null")),
        (),
        rules.WORKGROUP_INITIALIZER_FEATURE,
        True,  # a feature rule: spirv-val does not know the device
    ),
    (
        "workgroup-null-with-feature",
        module(variable("Workgroup", "%null")),
        ("shaderZeroInitializeWorkgroupMemory",),
        None,
        True,
    ),
]


@pytest.mark.parametrize(
    ("text", "features", "rule", "val"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_rule(text: str, features: tuple[str, ...], rule: str | None, val: bool) -> None:
    assert_verdicts(text, FAMILY, ENV, rule, val, features)


PUSH_CONSTANT_8BIT = module(
    """
%uchar = OpTypeInt 8 0
%block = OpTypeStruct %uchar
%ptr = OpTypePointer PushConstant %block
%var = OpVariable %ptr PushConstant
""",
    capabilities='OpCapability StoragePushConstant8\nOpExtension "SPV_KHR_8bit_storage"',
    annotations="OpDecorate %block Block\nOpMemberDecorate %block 0 Offset 0",
)


def test_push_constant_8bit_needs_its_feature() -> None:
    words = assemble(PUSH_CONSTANT_8BIT, ENV)
    assert broken(validate_words(words, families=FAMILY, target_env=ENV)) == {
        rules.PUSH_CONSTANT_8BIT
    }
    clean = validate_words(
        words, families=FAMILY, target_env=ENV, features=["storagePushConstant8"]
    )
    assert clean == []
    assert spirv_val(words, ENV)[0]


HALF_ADD = module(
    """
%half = OpTypeFloat 16
%block = OpTypeStruct %half
%ptr = OpTypePointer StorageBuffer %block
%var = OpVariable %ptr StorageBuffer
%ptr_half = OpTypePointer StorageBuffer %half
""",
    body="""
%p = OpAccessChain %ptr_half %var %uint_0
%x = OpLoad %half %p
%y = OpFAdd %half %x %x
OpStore %p %y
""",
    capabilities="OpCapability StorageBuffer16BitAccess\n{float16}\n"
    'OpExtension "SPV_KHR_16bit_storage"',
    annotations="OpDecorate %block Block\nOpMemberDecorate %block 0 Offset 0\n"
    "OpDecorate %var DescriptorSet 0\nOpDecorate %var Binding 0",
)


@pytest.mark.parametrize("float16", [False, True])
def test_arithmetic_on_16bit_floats_needs_float16(float16: bool) -> None:
    text = HALF_ADD.replace("{float16}", "OpCapability Float16" if float16 else "")
    words = assemble(text, ENV)
    features = ["storageBuffer16BitAccess"]
    found = broken(validate_words(words, families=FAMILY, target_env=ENV, features=features))
    assert found == (set() if float16 else {rules.SMALL_TYPE_ARITHMETIC})
    assert spirv_val(words, ENV)[0] == float16


SMALL_TYPES_GLSL = """
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Data { int8_t bytes[4]; float16_t halves[4]; } data;
layout(std140, binding = 1) uniform Params { float16_t scale; } params;
layout(push_constant) uniform Push { uint8_t offset; } push;
void main() {
    data.halves[1] = data.halves[0] * params.scale;
    data.bytes[1] = data.bytes[0] + int8_t(push.offset);
}
"""


def test_glsl_small_types_need_each_storage_feature() -> None:
    words = compile_glsl(SMALL_TYPES_GLSL, "comp", target_env="vulkan1.2")
    found = broken(validate_words(words, families=FAMILY, target_env=ENV))
    assert found == {
        rules.STORAGE_BUFFER_8BIT,
        rules.STORAGE_BUFFER_16BIT,
        rules.UNIFORM_16BIT,
        rules.PUSH_CONSTANT_8BIT,
    }
    features = [
        "storageBuffer8BitAccess",
        "storageBuffer16BitAccess",
        "uniformAndStorageBuffer16BitAccess",
        "storagePushConstant8",
    ]
    assert validate_words(words, families=FAMILY, target_env=ENV, features=features) == []


def test_function_variable_initialized_from_a_computed_value() -> None:
    text = module(
        "%ptr = OpTypePointer Function %uint\n%var = OpUndef %uint",
        body="%sum = OpIAdd %uint %uint_7 %uint_7",
    ).replace(
        "%entry = OpLabel\n",
        "%entry = OpLabel\n%local = OpVariable %ptr Function %sum\n",
    )
    # OpEntryPoint lists %var, an OpUndef here: keep the interface empty instead.
    text = text.replace('"main" %var', '"main"')
    words = assemble(text, ENV)
    assert broken(validate_words(words, families=FAMILY, target_env=ENV)) == {
        rules.INITIALIZER_CONSTANT
    }
    assert not spirv_val(words, ENV)[0]


def test_comparing_16bit_integers_needs_int16() -> None:
    text = module(
        """
%ushort = OpTypeInt 16 0
%bool = OpTypeBool
%block = OpTypeStruct %ushort
%ptr = OpTypePointer StorageBuffer %block
%var = OpVariable %ptr StorageBuffer
%ptr_ushort = OpTypePointer StorageBuffer %ushort
""",
        body="""
%p = OpAccessChain %ptr_ushort %var %uint_0
%x = OpLoad %ushort %p
%same = OpIEqual %bool %x %x
""",
        capabilities='OpCapability StorageBuffer16BitAccess\nOpExtension "SPV_KHR_16bit_storage"',
        annotations="OpDecorate %block Block\nOpMemberDecorate %block 0 Offset 0\n"
        "OpDecorate %var DescriptorSet 0\nOpDecorate %var Binding 0",
    )
    words = assemble(text, ENV)
    features = ["storageBuffer16BitAccess"]
    found = broken(validate_words(words, families=FAMILY, target_env=ENV, features=features))
    assert found == {rules.SMALL_TYPE_ARITHMETIC}
    assert not spirv_val(words, ENV)[0]
