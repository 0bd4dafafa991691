"""One push-constant block per entry point: 06674 (statically used) and 06673 (listed)."""

from __future__ import annotations

from gpuav.spirv import read, write
from gpuav.spirv.grammar import Capability
from gpuav.validate import rules_push_constants as rules
from tests.validate.asm import assemble, assert_verdicts, newer_spirv_val, validate_words
from tests.validate.asm import rules as rules_of

FAMILIES = [rules.check]

# Two push-constant blocks; %first reads one and %second the other, %main calls them.
MODULE = """OpCapability Shader
{capabilities}
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" {interface}
OpEntryPoint GLCompute %other "other" {other_interface}
OpExecutionMode %main LocalSize 1 1 1
OpExecutionMode %other LocalSize 1 1 1
OpDecorate %A Block
OpMemberDecorate %A 0 Offset 0
OpDecorate %B Block
OpMemberDecorate %B 0 Offset 0
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%uint_0 = OpConstant %uint 0
%A = OpTypeStruct %uint
%B = OpTypeStruct %uint
%pA = OpTypePointer PushConstant %A
%pB = OpTypePointer PushConstant %B
%pu = OpTypePointer PushConstant %uint
%a = OpVariable %pA PushConstant
%b = OpVariable %pB PushConstant
%first = OpFunction %void None %fn
%l1 = OpLabel
%ca = OpAccessChain %pu %a %uint_0
%va = OpLoad %uint %ca
OpReturn
OpFunctionEnd
%second = OpFunction %void None %fn
%l2 = OpLabel
%cb = OpAccessChain %pu %b %uint_0
%vb = OpLoad %uint %cb
OpReturn
OpFunctionEnd
%main = OpFunction %void None %fn
%l3 = OpLabel
%r1 = OpFunctionCall %void %first
{main_calls}
OpReturn
OpFunctionEnd
%other = OpFunction %void None %fn
%l4 = OpLabel
%r3 = OpFunctionCall %void %second
OpReturn
OpFunctionEnd
"""


def _module(main_calls: str, interface: str = "", other: str = "", capabilities: str = "") -> str:
    return MODULE.format(
        main_calls=main_calls,
        interface=interface,
        other_interface=other,
        capabilities=capabilities,
    )


def test_one_block_per_entry_point_is_valid() -> None:
    assert_verdicts(_module(""), FAMILIES, "vulkan1.1", None, spirv_val_accepts=True)


def test_two_blocks_used_through_calls_break_06674() -> None:
    text = _module("%r2 = OpFunctionCall %void %second")
    assert_verdicts(text, FAMILIES, "vulkan1.1", rules.USED_TWICE, spirv_val_accepts=False)


def test_push_constant_banks_allow_two_blocks() -> None:
    """spirv-as 2023.1 does not know the capability: a placeholder's word is replaced."""
    words = assemble(
        _module("%r2 = OpFunctionCall %void %second", capabilities="OpCapability Int8")
    )
    module = read(words)
    (declared,) = [i for i in module.capabilities if i.operands == [Capability.Int8]]
    declared.operands[0] = rules.PUSH_CONSTANT_BANKS_NV
    assert validate_words(write(module), families=FAMILIES) == []
    declared.operands[0] = Capability.Int8
    assert rules_of(validate_words(write(module), families=FAMILIES)) == {rules.USED_TWICE}


def test_two_blocks_used_through_calls_are_what_spirv_val_2025_reports() -> None:
    words = assemble(_module("%r2 = OpFunctionCall %void %second"))
    accepted, message = newer_spirv_val(words)
    assert not accepted and rules.USED_TWICE in message, message


def test_two_blocks_listed_in_a_spirv_1_4_interface_break_06673() -> None:
    """spirv-val 2023.1 does not check 06673; 2025.1 does."""
    text = _module("", interface="%a %b", other="%b")
    assert_verdicts(text, FAMILIES, "vulkan1.2", rules.LISTED_TWICE, spirv_val_accepts=True)
    accepted, message = newer_spirv_val(assemble(text, "vulkan1.2"), "vulkan1.2")
    assert not accepted and rules.LISTED_TWICE in message, message
