"""Words -> Module, rejecting malformed input with one error type.

Every problem raises ``DecodeError`` with the byte offset and instruction index; nothing else
escapes. Operands are checked against the grammar: instructions whose operands are a fixed run
of one-word operands take a fast path, the rest are walked operand by operand
(operand_walker.py). The layout rules of SPIR-V 2.4 decide which section an instruction
belongs to; an instruction out of that order is rejected rather than silently moved, so that
a module that reads also writes back word for word.
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Sequence
from itertools import islice
from typing import Final

from gpuav.errors import DecodeError
from gpuav.spirv.grammar import (
    EXT_INST_ID_SHAPES,
    FAST_SHAPES,
    MAGIC_NUMBER,
    TAIL_LITERALS,
    TYPE_INDEX,
    Op,
)
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.module import TERMINATORS, Block, Function, Module
from gpuav.spirv.operand_shapes import check
from gpuav.spirv.operand_walker import OperandError, WalkContext

HEADER_WORDS: Final = 5

# Section numbers in layout order; instructions not listed are "global" (types, constants,
# variables, OpUndef, non-semantic OpExtInst) until the first OpFunction.
_CAPABILITIES, _EXTENSIONS, _IMPORTS, _MEMORY_MODEL, _ENTRY_POINTS, _EXECUTION_MODES = range(6)
_DEBUG_SOURCES, _DEBUG_NAMES, _DEBUG_PROCESSED, _ANNOTATIONS, _GLOBALS = range(6, 11)
_SECTION_OF: Final[dict[int, int]] = {
    Op.Capability: _CAPABILITIES,
    Op.Extension: _EXTENSIONS,
    Op.ExtInstImport: _IMPORTS,
    Op.MemoryModel: _MEMORY_MODEL,
    Op.EntryPoint: _ENTRY_POINTS,
    Op.ExecutionMode: _EXECUTION_MODES,
    Op.ExecutionModeId: _EXECUTION_MODES,
    Op.String: _DEBUG_SOURCES,
    Op.SourceExtension: _DEBUG_SOURCES,
    Op.Source: _DEBUG_SOURCES,
    Op.SourceContinued: _DEBUG_SOURCES,
    Op.Name: _DEBUG_NAMES,
    Op.MemberName: _DEBUG_NAMES,
    Op.ModuleProcessed: _DEBUG_PROCESSED,
    Op.Decorate: _ANNOTATIONS,
    Op.MemberDecorate: _ANNOTATIONS,
    Op.DecorateId: _ANNOTATIONS,
    Op.DecorateString: _ANNOTATIONS,
    Op.MemberDecorateString: _ANNOTATIONS,
    Op.DecorationGroup: _ANNOTATIONS,
    Op.GroupDecorate: _ANNOTATIONS,
    Op.GroupMemberDecorate: _ANNOTATIONS,
}
_FUNCTION_ONLY: Final = frozenset({Op.Label, Op.FunctionEnd, Op.FunctionParameter})
# Instructions allowed outside blocks inside and between functions.
_DEBUG_LINE_OPS: Final = frozenset({Op.Line, Op.NoLine, Op.ExtInst})


def words_from_bytes(data: bytes | bytearray | memoryview) -> list[int]:
    """Decode a byte string in whichever endianness its magic number says."""
    if len(data) % 4:
        raise DecodeError(f"length {len(data)} is not a multiple of 4", len(data), None)
    words = array("I", bytes(data))
    if words and words[0] != MAGIC_NUMBER:
        words.byteswap()
        if words[0] != MAGIC_NUMBER:
            raise DecodeError("bad magic number", 0, None)
    return words.tolist()


def read(data: bytes | bytearray | memoryview | Sequence[int]) -> Module:
    """Parse a SPIR-V module from bytes or 32-bit words (either endianness)."""
    if isinstance(data, bytes | bytearray | memoryview):
        words = words_from_bytes(data)
    else:
        words = list(data)
        if words and words[0] != MAGIC_NUMBER:
            swapped = array("I", words)
            swapped.byteswap()
            words = swapped.tolist()
    # Building ~50k small objects per MiB: the cycle collector would rescan them all many
    # times over while nothing here can form a cycle.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _Reader(words).read()
    finally:
        if collecting:
            _promote_young_objects()
            gc.enable()


def _promote_young_objects() -> None:
    """Move the objects read() just built straight into the collector's oldest generation.

    With the collector paused they all stay "young", so the first allocations after read()
    would trigger a collection that traverses every instruction and operand list, and soon
    another of generation 1: ~15 ms per MiB for nothing, since instructions form no cycles.
    freeze() + unfreeze() splices the young generations into the oldest in O(1) and resets the
    allocation count. Other young objects of the process are promoted as well, which only
    delays collecting any cyclic garbage among them to the next full collection. Skipped when
    the program has frozen objects itself (unfreeze() would release them).
    """
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


class _Reader:
    def __init__(self, words: list[int]) -> None:
        self.words = words
        self.index = 0
        self.offset = 0

    def fail(self, reason: str, *, with_index: bool = True) -> DecodeError:
        return DecodeError(reason, self.offset * 4, self.index if with_index else None)

    def read(self) -> Module:
        words = self.words
        if len(words) < HEADER_WORDS:
            raise self.fail("header needs 5 words", with_index=False)
        if words[0] != MAGIC_NUMBER:
            raise self.fail("bad magic number", with_index=False)
        module = Module(version=words[1], generator=words[2], bound=words[3], schema=words[4])
        instructions = self.decode(module.bound)
        _Layout(module, self).place_all(instructions)
        return module

    def decode(self, bound: int) -> list[Instruction]:
        """Split the words into instructions, checking each against the grammar."""
        words = self.words
        count = len(words)
        fast_shapes = FAST_SHAPES
        instructions: list[Instruction] = []
        context = WalkContext(bound, type_of=_TypeLookup(instructions))
        widths = context.widths
        defined: set[int] = set()
        append = instructions.append
        # Locals: a global or class attribute lookup per instruction costs ~2% of a read.
        tail_literals = TAIL_LITERALS
        ext_inst, ext_inst_import = Op.ExtInst, Op.ExtInstImport
        tracked = frozenset({Op.TypeInt, Op.TypeFloat, ext_inst_import})
        position = HEADER_WORDS
        index = 0
        while position < count:
            header = words[position]
            word_count = header >> 16
            opcode = header & 0xFFFF
            end = position + word_count
            shape = fast_shapes.get(opcode)
            if shape is None or word_count == 0 or end > count:
                self.offset, self.index = position, index
                raise self.fail(self.header_problem(opcode, word_count, end > count))
            operands = words[position + 1 : end]
            fixed, id_positions, tail, result_at = shape
            length = word_count - 1
            if length == fixed or (tail and length > fixed):
                if id_positions is None:
                    ids = operands if tail != tail_literals else operands[:fixed]
                    if ids and (min(ids) == 0 or max(ids) >= bound):
                        self.offset, self.index = position, index
                        self.check_ids(ids, range(len(ids)), bound)
                else:
                    for at in id_positions:
                        if not 0 < operands[at] < bound:
                            self.offset, self.index = position, index
                            self.check_ids(operands, id_positions, bound)
            elif not (opcode == ext_inst and self.ext_inst_fast(operands, context)):
                try:
                    check(opcode, operands, context)
                except OperandError as error:
                    self.offset, self.index = position, index
                    raise self.fail(str(error)) from None
            if result_at >= 0:
                result = operands[result_at]
                if result in defined:
                    self.offset, self.index = position, index
                    raise self.fail(f"id {result} is defined twice")
                defined.add(result)
                if opcode in tracked:
                    if opcode == ext_inst_import:
                        context.imports[result] = decode_string(operands, 1)[0]
                    else:
                        widths[result] = operands[1]
            append(Instruction(opcode, operands, index))
            position = end
            index += 1
        self.offset, self.index = count, index
        return instructions

    def fail_at(self, instruction: Instruction, reason: str) -> DecodeError:
        """An error about an already decoded instruction: recompute its byte offset."""
        index = instruction.origin or 0
        position = HEADER_WORDS
        for _ in range(index):
            position += self.words[position] >> 16
        return DecodeError(reason, position * 4, index)

    @staticmethod
    def ext_inst_fast(operands: list[int], context: WalkContext) -> bool:
        """True when an all-id extended instruction has the right count of in-range ids."""
        set_name = context.imports.get(operands[2]) if len(operands) > 3 else None
        shape = EXT_INST_ID_SHAPES.get(set_name or "", {}).get(operands[3]) if set_name else None
        if shape is None:
            return False
        ids = len(operands) - 4
        if ids != shape[0] and not (shape[1] and ids > shape[0]):
            return False
        operands_ids = operands[:3] + operands[4:]
        return min(operands_ids) > 0 and max(operands_ids) < context.bound

    @staticmethod
    def header_problem(opcode: int, word_count: int, past_end: bool) -> str:
        if word_count == 0:
            return "word count of 0"
        if past_end:
            return f"instruction of {word_count} words runs past the end"
        return f"unknown opcode {opcode}"

    def check_ids(self, operands: list[int], positions: Sequence[int], bound: int) -> None:
        for at in positions:
            if operands[at] == 0:
                raise self.fail(f"operand {at} is id 0")
            if operands[at] >= bound:
                raise self.fail(f"operand {at} is id {operands[at]}, not below the bound {bound}")


class _TypeLookup:
    """Value id -> type id over the instructions decoded so far, indexed on first use."""

    def __init__(self, instructions: list[Instruction]) -> None:
        self.instructions = instructions
        self.types: dict[int, int] = {}
        self.indexed = 0

    def __call__(self, value: int) -> int | None:
        for instruction in islice(self.instructions, self.indexed, None):
            type_at = TYPE_INDEX.get(instruction.opcode)
            if type_at is not None:
                self.types[instruction.operands[type_at + 1]] = instruction.operands[type_at]
        self.indexed = len(self.instructions)
        return self.types.get(value)


class _Layout:
    """Puts each instruction into its section, enforcing the order of SPIR-V 2.4."""

    def __init__(self, module: Module, reader: _Reader) -> None:
        self.module = module
        self.reader = reader

    def place_all(self, instructions: list[Instruction]) -> None:
        first_function = self.place_header(instructions)
        self.place_functions(instructions, first_function)

    def place_header(self, instructions: list[Instruction]) -> int:
        """Fill the sections before the functions; returns the index of the first OpFunction."""
        sections = self.module.header_sections()
        section_of = _SECTION_OF
        current = _CAPABILITIES
        for position, instruction in enumerate(instructions):
            opcode = instruction.opcode
            if opcode == Op.Function:
                return position
            section = section_of.get(opcode, _GLOBALS)
            if section < current:
                raise self.reader.fail_at(
                    instruction, f"{instruction.name} is out of the logical layout order"
                )
            if opcode in _FUNCTION_ONLY:
                raise self.reader.fail_at(instruction, f"{instruction.name} outside a function")
            current = section
            sections[section].append(instruction)
        return len(instructions)

    def place_functions(self, instructions: list[Instruction], start: int) -> None:
        module = self.module
        # OpLine/OpNoLine ending the globals belong to the first OpFunction.
        globals_ = module.globals
        split = len(globals_)
        while split and globals_[split - 1].opcode in (Op.Line, Op.NoLine):
            split -= 1
        pending = globals_[split:]
        del globals_[split:]

        terminators = TERMINATORS
        debug_line_ops = _DEBUG_LINE_OPS
        label, function_end, parameter, function_op = (
            Op.Label,
            Op.FunctionEnd,
            Op.FunctionParameter,
            Op.Function,
        )
        function: Function | None = None
        body: list[Instruction] | None = None  # the open block's instructions
        fail = self.reader.fail_at
        structure = frozenset({label, function_op, function_end})
        for instruction in islice(instructions, start, None):
            opcode = instruction.opcode
            if body is not None:
                body.append(instruction)
                if opcode in terminators:
                    body = None
                elif opcode in structure:
                    raise fail(instruction, f"{instruction.name} inside an unterminated block")
            elif function is None:
                if opcode == function_op:
                    function = Function(definition=instruction, end=instruction, preamble=pending)
                    pending = []
                elif opcode in debug_line_ops:
                    pending.append(instruction)
                else:
                    raise fail(instruction, f"{instruction.name} between functions")
            elif opcode == label:
                block = Block(label=instruction, preamble=pending)
                pending = []
                function.blocks.append(block)
                body = block.instructions
            elif opcode == function_end:
                function.end = instruction
                function.epilogue = pending
                pending = []
                module.functions.append(function)
                function = None
            elif opcode == parameter and not function.blocks:
                function.parameters.extend(pending)
                pending = []
                function.parameters.append(instruction)
            elif opcode in debug_line_ops:
                pending.append(instruction)
            else:
                raise fail(instruction, f"{instruction.name} outside a block")
        if function is not None:
            raise self.reader.fail("module ends inside a function", with_index=False)
        module.trailer = pending
