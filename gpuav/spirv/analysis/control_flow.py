"""A function's control-flow graph, read from its blocks' terminators."""

from __future__ import annotations

from gpuav.spirv.grammar import Op
from gpuav.spirv.module import Block, Function


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


def loop_blocks(function: Function) -> set[int]:
    """Labels of the blocks inside a loop: those a loop header reaches without passing its
    merge block (structured control flow), the header included."""
    blocks = {block.label_id: block for block in function.blocks}
    labels = frozenset(blocks)
    inside: set[int] = set()
    for block in function.blocks:
        if len(block.instructions) < 2 or block.instructions[-2].opcode != Op.LoopMerge:
            continue
        merge = block.instructions[-2].operands[0]
        stack = [block.label_id]
        seen = {block.label_id, merge}
        while stack:
            label = stack.pop()
            inside.add(label)
            for successor in successors(blocks[label], labels):
                if successor not in seen:
                    seen.add(successor)
                    stack.append(successor)
    return inside
