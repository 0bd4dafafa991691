"""Which operand words of an instruction are ids, by the grammar.

Def-use, id remapping and cloning all need this; it is the one place that knows.

Most opcodes have a fixed shape (FAST_SHAPES); the layouts of names, decorations, constants
and extended instructions are walked once and remembered (operand_shapes.py); the rest are
walked each time.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuav.spirv import operand_shapes
from gpuav.spirv.grammar import FAST_SHAPES, ID_KINDS, TAIL_IDS, TYPE_INDEX, Op
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.module import Module
from gpuav.spirv.operand_walker import WalkContext, walk_operands


class ValueTypes:
    """Value id -> type id over a module, indexed on first use (only OpSwitch asks).

    A separate object rather than a bound method of IdOperands: the walk context keeps it, and
    a context holding its owner's method would be a reference cycle that keeps the module
    alive until a full collection.
    """

    __slots__ = ("module", "types")

    def __init__(self, module: Module) -> None:
        self.module = module
        self.types: dict[int, int] | None = None

    def __call__(self, value: int) -> int | None:
        if self.types is None:
            types: dict[int, int] = {}
            type_index = TYPE_INDEX
            for instruction in self.module.instructions():
                at = type_index.get(instruction.opcode)
                if at is not None:
                    types[instruction.operands[at + 1]] = instruction.operands[at]
            self.types = types
        return self.types.get(value)


class IdOperands:
    """Finds id operand positions; knows the module's int widths and extended-set names."""

    def __init__(self, module: Module) -> None:
        self.module = module
        self.context = WalkContext(bound=module.bound, type_of=ValueTypes(module))
        for instruction in module.ext_inst_imports:
            operands = instruction.operands
            self.context.imports[operands[0]] = decode_string(operands, 1)[0]
        for instruction in module.globals:
            if instruction.opcode in (Op.TypeInt, Op.TypeFloat):
                self.context.widths[instruction.operands[0]] = instruction.operands[1]

    def type_of(self, value: int) -> int | None:
        return self.context.type_of(value)

    def extended_set(self, instruction: Instruction) -> str:
        """The name of an OpExtInst's extended instruction set; "" for other instructions."""
        if instruction.opcode != Op.ExtInst or len(instruction.operands) < 4:
            return ""
        return self.context.imports.get(instruction.operands[2], "")

    def positions(self, instruction: Instruction) -> list[int]:
        """Indices into ``instruction.operands`` that hold ids (result and type ids included)."""
        return list(self.shared_positions(instruction))

    def shared_positions(self, instruction: Instruction) -> Sequence[int]:
        """``positions`` without the copy, for hot loops: callers must not change it."""
        operands = instruction.operands
        opcode = instruction.opcode
        fixed, id_positions, tail, _result = FAST_SHAPES[opcode]
        length = len(operands)
        if length == fixed or (tail and length > fixed):
            if id_positions is not None:
                return id_positions  # a tail of ids comes only with all-id shapes
            return range(length if tail == TAIL_IDS else fixed)
        known = operand_shapes.prefix_ids(opcode, operands)
        if known is not None:
            return known
        if opcode in operand_shapes.SHAPE_OPERANDS:
            self.context.bound = max(self.context.bound, self.module.bound)
            return operand_shapes.id_positions(opcode, operands, self.context)
        return self.walk(instruction)

    def walk(self, instruction: Instruction) -> list[int]:
        """The grammar walk: raises OperandError on operands the grammar cannot decode."""
        found: list[int] = []
        append = found.append
        id_kinds = ID_KINDS

        def visit(kind: str, first: int, _words: int) -> None:
            if kind in id_kinds:
                append(first)

        self.context.bound = max(self.context.bound, self.module.bound)
        walk_operands(instruction.opcode, instruction.operands, self.context, visit)
        return found

    def used_ids(self, instruction: Instruction) -> list[int]:
        """Ids the instruction reads (its own result id excluded)."""
        result = instruction.result_id
        operands = instruction.operands
        return [operands[at] for at in self.shared_positions(instruction) if operands[at] != result]
