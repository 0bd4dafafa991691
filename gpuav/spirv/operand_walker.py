"""Grammar-driven walk over one instruction's operand words.

The walk checks what the grammar can tell about an instruction: every mandatory operand is
present, no words are left over, ids are in range, strings are terminated, enumerants with
parameters are known. ``visit`` lets the disassembler reuse the same walk to print operands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gpuav.spirv.grammar import (
    ID_KINDS,
    INSTRUCTIONS,
    ONE_WORD_ENUMS,
    OPERAND_KINDS,
    SINGLE_WORD_LITERALS,
    Op,
    extended_instruction,
)
from gpuav.spirv.instruction import decode_string


class OperandError(Exception):
    """Raised inside the walk; the reader turns it into a DecodeError with a position."""


# (kind, first word, words) for each operand leaf the walk meets.
Visitor = Callable[[str, int, int], None]


@dataclass
class WalkContext:
    """What an operand's shape depends on beyond the instruction itself."""

    bound: int
    widths: dict[int, int] = field(default_factory=dict)  # int/float type id -> bit width
    imports: dict[int, str] = field(default_factory=dict)  # OpExtInstImport id -> set name
    # The type id of a value defined earlier (only OpSwitch needs it, so it may be slow).
    type_of: Callable[[int], int | None] = lambda _value: None


def walk_operands(
    opcode: int, operands: list[int], context: WalkContext, visit: Visitor | None = None
) -> None:
    _Walk(operands, context, visit).instruction(opcode)


class _Walk:
    def __init__(self, operands: list[int], context: WalkContext, visit: Visitor | None) -> None:
        self.operands = operands
        self.context = context
        self.visit = visit
        self.at = 0

    def remaining(self) -> int:
        return len(self.operands) - self.at

    def instruction(self, opcode: int) -> None:
        specs = INSTRUCTIONS[opcode][2]
        if opcode == Op.ExtInst or opcode == Op.ExtInstWithForwardRefsKHR:
            self.specs(specs[:4])
            self.extended(self.operands[2], self.operands[3])
        elif opcode == Op.SpecConstantOp:
            self.specs(specs)
            inner = self.operands[2]
            if inner not in INSTRUCTIONS:
                raise OperandError(f"OpSpecConstantOp of unknown opcode {inner}")
            self.specs(
                tuple(s for s in INSTRUCTIONS[inner][2] if s[0] not in ("IdResultType", "IdResult"))
            )
        elif opcode == Op.Switch:
            self.specs(specs[:2])
            self.switch_targets()
        elif opcode == Op.Constant or opcode == Op.SpecConstant:
            self.specs(specs[:2])
            self.numeric_literal(self.operands[0])
        else:
            self.specs(specs)
        if self.remaining():
            raise OperandError(f"{self.remaining()} words left after the last operand")

    def specs(self, specs: tuple[tuple[str, str], ...]) -> None:
        for kind, quantifier in specs:
            if quantifier == "":
                self.operand(kind)
            elif quantifier == "?":
                if self.remaining():
                    self.operand(kind)
            else:
                while self.remaining():
                    self.operand(kind)

    def operand(self, kind: str) -> None:
        if not self.remaining():
            raise OperandError(f"missing {kind} operand")
        if kind in ID_KINDS:
            self.id_operand(kind)
        elif kind in SINGLE_WORD_LITERALS:
            self.leaf(kind, 1)
        elif kind == "LiteralString":
            try:
                _text, end = decode_string(self.operands, self.at)
            except ValueError:
                raise OperandError("string runs past the end of the instruction") from None
            self.leaf(kind, end - self.at)
        elif kind == "LiteralContextDependentNumber":
            self.leaf(kind, self.remaining())
        else:
            category, data = OPERAND_KINDS[kind]
            if category == "Composite":
                assert isinstance(data, tuple)
                for base in data:
                    self.operand(base)
            elif category == "ValueEnum":
                self.value_enum(kind)
            elif category == "BitEnum":
                self.bit_enum(kind)
            else:
                raise OperandError(f"operand kind {kind} cannot be decoded")

    def id_operand(self, kind: str) -> None:
        value = self.operands[self.at]
        if value == 0 or value >= self.context.bound:
            raise OperandError(f"id {value} is not in 1..{self.context.bound - 1}")
        self.leaf(kind, 1)

    def leaf(self, kind: str, words: int) -> None:
        if self.visit is not None:
            self.visit(kind, self.at, words)
        self.at += words

    def value_enum(self, kind: str) -> None:
        value = self.operands[self.at]
        enumerants = OPERAND_KINDS[kind][1]
        assert isinstance(enumerants, dict)
        info = enumerants.get(value)
        if info is None and kind not in ONE_WORD_ENUMS:
            raise OperandError(f"unknown {kind} {value}: its parameters cannot be decoded")
        self.leaf(kind, 1)
        for parameter in info[1] if info is not None else ():
            self.operand(parameter)

    def bit_enum(self, kind: str) -> None:
        mask = self.operands[self.at]
        enumerants = OPERAND_KINDS[kind][1]
        assert isinstance(enumerants, dict)
        self.leaf(kind, 1)
        bit = 1
        while bit <= mask:
            if mask & bit:
                info = enumerants.get(bit)
                if info is None and kind not in ONE_WORD_ENUMS:
                    raise OperandError(f"unknown {kind} bit {bit:#x}: its parameters are unknown")
                for parameter in info[1] if info is not None else ():
                    self.operand(parameter)
            bit <<= 1

    def extended(self, set_id: int, number: int) -> None:
        set_name = self.context.imports.get(set_id)
        entry = None if set_name is None else extended_instruction(set_name, number)
        if entry is not None:
            self.specs(entry[1])
        elif set_name is not None and set_name.startswith("NonSemantic."):
            self.specs((("IdRef", "*"),))  # every operand of a non-semantic set is an id
        else:
            self.leaf("LiteralContextDependentNumber", self.remaining())

    def numeric_literal(self, type_id: int) -> None:
        width = self.context.widths.get(type_id)
        expected = 1 if width is None or width <= 32 else (width + 31) // 32
        if self.remaining() != expected:
            raise OperandError(f"constant of a {width}-bit type needs {expected} value words")
        self.leaf("LiteralContextDependentNumber", expected)

    def switch_targets(self) -> None:
        selector_type = self.context.type_of(self.operands[0])
        width = self.context.widths.get(selector_type, 32) if selector_type else 32
        literal_words = 2 if width > 32 else 1
        while self.remaining():
            if self.remaining() < literal_words + 1:
                raise OperandError("OpSwitch target pair is cut short")
            self.leaf("LiteralContextDependentNumber", literal_words)
            self.id_operand("IdRef")
