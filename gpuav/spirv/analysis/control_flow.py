"""A function's control-flow graph, read from its blocks' terminators."""

from __future__ import annotations

from gpuav.spirv.grammar import Op
from gpuav.spirv.module import Block


def successors(block: Block, labels: frozenset[int]) -> list[int]:
    """The labels ``block`` may branch to (``labels``: the function's blocks)."""
    terminator = block.terminator
    if terminator.opcode == Op.Switch:
        # Any operand that names a block (a case literal equal to a label only adds an edge,
        # which can only make a block look more connected).
        return [operand for operand in terminator.operands[1:] if operand in labels]
    if terminator.opcode in (Op.Branch, Op.BranchConditional):
        return [operand for operand in terminator.operands if operand in labels]
    return []
