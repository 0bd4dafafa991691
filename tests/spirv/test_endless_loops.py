"""Loops that can never be left (gpuav.spirv.analysis.endless_loops), which the layer does not
instrument: a driver may drop such a loop, gpuav's checks in it would make it run forever."""

from __future__ import annotations

import pytest

from gpuav.spirv.analysis.endless_loops import endless_loops
from gpuav.spirv.reader import read
from tests.spirv.corpus import assemble

HEAD = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%bool = OpTypeBool
%true = OpConstantTrue %bool
%main = OpFunction %void None %fn
%entry = OpLabel
OpBranch %header
%header = OpLabel
OpLoopMerge %merge %continue None
"""
TAIL = """
%continue = OpLabel
OpBranch %header
%merge = OpLabel
OpReturn
OpFunctionEnd
"""

LOOPS = {
    # a loop with an exit test: leavable
    "exit-test": ("OpBranchConditional %true %body %merge\n%body = OpLabel\nOpBranch %continue",
                  False),
    # the header skips the exit test: never left (fuzz mutant 7263's shape)
    "no-exit": ("OpBranch %body\n%body = OpLabel\nOpBranch %continue", True),
    # no path to the merge block, but a return inside: left through the function's end
    "return-inside": ("OpBranch %body\n%body = OpLabel\nOpReturn", False),
    # a switch whose default reaches the merge block
    "switch-exit": ("OpBranch %body\n%body = OpLabel\nOpSelectionMerge %continue None\n"
                    "OpSwitch %uint_0 %merge 1 %continue", False),
}  # fmt: skip


@pytest.mark.parametrize(("name", "body", "endless"), [(k, *v) for k, v in LOOPS.items()])
def test_loops_that_can_never_be_left(name: str, body: str, endless: bool) -> None:
    head = HEAD
    if "%uint_0" in body:
        head = head.replace("%bool = OpTypeBool", "%bool = OpTypeBool\n%uint = OpTypeInt 32 0\n"
                            "%uint_0 = OpConstant %uint 0")  # fmt: skip
    module = read(assemble(head + body + TAIL, "spv1.3"))
    found = endless_loops(module)
    assert bool(found) == endless, (name, found)
