"""Loops that can never be left: no path from the header reaches the loop's merge block or
leaves the function.

Such a loop only ends because a driver may delete a loop without side effects (Vulkan lets
an implementation assume that every invocation makes progress). Instrumentation puts a
possible record write in it, a side effect, and the driver must then run it forever: so the
layer does not instrument a module that has one.
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuav.spirv.analysis.control_flow import successors
from gpuav.spirv.grammar import Op
from gpuav.spirv.module import Block, Function, Module

# Terminators that leave the function (or the invocation), and so a loop.
_LEAVING = frozenset(
    {
        Op.Return,
        Op.ReturnValue,
        Op.Kill,
        Op.TerminateInvocation,
        Op.Unreachable,
        Op.IgnoreIntersectionKHR,
        Op.TerminateRayKHR,
        Op.EmitMeshTasksEXT,
    }
)


def _reachable(start: int, blocks: dict[int, Block], labels: frozenset[int]) -> set[int]:
    seen = {start}
    stack = [start]
    while stack:
        for successor in successors(blocks[stack.pop()], labels):
            if successor not in seen:
                seen.add(successor)
                stack.append(successor)
    return seen


def _endless_in(function: Function) -> Iterator[int]:
    if not function.blocks:
        return
    blocks = {block.label_id: block for block in function.blocks}
    labels = frozenset(blocks)
    entered = _reachable(function.blocks[0].label_id, blocks, labels)
    for block in function.blocks:
        if block.label_id not in entered or len(block.instructions) < 2:
            continue
        merge = block.instructions[-2]
        if merge.opcode != Op.LoopMerge:
            continue
        within = _reachable(block.label_id, blocks, labels)
        leaves = any(blocks[label].terminator.opcode in _LEAVING for label in within)
        if merge.operands[0] not in within and not leaves:
            yield block.label_id


def endless_loops(module: Module) -> list[int]:
    """Header label ids of the reachable loops that can never be left."""
    return [header for function in module.functions for header in _endless_in(function)]
