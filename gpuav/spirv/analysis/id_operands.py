"""Which operand words of an instruction are ids, by the grammar.

Def-use, id remapping and cloning all need this; it is the one place that knows.
"""

from __future__ import annotations

from gpuav.spirv.grammar import FAST_SHAPES, ID_KINDS, TAIL_IDS, Op
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.module import Module
from gpuav.spirv.operand_walker import WalkContext, walk_operands


class IdOperands:
    """Finds id operand positions; knows the module's int widths and extended-set names."""

    def __init__(self, module: Module) -> None:
        self.context = WalkContext(bound=module.bound)
        self.module = module
        for instruction in module.ext_inst_imports:
            self.context.imports[instruction.operands[0]] = decode_string(instruction.operands, 1)[
                0
            ]
        for instruction in module.globals:
            if instruction.opcode in (Op.TypeInt, Op.TypeFloat):
                self.context.widths[instruction.operands[0]] = instruction.operands[1]
        self.value_types: dict[int, int] | None = None
        self.context.type_of = self.type_of

    def type_of(self, value: int) -> int | None:
        if self.value_types is None:
            self.value_types = {}
            for instruction in self.module.instructions():
                type_id = instruction.type_id
                if type_id is not None:
                    self.value_types[instruction.operands[1]] = type_id
        return self.value_types.get(value)

    def positions(self, instruction: Instruction) -> list[int]:
        """Indices into ``instruction.operands`` that hold ids (result and type ids included)."""
        operands = instruction.operands
        fixed, id_positions, tail, _result = FAST_SHAPES[instruction.opcode]
        length = len(operands)
        if length == fixed or (tail and length > fixed):
            ids = list(range(fixed)) if id_positions is None else list(id_positions)
            if tail == TAIL_IDS:
                ids.extend(range(fixed, length))
            return ids
        found: list[int] = []

        def visit(kind: str, first: int, _words: int) -> None:
            if kind in ID_KINDS:
                found.append(first)

        self.context.bound = max(self.context.bound, self.module.bound)
        walk_operands(instruction.opcode, operands, self.context, visit)
        return found

    def used_ids(self, instruction: Instruction) -> list[int]:
        """Ids the instruction reads (its own result id excluded)."""
        result = instruction.result_id
        operands = instruction.operands
        return [operands[at] for at in self.positions(instruction) if operands[at] != result]
