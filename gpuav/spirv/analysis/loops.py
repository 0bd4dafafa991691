"""The structured loops of a function: header, merge and continue blocks, the blocks inside,
and the one block that enters the loop from outside."""

from __future__ import annotations

from dataclasses import dataclass

from gpuav.spirv.analysis.control_flow import successors
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function

# id -> the instructions of one function that read it, with their blocks
FunctionUses = dict[int, list[tuple[Instruction, Block]]]


@dataclass(frozen=True)
class Loop:
    function: Function
    header: Block
    merge: int  # label of the merge block
    continue_target: int
    labels: frozenset[int]  # the blocks the header reaches without passing the merge
    preheader: Block | None  # the header's one predecessor outside the loop, if it has one

    def blocks(self) -> list[Block]:
        """The loop's blocks in the function's order."""
        return [block for block in self.function.blocks if block.label_id in self.labels]


def function_loops(function: Function) -> list[Loop]:
    """Every loop of ``function``, an enclosing loop before the loops it holds."""
    blocks = {block.label_id: block for block in function.blocks}
    every = frozenset(blocks)
    predecessors: dict[int, list[Block]] = {label: [] for label in blocks}
    for block in function.blocks:
        for successor in successors(block, every):
            predecessors[successor].append(block)
    loops = []
    for block in function.blocks:
        if len(block.instructions) < 2 or block.instructions[-2].opcode != Op.LoopMerge:
            continue
        merge, continue_target = block.instructions[-2].operands[:2]
        inside = {block.label_id}
        stack = [block.label_id]
        while stack:
            for successor in successors(blocks[stack.pop()], every):
                if successor != merge and successor not in inside:
                    inside.add(successor)
                    stack.append(successor)
        entering = [p for p in predecessors[block.label_id] if p.label_id not in inside]
        loops.append(
            Loop(
                function,
                block,
                merge,
                continue_target,
                frozenset(inside),
                entering[0] if len(entering) == 1 else None,
            )
        )
    return sorted(loops, key=lambda loop: -len(loop.labels))


def loop_blocks(function: Function) -> set[int]:
    """Labels of the blocks inside any loop of ``function``, headers included."""
    return set().union(*(loop.labels for loop in function_loops(function)))


def dominates(function: Function, dominator: int, label: int) -> bool:
    """Whether every path from the function's entry to block ``label`` passes block
    ``dominator``."""
    if dominator == label:
        return True
    blocks = {block.label_id: block for block in function.blocks}
    every = frozenset(blocks)
    entry = function.blocks[0].label_id
    if entry == dominator:
        return True
    seen = {entry}
    stack = [entry]
    while stack:
        for successor in successors(blocks[stack.pop()], every):
            if successor == label:
                return False
            if successor != dominator and successor not in seen:
                seen.add(successor)
                stack.append(successor)
    return True


def function_uses(function: Function, id_operands: IdOperands) -> FunctionUses:
    """Who reads each id inside ``function`` (a pass's index may track fewer ids)."""
    uses: FunctionUses = {}
    for block in function.blocks:
        for instruction in block.instructions:
            for used in id_operands.used_ids(instruction):
                uses.setdefault(used, []).append((instruction, block))
    return uses
