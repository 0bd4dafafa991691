"""Definitions and uses of ids, and where each instruction lives."""

from __future__ import annotations

from collections import defaultdict

from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function, Module


class DefUse:
    """Built once over a module; ``record`` keeps it current for instructions a pass adds."""

    def __init__(self, module: Module, id_operands: IdOperands | None = None) -> None:
        self.module = module
        self.id_operands = id_operands or IdOperands(module)
        self.defs: dict[int, Instruction] = {}
        self.users: defaultdict[int, list[Instruction]] = defaultdict(list)
        # id(instruction) -> (function, block) for instructions inside blocks.
        self.places: dict[int, tuple[Function, Block]] = {}
        for instruction in module.instructions():
            self.record(instruction)
        for function in module.functions:
            for block in function.blocks:
                self.places[id(block.label)] = (function, block)
                for instruction in block.instructions:
                    self.places[id(instruction)] = (function, block)

    def record(self, instruction: Instruction, place: tuple[Function, Block] | None = None) -> None:
        result = instruction.result_id
        if result is not None:
            self.defs[result] = instruction
        for used in self.id_operands.used_ids(instruction):
            self.users[used].append(instruction)
        if place is not None:
            self.places[id(instruction)] = place

    def forget(self, instruction: Instruction) -> None:
        """Drop an instruction that a pass removed from the module."""
        result = instruction.result_id
        if result is not None and self.defs.get(result) is instruction:
            del self.defs[result]
        for used in self.id_operands.used_ids(instruction):
            users = self.users.get(used)
            if users is not None:
                self.users[used] = [user for user in users if user is not instruction]
        self.places.pop(id(instruction), None)

    def definition(self, id_: int) -> Instruction | None:
        return self.defs.get(id_)

    def uses(self, id_: int) -> list[Instruction]:
        return self.users.get(id_, [])

    def place(self, instruction: Instruction) -> tuple[Function, Block] | None:
        """The function and block holding an instruction, or None outside blocks."""
        return self.places.get(id(instruction))
