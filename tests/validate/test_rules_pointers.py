"""OpPtrAccessChain bases and physical storage buffer pointers: one passing and one failing
module per rule, compared with spirv-val (SPIRV-Tools 2023.1) where it checks the same rule."""

from __future__ import annotations

import pytest

from gpuav.spirv import read
from gpuav.spirv.grammar import AddressingModel
from gpuav.validate import rules_pointers as rules
from tests.shaders.glsl import compile_glsl
from tests.validate.asm import assert_verdicts, spirv_val, validate_words

FAMILY = [rules.check]
ENV = "vulkan1.2"

BUFFER_REFERENCE_GLSL = """
#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
layout(local_size_x = 1) in;
layout(buffer_reference) buffer Node;
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Node {
    vec4 value;
    Node next;
};
layout(push_constant) uniform Push { Node head; uint64_t raw; } push;
void main() {
    Node node = push.head;
    node.next.value = node.value * 2.0;
    Node other = Node(push.raw);
    other.value = vec4(uint64_t(node));
}
"""


def test_glslang_buffer_reference_shader_is_clean() -> None:
    words = compile_glsl(BUFFER_REFERENCE_GLSL, "comp", target_env="vulkan1.2")
    (memory_model,) = read(words).memory_model
    assert memory_model.operands[0] == AddressingModel.PhysicalStorageBuffer64
    assert validate_words(words, families=FAMILY, target_env=ENV) == []


# glslang loads a reference member with the alignment of the block it references (4 here),
# not 8: a pointer is no scalar, so VUID-StandaloneSpirv-PhysicalStorageBuffer64-06314 does
# not ask for more (spirv-val agrees).
REFERENCE_MEMBER_GLSL = """
#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 1) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Words { uint words[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Table { Words first; };
layout(push_constant) uniform Push { Table table; } push;
void main() { push.table.first.words[0] = 1u; }
"""


def test_reference_member_loaded_with_its_block_alignment_is_clean() -> None:
    words = compile_glsl(REFERENCE_MEMBER_GLSL, "comp", target_env="vulkan1.2")
    assert spirv_val(words, ENV)[0]
    assert validate_words(words, families=FAMILY, target_env=ENV) == []


PHYSICAL = """
OpCapability Shader
OpCapability Int64
OpCapability PhysicalStorageBufferAddresses
OpExtension "SPV_KHR_physical_storage_buffer"
OpMemoryModel PhysicalStorageBuffer64 GLSL450
OpEntryPoint GLCompute %main "main" %push
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %block Block
OpMemberDecorate %block 0 Offset 0
OpDecorate %data Block
OpMemberDecorate %data 0 Offset 0
OpDecorate %ptr_uint ArrayStride 4
{decorations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%ulong = OpTypeInt 64 0
%int_0 = OpConstant %uint 0
%int_1 = OpConstant %uint 1
%uint_7 = OpConstant %uint 7
%ulong_0 = OpConstant %ulong 0
%v2uint = OpTypeVector %uint 2
%data = OpTypeStruct %v2uint
%ptr_data = OpTypePointer PhysicalStorageBuffer %data
%ptr_uint = OpTypePointer PhysicalStorageBuffer %uint
%block = OpTypeStruct %ulong
%ptr_block = OpTypePointer PushConstant %block
%push = OpVariable %ptr_block PushConstant
%ptr_push_ulong = OpTypePointer PushConstant %ulong
%ptr_fn_data = OpTypePointer Function %ptr_data
%main = OpFunction %void None %fn
%entry = OpLabel
%local = OpVariable %ptr_fn_data Function
%address_ptr = OpAccessChain %ptr_push_ulong %push %int_0
%address = OpLoad %ulong %address_ptr
%node = OpConvertUToPtr %ptr_data %address
OpStore %local %node
%first = OpAccessChain %ptr_uint %node %int_0 %int_0
{body}
OpReturn
OpFunctionEnd
"""

ALIASED = "OpDecorate %local AliasedPointer"

CASES = [
    # (id, decorations, body, rule or None, spirv-val accepts)
    ("aligned-store", ALIASED, "OpStore %first %uint_7 Aligned 4", None, True),
    ("store-without-aligned", ALIASED, "OpStore %first %uint_7", rules.PHYSICAL_ALIGNED, False),
    (
        "load-under-aligned",
        ALIASED,
        "%x = OpLoad %uint %first Aligned 2",
        rules.PHYSICAL_ALIGNMENT_SIZE,
        True,  # VUID 06314 is newer than spirv-val 2023.1
    ),
    (
        "convert-to-32-bit",
        ALIASED,
        "%narrow = OpConvertPtrToU %uint %node",
        rules.PHYSICAL_CONVERT_WIDTH,
        False,
    ),
    (
        "copy-with-one-aligned-for-both",
        ALIASED,
        "%second = OpPtrAccessChain %ptr_uint %first %int_1\nOpCopyMemory %second %first Aligned 4",
        None,
        True,
    ),
    (
        "copy-without-aligned",
        ALIASED,
        "%second = OpPtrAccessChain %ptr_uint %first %int_1\nOpCopyMemory %second %first",
        rules.PHYSICAL_ALIGNED,
        True,  # 04708 covers every instruction with memory operands; spirv-val only loads/stores
    ),
    ("no-aliasing-decoration", "", "", rules.ALIASED_OR_RESTRICT, False),
    (
        "both-aliasing-decorations",
        ALIASED + "\nOpDecorate %local RestrictPointer",
        "",
        rules.ALIASED_OR_RESTRICT,
        False,
    ),
]


