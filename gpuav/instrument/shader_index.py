"""A def-use index built for this pass only: cheap enough to run at every shader creation.

The general ``DefUse`` finds the id operands of every instruction in the module through the
grammar, which costs more than the whole rest of the pass. The pass only ever asks for the
users of descriptor variables and of the instructions that name a descriptor, so this index
keeps definitions and places for everything (a dictionary store each) and users only for
those ids: an instruction whose operand words share nothing with the tracked set is skipped
after one set test, and only the rest have their operands decoded. Instructions a pass adds
are recorded without users, which nothing here asks for after the find phase.
"""

from __future__ import annotations

from collections import defaultdict

from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import RESULT_INDEX, Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function, Module

# Instructions whose result still names a descriptor (so its users matter too).
_NAMING = frozenset(
    {
        Op.AccessChain,
        Op.InBoundsAccessChain,
        Op.PtrAccessChain,
        Op.CopyObject,
        Op.SampledImage,
        Op.Image,
        Op.ImageTexelPointer,
        Op.Phi,
        Op.Select,
    }
)
_OPAQUE_TYPES = frozenset(
    {Op.TypeImage, Op.TypeSampledImage, Op.TypeSampler, Op.TypeAccelerationStructureKHR}
)


class ShaderIndex(DefUse):
    """Definitions and places of every instruction; users of ``roots`` and what they name."""

    def __init__(self, module: Module, roots: set[int]) -> None:
        # DefUse's own constructor indexes everything; this one deliberately does not.
        self.module = module
        self.id_operands = IdOperands(module)
        self.defs: dict[int, Instruction] = {}
        self.users: defaultdict[int, list[Instruction]] = defaultdict(list)
        self.places: dict[int, tuple[Function, Block]] = {}
        defs = self.defs
        result_index = RESULT_INDEX
        for instruction in module.globals:
            at = result_index.get(instruction.opcode)
            if at is not None:
                defs[instruction.operands[at]] = instruction
        tracked = set(roots)
        # A loop's phi comes before the value its back edge brings: scan again when a phi
        # turns out to merge a descriptor only once the whole function was seen.
        while self._scan(tracked):
            self.users.clear()

    def _scan(self, tracked: set[int]) -> bool:
        """Index the functions; True when a phi was passed before its operand was tracked."""
        module = self.module
        defs = self.defs
        result_index = RESULT_INDEX
        places = self.places
        passed: list[tuple[Instruction, int]] = []
        self._parameters_added = False
        for function in module.functions:
            defs[function.id] = function.definition
            for parameter in function.parameters:
                defs[parameter.operands[1]] = parameter
            for block in function.blocks:
                place = (function, block)
                places[id(block.label)] = place
                for instruction in block.instructions:
                    places[id(instruction)] = place
                    operands = instruction.operands
                    at = result_index.get(instruction.opcode)
                    if at is not None:
                        defs[operands[at]] = instruction
                    if instruction.opcode == Op.Phi:
                        passed.append((instruction, _count_in(operands, tracked)))
                    if tracked and not tracked.isdisjoint(operands):
                        self._track(instruction, tracked)
        if self._parameters_added:  # the callee may come before its caller
            return True
        return any(_count_in(phi.operands, tracked) > count for phi, count in passed)

    def _track(self, instruction: Instruction, tracked: set[int]) -> None:
        hit = False
        for used in self.id_operands.used_ids(instruction):
            if used in tracked:
                self.users[used].append(instruction)
                hit = True
        if not hit:
            return
        opcode = instruction.opcode
        if opcode == Op.FunctionCall:
            self._track_parameters(instruction, tracked)
        if opcode in _NAMING or (opcode == Op.Load and self._loads_opaque(instruction)):
            tracked.add(instruction.operands[1])

    def _track_parameters(self, call: Instruction, tracked: set[int]) -> None:
        """A descriptor passed whole to a function: its parameter names the descriptor."""
        callee = next((f for f in self.module.functions if f.id == call.operands[2]), None)
        if callee is None:
            return
        for argument, parameter in zip(call.operands[3:], callee.parameters, strict=False):
            if argument in tracked and parameter.operands[1] not in tracked:
                tracked.add(parameter.operands[1])
                self._parameters_added = True

    def _loads_opaque(self, load: Instruction) -> bool:
        type_instruction = self.defs.get(load.operands[0])
        return type_instruction is not None and type_instruction.opcode in _OPAQUE_TYPES

    def record(self, instruction: Instruction, place: tuple[Function, Block] | None = None) -> None:
        """Note an added instruction: its definition and place (users are not tracked)."""
        at = RESULT_INDEX.get(instruction.opcode)
        if at is not None:
            self.defs[instruction.operands[at]] = instruction
        if place is not None:
            self.places[id(instruction)] = place

    def forget(self, instruction: Instruction) -> None:
        result = instruction.result_id
        if result is not None and self.defs.get(result) is instruction:
            del self.defs[result]
        self.places.pop(id(instruction), None)


def _count_in(operands: list[int], tracked: set[int]) -> int:
    return sum(1 for operand in operands if operand in tracked)
