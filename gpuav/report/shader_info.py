"""What a report needs to know about one original shader, built once per shader's words.

An error record names an instruction by its index in the original module. From the words we
build, in one pass, the source position in force at every instruction (the last ``OpLine`` or
``NonSemantic.Shader.DebugInfo.100`` ``DebugLine`` before it, cleared by ``OpNoLine``,
``DebugNoLine`` and the end of a function), the embedded source texts, names and
decorations. The layer reads records back after every submit, so this is cached by the
shader's words and the per-record questions are dictionary lookups.
"""

from __future__ import annotations

import functools
from _thread import allocate_lock  # threading.Lock, without importing threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuav.errors import DecodeError
from gpuav.report.descriptor_lookup import (
    DEFINITIONS_NEEDED,
    DescriptorVariable,
    find_descriptor,
)
from gpuav.report.source_text import SourceText
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import RESULT_INDEX, TYPE_INDEX, Op
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.module import Module
from gpuav.spirv.reader import read

DEBUG_INFO_SET = "NonSemantic.Shader.DebugInfo.100"
# Instruction numbers in NonSemantic.Shader.DebugInfo.100.
DEBUG_SOURCE = 35
DEBUG_SOURCE_CONTINUED = 102
DEBUG_LINE = 103
DEBUG_NO_LINE = 104
CACHED_SHADERS = 64
_SCANNED = frozenset(
    {
        Op.String,
        Op.Name,
        Op.ExtInstImport,
        Op.Constant,
        Op.Source,
        Op.SourceContinued,
        Op.ExtInst,
        Op.Line,
        Op.NoLine,
        Op.FunctionEnd,
    }
)


@dataclass(frozen=True)
class LineMark:
    """A source position from OpLine or DebugLine, with the texts that may hold its line."""

    file: str | None
    line: int
    column: int
    sources: tuple[SourceText, ...]


@dataclass(frozen=True)
class SourceLocation:
    file: str | None
    line: int
    column: int
    text: str | None  # None when no embedded source holds the line


class ShaderInfo:
    """Source positions, names and descriptors of one original shader."""

    def __init__(self, words: Sequence[int]) -> None:
        self.error: str | None = None
        self.module: Module | None = None
        self.instructions: list[Instruction] = []
        self._marks: list[LineMark | None] = []
        self._disassembly: list[str] | None = None
        self._decorations: Decorations | None = None
        self._tables = _Tables()
        self._id_operands: IdOperands | None = None
        self._code_start = 0  # index of the first OpFunction
        try:
            self.module = read(words)
        except DecodeError as error:
            self.error = str(error)
            return
        self.instructions = list(self.module.instructions())
        self._code_start = next(
            (at for at, item in enumerate(self.instructions) if item.opcode == Op.Function),
            len(self.instructions),
        )
        self._decorations = Decorations(self.module)
        self._tables = _scan(self.instructions)
        self._marks = _line_marks(len(self.instructions), self._tables)

    @property
    def has_line_info(self) -> bool:
        return any(mark is not None for mark in self._marks)

    def location(self, index: int) -> SourceLocation | None:
        """Where the instruction at ``index`` came from, or None without line info there."""
        mark = self._marks[index] if 0 <= index < len(self._marks) else None
        if mark is None:
            return None
        text = None
        for source in mark.sources:
            text = source.line_text(mark.file, mark.line)
            if text is not None:
                break
        return SourceLocation(mark.file, mark.line, mark.column, text)

    def instruction_text(self, index: int) -> str | None:
        """The instruction in spirv-dis syntax (with friendly names), or None out of range."""
        if self.module is None or not 0 <= index < len(self.instructions):
            return None
        if self._disassembly is None:
            # One line per instruction; disassemble() joins them, and strings may hold newlines.
            from gpuav.spirv.disassembler import _Printer
            from gpuav.spirv.friendly_names import friendly_names

            printer = _Printer(self.module.bound, friendly_names(self.module))
            self._disassembly = [printer.line(item).strip() for item in self.instructions]
        return self._disassembly[index]

    def descriptor(
        self, index: int, wanted: tuple[int, int] | None = None
    ) -> DescriptorVariable | None:
        """The descriptor variable the instruction at ``index`` consumes, if one can be found
        (the one at set and binding ``wanted`` where it consumes several)."""
        if not self._code_start <= index < len(self.instructions) or self._decorations is None:
            return None  # names and decorations mention variables but do not consume them
        instruction = self.instructions[index]
        if self._id_operands is None:
            self._id_operands = IdOperands(self.module) if self.module is not None else None
        if self._id_operands is None:
            return None
        skip = {RESULT_INDEX.get(instruction.opcode), TYPE_INDEX.get(instruction.opcode)}
        ids = [
            instruction.operands[at]
            for at in self._id_operands.positions(instruction)
            if at not in skip
        ]
        tables = self._tables
        return find_descriptor(ids, tables.definitions, self._decorations, tables.names, wanted)


@dataclass
class _Tables:
    """What one pass over the module collects for the line table and the lookups."""

    strings: dict[int, str] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    constants: dict[int, int] = field(default_factory=dict)
    definitions: dict[int, Instruction] = field(default_factory=dict)
    texts: tuple[SourceText, ...] = ()  # OpSource (+ OpSourceContinued) texts
    debug_sources: dict[int, tuple[str | None, tuple[SourceText, ...]]] = field(
        default_factory=dict
    )
    # OpLine, OpNoLine, DebugLine, DebugNoLine and OpFunctionEnd, with their positions.
    line_changes: list[tuple[int, Instruction]] = field(default_factory=list)


