"""VUID-StandaloneSpirv-Offset-04716 concerns variables and *block* members decorated with
Offset: Slang keeps Offset on the members of a plain (non-Block) output struct in modules
without transform feedback, and nothing of it is captured."""

from __future__ import annotations

from gpuav.validate import rules_interface
from tests.validate.asm import assert_verdicts

RULE = "VUID-StandaloneSpirv-Offset-04716"

# Slang's shape: the vertex output struct carries its members' Offsets, no Block, no Xfb.
VERTEX = """OpCapability Shader
{capability}
OpMemoryModel Logical GLSL450
OpEntryPoint Vertex %main "main" %out %position
{mode}
{block}
OpMemberDecorate %VertexOutput 0 Offset 0
OpMemberDecorate %VertexOutput 1 Offset 16
OpDecorate %out Location 0
OpDecorate %position BuiltIn Position
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%v4 = OpTypeVector %float 4
%v2 = OpTypeVector %float 2
%VertexOutput = OpTypeStruct %v4 %v2
%ptr_out = OpTypePointer Output %VertexOutput
%ptr_v4 = OpTypePointer Output %v4
%out = OpVariable %ptr_out Output
%position = OpVariable %ptr_v4 Output
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""


def test_plain_output_struct_with_member_offsets_is_not_a_capture() -> None:
    text = VERTEX.format(capability="", mode="", block="")
    assert_verdicts(text, [rules_interface.check], "vulkan1.1", None, spirv_val_accepts=True)


def test_output_block_member_with_offset_and_no_buffer_is_reported() -> None:
    text = VERTEX.format(
        capability="OpCapability TransformFeedback",
        mode="OpExecutionMode %main Xfb",
        block="OpDecorate %VertexOutput Block",
    )
    assert_verdicts(text, [rules_interface.check], "vulkan1.1", RULE, spirv_val_accepts=True)
