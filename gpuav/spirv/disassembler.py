"""Module -> text in spirv-dis syntax, so that tests can compare our view of a module to theirs.

Operands are printed by the same grammar walk the reader checks them with
(operand_walker.py): the walk reports each operand leaf with its kind and words, and this
module spells it. Where our newer grammar knows more than spirv-dis 2023.1 (newer generator
ids, renamed enumerants whose old spelling the grammar keeps as an alias), we print what the
grammar says. Extended instructions of the sets spirv-as has no grammar for are printed as
numbers, as spirv-dis prints them, so that the text always assembles back.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from gpuav.spirv.disassembler_literals import NumericTypes, format_float, quote_string, string_at
from gpuav.spirv.friendly_names import friendly_names as make_friendly_names
from gpuav.spirv.grammar import (
    ID_KINDS,
    OPCODE_NAMES,
    OPERAND_KINDS,
    RESULT_INDEX,
    TYPE_INDEX,
    Op,
    extended_instruction,
)
from gpuav.spirv.grammar_tables import GENERATORS
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module
from gpuav.spirv.operand_walker import OperandError, WalkContext, walk_operands
from gpuav.spirv.reader import read

# Extended instruction sets we name internally but spirv-as (2023.1 to 2025.1) cannot read
# names of: their instruction numbers are printed instead.
NUMBERED_EXTENDED_SETS: Final = frozenset({"NonSemantic.DebugPrintf"})

# spirv-dis right-aligns "%id = " so that every opcode starts in this column.
OPCODE_COLUMN: Final = 15


def disassemble(
    module_or_words: Module | bytes | bytearray | memoryview | Sequence[int],
    *,
    friendly_names: bool = True,
    header: bool = True,
) -> str:
    """spirv-dis text of a module (``friendly_names=False`` is its ``--raw-id``).

    Words or bytes are read first, so malformed input raises ``DecodeError``.
    """
    module = module_or_words if isinstance(module_or_words, Module) else read(module_or_words)
    names = make_friendly_names(module) if friendly_names else {}
    lines = header_lines(module) if header else []
    printer = _Printer(module.bound, names)
    lines.extend(printer.line(instruction) for instruction in module.instructions())
    return "".join(line + "\n" for line in lines)


def generator_name(generator: int) -> str:
    """The tool named by the header's generator word, as "vendor tool; version"."""
    known = GENERATORS.get(generator >> 16)
    if known is None:
        tool = f"Unknown({generator >> 16})"
    else:
        tool = " ".join(part for part in known if part)
    return f"{tool}; {generator & 0xFFFF}"


def header_lines(module: Module) -> list[str]:
    major, minor = module.version_tuple
    return [
        "; SPIR-V",
        f"; Version: {major}.{minor}",
        f"; Generator: {generator_name(module.generator)}",
        f"; Bound: {module.bound}",
        f"; Schema: {module.schema}",
    ]


def mask_text(kind: str, mask: int) -> str:
    """Set bits' names in increasing bit order joined by '|'; an empty mask is its 0 name."""
    enumerants = OPERAND_KINDS[kind][1]
    assert isinstance(enumerants, dict)
    if mask == 0:
        zero = enumerants.get(0)
        return zero[0] if zero else "0"
    names = []
    bit = 1
    while bit <= mask:
        if mask & bit:
            info = enumerants.get(bit)
            names.append(info[0] if info else f"{bit:#x}")
        bit <<= 1
    return "|".join(names)


class _Printer:
    """Prints instructions in module order, remembering what later operands depend on."""

    def __init__(self, bound: int, names: dict[int, str]) -> None:
        self.names = names
        self.numeric = NumericTypes()
        self.value_types: dict[int, int] = {}  # result id -> type id (for OpSwitch)
        self.context = WalkContext(bound, type_of=self.value_types.get)

    def id_text(self, id_: int) -> str:
        return "%" + (self.names.get(id_) or str(id_))

    def line(self, instruction: Instruction) -> str:
        self.note(instruction)
        operands = instruction.operands
        result_at = RESULT_INDEX.get(instruction.opcode)
        parts = [OPCODE_NAMES[instruction.opcode]]
        printed = 0  # operand words printed so far

        def visit(kind: str, first: int, count: int) -> None:
            nonlocal printed
            if first != result_at and count:
                parts.append(self.operand(instruction, kind, first, count))
            printed = first + count

        try:
            walk_operands(instruction.opcode, operands, self.context, visit)
        except OperandError:
            # The reader does not check one-word enumerants (their value cannot change the
            # operand shape), so a value our grammar does not know can get here: print the
            # rest as numbers rather than refuse a module the reader accepted.
            parts.extend(str(word) for word in operands[printed:])
        text = " ".join(parts)
        if result_at is None:
            return " " * OPCODE_COLUMN + text
        result = self.id_text(operands[result_at])
        return f"{result:>{OPCODE_COLUMN - 3}} = {text}"

    def note(self, instruction: Instruction) -> None:
        """Record types, values and imports before the instruction's operands are printed."""
        opcode, operands = instruction.opcode, instruction.operands
        if opcode == Op.TypeInt:
            self.numeric.note_integer(operands[0], operands[1], operands[2])
            self.context.widths[operands[0]] = operands[1]
        elif opcode == Op.TypeFloat:
            self.numeric.note_float(operands[0], operands[1])
            self.context.widths[operands[0]] = operands[1]
        elif opcode == Op.ExtInstImport:
            self.context.imports[operands[0]] = string_at(operands, 1)[0]
        type_at = TYPE_INDEX.get(opcode)
        if type_at is not None:
            self.value_types[operands[type_at + 1]] = operands[type_at]

    def operand(self, instruction: Instruction, kind: str, first: int, count: int) -> str:
        operands = instruction.operands
        word = operands[first]
        if kind in ID_KINDS:
            return self.id_text(word)
        if kind == "LiteralString":
            return quote_string(string_at(operands, first)[0])
        if kind == "LiteralContextDependentNumber":
            return self.context_dependent(instruction, first, count)
        if kind == "LiteralExtInstInteger":
            set_name = self.context.imports.get(operands[2], "")
            if set_name in NUMBERED_EXTENDED_SETS:
                return str(word)
            entry = extended_instruction(set_name, word)
            return entry[0] if entry else str(word)
        if kind == "LiteralSpecConstantOpInteger":
            return OPCODE_NAMES.get(word, f"Op{word}").removeprefix("Op")
        if kind == "LiteralFloat":
            return format_float([word], 32)
        category, enumerants = OPERAND_KINDS.get(kind, ("", None))
        if category == "ValueEnum" and isinstance(enumerants, dict) and word in enumerants:
            return enumerants[word][0]
        if category == "BitEnum":
            return mask_text(kind, word)
        return str(word)

    def context_dependent(self, instruction: Instruction, first: int, count: int) -> str:
        """Constants and switch literals by their type; unknown extended sets as plain words."""
        words = instruction.operands[first : first + count]
        if instruction.opcode in (Op.Constant, Op.SpecConstant):
            return self.numeric.format(instruction.operands[0], words)
        if instruction.opcode == Op.Switch:
            return self.numeric.format(self.value_types.get(instruction.operands[0]), words)
        return " ".join(str(word) for word in words)
