"""After the descriptor rewrite: the naming instructions (access chains, loads, sampled
images...) that the guarded clones replaced and that nothing uses any more are dropped, with
their names and decorations, so that no descriptor is named with an unchecked index."""

from __future__ import annotations

from collections import Counter

from gpuav.instrument.accesses import Findings
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Function, Module

# Instructions that only name a descriptor; unused ones are removed after the rewrite.
_NAMING = frozenset(
    {
        Op.AccessChain,
        Op.InBoundsAccessChain,
        Op.PtrAccessChain,
        Op.CopyObject,
        Op.Load,
        Op.SampledImage,
        Op.Image,
        Op.ImageTexelPointer,
    }
)


def remove_unused_links(module: Module, findings: Findings, def_use: DefUse) -> None:
    """Drop naming instructions the rewrite left without users (and their annotations)."""
    candidates = {link.operands[1] for access in findings.accesses for link in access.links}
    functions: list[Function] = []
    for access in findings.accesses:
        place = def_use.place(access.consumer)
        if place is not None and all(place[0] is not f for f in functions):
            functions.append(place[0])
    uses: Counter[int] = Counter()
    where: dict[int, tuple[list[Instruction], Instruction]] = {}
    used_ids = def_use.id_operands.used_ids
    for function in functions:
        for block in function.blocks:
            for instruction in block.instructions:
                operands = instruction.operands
                if candidates.isdisjoint(operands):
                    continue
                if instruction.opcode in _NAMING and operands[1] in candidates:
                    where[operands[1]] = (block.instructions, instruction)
                for used in used_ids(instruction):
                    if used in candidates:
                        uses[used] += 1
    removed: set[int] = set()
    pending = [result for result in where if uses[result] == 0]
    while pending:
        result = pending.pop()
        if result in removed:
            continue
        instructions, instruction = where[result]
        instructions.remove(instruction)
        removed.add(result)
        for used in used_ids(instruction):
            uses[used] -= 1
            if uses[used] == 0 and used in where:
                pending.append(used)
    if removed:
        module.annotations = [i for i in module.annotations if not _targets(i, removed)]
        module.debug_names = [i for i in module.debug_names if not _targets(i, removed)]


def _targets(instruction: Instruction, ids: set[int]) -> bool:
    return (
        bool(instruction.operands)
        and instruction.operands[0] in ids
        and instruction.opcode
        in (
            Op.Decorate,
            Op.DecorateId,
            Op.DecorateString,
            Op.Name,
        )
    )