@pytest.mark.parametrize(
    ("decorations", "body", "rule", "val"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_physical_rule(decorations: str, body: str, rule: str | None, val: bool) -> None:
    assert_verdicts(PHYSICAL.format(decorations=decorations, body=body), FAMILY, ENV, rule, val)


PTR_CHAIN = """
OpCapability Shader
{capabilities}
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %var
OpExecutionMode %main LocalSize 1 1 1
{decorations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%int_0 = OpConstant %uint 0
%int_1 = OpConstant %uint 1
%array = OpTypeRuntimeArray %uint
%block = OpTypeStruct %array
%ptr_block = OpTypePointer {storage} %block
%ptr_array = OpTypePointer {storage} %array
%ptr_uint = OpTypePointer {storage} %uint
%var = OpVariable %ptr_block {storage}
%main = OpFunction %void None %fn
%entry = OpLabel
%base = OpAccessChain %ptr_uint %var %int_0 %int_0
%next = OpPtrAccessChain %ptr_uint %base %int_1
OpReturn
OpFunctionEnd
"""
BUFFER_DECORATIONS = (
    "OpDecorate %block Block\nOpMemberDecorate %block 0 Offset 0\nOpDecorate %array ArrayStride 4\n"
    "OpDecorate %var DescriptorSet 0\nOpDecorate %var Binding 0\nOpDecorate %ptr_uint ArrayStride 4"
)


@pytest.mark.parametrize(
    ("capabilities", "storage", "rule", "val"),
    [
        ("OpCapability VariablePointersStorageBuffer", "StorageBuffer", None, True),
        ("", "StorageBuffer", rules.PTR_ACCESS_CHAIN_STORAGE_BUFFER, False),
        ("OpCapability VariablePointers", "Private", rules.PTR_ACCESS_CHAIN_CLASS, False),
    ],
    ids=["storage-buffer", "storage-buffer-without-capability", "private"],
)
def test_ptr_access_chain_base(
    capabilities: str, storage: str, rule: str | None, val: bool
) -> None:
    decorations = BUFFER_DECORATIONS if storage == "StorageBuffer" else ""
    if storage == "Private":
        text = PTR_CHAIN.replace(
            "%array = OpTypeRuntimeArray %uint",
            "%uint_4 = OpConstant %uint 4\n%array = OpTypeArray %uint %uint_4",
        )
    else:
        text = PTR_CHAIN
    text = text.format(capabilities=capabilities, decorations=decorations, storage=storage)
    assert_verdicts(text, FAMILY, ENV, rule, val)


ACCESS_CHAIN = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%uint = OpTypeInt 32 0
%uint_0 = OpConstant %uint 0
%v4float = OpTypeVector %float 4
%ptr_fn_v4float = OpTypePointer Function %v4float
%ptr_fn_float = OpTypePointer Function %float
%ptr_private_float = OpTypePointer Private %float
%fn_float = OpTypeFunction %uint %float
%main = OpFunction %void None %fn
%entry = OpLabel
%texel = OpVariable %ptr_fn_v4float Function
%x = {chain} {result_type} %texel %uint_0
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize(
    ("chain", "result_type", "rule"),
    [
        ("OpAccessChain", "%ptr_fn_float", None),
        ("OpInBoundsAccessChain", "%ptr_fn_float", None),
        # Fuzz mutant 4453 of run 1 (tests/layer/fuzz_mutants/access_chain_function_type.*):
        # OpTypePointer turned OpTypeFunction; lavapipe crashed on the instrumented module.
        ("OpAccessChain", "%fn_float", rules.ACCESS_CHAIN_RESULT),
        ("OpInBoundsAccessChain", "%float", rules.ACCESS_CHAIN_RESULT),
        ("OpAccessChain", "%ptr_private_float", rules.ACCESS_CHAIN_RESULT),
    ],
    ids=["pointer", "in-bounds-pointer", "function-type", "float", "other-storage-class"],
)
def test_access_chain_result_type(chain: str, result_type: str, rule: str | None) -> None:
    text = ACCESS_CHAIN.format(chain=chain, result_type=result_type)
    assert_verdicts(text, FAMILY, ENV, rule, rule is None)
