"""Definitions and uses of ids, and where each instruction lives.

Built in one loop over the module with the grammar's fixed shapes inlined (def-use is the
largest single cost of validating a module). Nothing here points back at the DefUse, so a
module and its analyses are freed by reference counting alone, without a cyclic collection.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import FAST_SHAPES, RESULT_INDEX, TAIL_IDS
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function, Module
from gpuav.spirv.operand_shapes import ID_PREFIXES


class DefUse:
    """Built once over a module; ``record`` keeps it current for instructions a pass adds.

    Raises what the grammar walk raises (OperandError) on an instruction of malformed shape.
    """

    def __init__(self, module: Module, id_operands: IdOperands | None = None) -> None:
        self.module = module
        self.id_operands = id_operands or IdOperands(module)
        self.defs: dict[int, Instruction] = {}
        self.users: defaultdict[int, list[Instruction]] = defaultdict(list)
        # id(instruction) -> (function, block) for instructions inside blocks.
        self.places: dict[int, tuple[Function, Block]] = {}
        self._index(module)

    def _index(self, module: Module) -> None:
        defs, users, places = self.defs, self.users, self.places
        positions_of = self.id_operands.shared_positions
        result_index, fast_shapes, tail_ids = RESULT_INDEX, FAST_SHAPES, TAIL_IDS
        id_prefixes = ID_PREFIXES
        for instruction in module.instructions():
            opcode, operands = instruction.opcode, instruction.operands
            at = result_index.get(opcode)
            result = None
            if at is not None:
                result = operands[at]
                defs[result] = instruction
            fixed, id_positions, tail, _result = fast_shapes[opcode]
            length = len(operands)
            positions: Sequence[int]
            if length == fixed or (tail and length > fixed):
                # The fixed shape, inlined: the common case by far.
                if id_positions is None:  # every operand up to the tail is an id
                    for used in operands if tail == tail_ids else operands[:fixed]:
                        if used != result:  # used_ids leaves out the instruction's own result
                            users[used].append(instruction)
                    continue
                positions = id_positions  # a tail of ids comes only with all-id shapes
            else:
                prefix = id_prefixes.get(opcode)  # prefix_ids, inlined
                if prefix is not None and length >= prefix[1]:
                    if prefix[2] < 0 or operands[prefix[2]] not in prefix[3]:
                        positions = prefix[0]
                    else:
                        positions = positions_of(instruction)
                else:
                    positions = positions_of(instruction)
            for position in positions:
                used = operands[position]
                if used != result:
                    users[used].append(instruction)
        for function in module.functions:
            for block in function.blocks:
                place = (function, block)
                places[id(block.label)] = place
                for instruction in block.instructions:
                    places[id(instruction)] = place

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