def _scan(instructions: list[Instruction]) -> _Tables:
    tables = _Tables()
    strings = tables.strings
    debug_sets: set[int] = set()
    op_sources: list[tuple[str | None, list[str]]] = []
    debug_sources: dict[int, tuple[str | None, list[str]]] = {}
    last_debug_source: list[str] | None = None
    definitions = tables.definitions
    for position, instruction in enumerate(instructions):
        opcode, operands = instruction.opcode, instruction.operands
        if opcode in DEFINITIONS_NEEDED:
            definitions[operands[RESULT_INDEX[opcode]]] = instruction
        if opcode not in _SCANNED:
            continue
        if opcode == Op.String:
            strings[operands[0]] = decode_string(operands, 1)[0]
        elif opcode == Op.Name and len(operands) > 1:
            tables.names[operands[0]] = decode_string(operands, 1)[0]
        elif opcode == Op.ExtInstImport:
            if decode_string(operands, 1)[0] == DEBUG_INFO_SET:
                debug_sets.add(operands[0])
        elif opcode == Op.Constant and len(operands) >= 3:
            tables.constants[operands[1]] = operands[2]
        elif opcode == Op.Source:
            file = strings.get(operands[2]) if len(operands) > 2 else None
            source_parts = [decode_string(operands, 3)[0]] if len(operands) > 3 else []
            op_sources.append((file, source_parts))
        elif opcode == Op.SourceContinued and op_sources:
            op_sources[-1][1].append(decode_string(operands, 0)[0])
        elif opcode == Op.ExtInst and len(operands) >= 4 and operands[2] in debug_sets:
            number = operands[3]
            if number == DEBUG_SOURCE and len(operands) >= 5:
                embedded = strings.get(operands[5]) if len(operands) > 5 else None
                debug_parts = [] if embedded is None else [embedded]
                debug_sources[operands[1]] = (strings.get(operands[4]), debug_parts)
                last_debug_source = debug_parts
            elif number == DEBUG_SOURCE_CONTINUED and last_debug_source is not None:
                last_debug_source.append(strings.get(operands[4], ""))
            elif number in (DEBUG_LINE, DEBUG_NO_LINE):
                tables.line_changes.append((position, instruction))
        elif opcode in (Op.Line, Op.NoLine, Op.FunctionEnd):
            tables.line_changes.append((position, instruction))
    tables.texts = tuple(
        SourceText.parse(file, "".join(parts)) for file, parts in op_sources if parts
    )
    tables.debug_sources = {
        id_: (file, (SourceText.parse(file, "".join(parts)),) if parts else ())
        for id_, (file, parts) in debug_sources.items()
    }
    return tables


def _line_marks(count: int, tables: _Tables) -> list[LineMark | None]:
    """The source position in force at each of ``count`` instructions."""
    marks: list[LineMark | None] = [None] * count
    current: LineMark | None = None
    start = 0
    for position, instruction in tables.line_changes:
        marks[start:position] = [current] * (position - start)
        start = position
        operands = instruction.operands
        if instruction.opcode == Op.Line:
            file = tables.strings.get(operands[0])
            preferred = tuple(text for text in tables.texts if text.file == file)
            others = tuple(text for text in tables.texts if text.file != file)
            line = operands[1]
            current = LineMark(file, line, operands[2], preferred + others) if line else None
        elif instruction.opcode == Op.ExtInst and operands[3] == DEBUG_LINE:
            current = _debug_line(operands, tables)
        elif instruction.opcode == Op.FunctionEnd:
            # The position in force reaches OpFunctionEnd, not the next function.
            marks[position] = current
            start = position + 1
            current = None
        else:
            current = None
    marks[start:] = [current] * (count - start)
    return marks


def _debug_line(operands: list[int], tables: _Tables) -> LineMark | None:
    """DebugLine Source LineStart LineEnd ColumnStart ColumnEnd (ids of constants)."""
    if len(operands) < 9:
        return None
    file, own_texts = tables.debug_sources.get(operands[4], (None, ()))
    line = tables.constants.get(operands[5])
    column = tables.constants.get(operands[7], 0)
    if not line:
        return None  # glslang writes line 0 for compiler-generated code
    return LineMark(file, line, column, own_texts + tables.texts)


@functools.lru_cache(maxsize=CACHED_SHADERS)
def _cached(words: tuple[int, ...]) -> ShaderInfo:
    return ShaderInfo(words)


# The layer hands the same tuple for a shader every time: find it by identity before hashing
# its contents (about 1 ms for a 1 MiB module). The entry keeps the tuple alive, so its id
# cannot be reused while it is here.
_by_identity: dict[int, tuple[Sequence[int], ShaderInfo]] = {}
_by_identity_lock = allocate_lock()  # read-backs of several queues may run at once


def shader_info(words: Sequence[int]) -> ShaderInfo:
    """The (cached) info of a shader's original words."""
    entry = _by_identity.get(id(words))
    if entry is not None and entry[0] is words:
        return entry[1]
    info = _cached(words if isinstance(words, tuple) else tuple(words))
    if isinstance(words, tuple):
        with _by_identity_lock:
            if len(_by_identity) >= CACHED_SHADERS:
                del _by_identity[next(iter(_by_identity))]
            _by_identity[id(words)] = (words, info)
    return info


def clear_cache() -> None:
    """Forget every shader (tests and benchmarks measure the cold path)."""
    with _by_identity_lock:
        _by_identity.clear()
    _cached.cache_clear()
