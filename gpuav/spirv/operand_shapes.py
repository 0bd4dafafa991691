"""Remembered operand layouts of the instructions that the fixed shapes do not cover.

Names, decorations, strings, constants and extended instructions (four in ten of glslang's
instructions) need a grammar walk to find where their ids and strings are. Their layouts
repeat: for the opcodes in ``SHAPE_OPERANDS`` the layout depends only on the operand count
and a few operand values (the decoration, the execution mode, the extended instruction...),
so each layout is walked once and kept, for the reader (which still checks every id's range
and every string's end) and for def-use.
"""

from __future__ import annotations

from functools import cache
from typing import Final, NamedTuple

from gpuav.spirv.grammar import (
    ID_KINDS,
    INSTRUCTIONS,
    ONE_WORD_ENUMS,
    OPERAND_KINDS,
    SINGLE_WORD_LITERALS,
    Op,
)
from gpuav.spirv.instruction import string_end
from gpuav.spirv.operand_walker import OperandError, WalkContext, walk_operands

# Opcode -> operands that, with the operand count, decide the layout. For OpExtInst the set
# is keyed by its name, for OpConstant by the width of its type (see ``shape_key``).
SHAPE_OPERANDS: Final[dict[int, tuple[int, ...]]] = {
    Op.Name: (),
    Op.MemberName: (),
    Op.String: (),
    Op.Constant: (),
    Op.SpecConstant: (),
    Op.ModuleProcessed: (),
    Op.Extension: (),
    Op.SourceExtension: (),
    Op.ExtInstImport: (),
    Op.Source: (0,),
    Op.Decorate: (1,),
    Op.MemberDecorate: (2,),
    Op.ExecutionMode: (1,),
    Op.LoopMerge: (2,),
    Op.ExtInst: (3,),
}
# Layouts are few (hundreds over a large corpus); the bound keeps hostile input from
# growing the table without end.
MAX_SHAPES: Final = 4096
_NUMBER_KINDS: Final = SINGLE_WORD_LITERALS | {"LiteralContextDependentNumber"}


@cache
def _has_ids(kind: str) -> bool:
    """Whether an operand of this kind can hold an id (in itself, its parts or parameters)."""
    if kind in ID_KINDS:
        return True
    category, data = OPERAND_KINDS.get(kind, ("Literal", None))
    if category == "Composite" and isinstance(data, tuple):
        return any(_has_ids(base) for base in data)
    if isinstance(data, dict):
        return any(_has_ids(parameter) for info in data.values() for parameter in info[1])
    return False


def _id_prefixes() -> dict[int, tuple[tuple[int, ...], int, int, frozenset[int]]]:
    """opcode -> (id positions, their count of words, enumerant position or -1, enumerants
    with id parameters) for opcodes whose ids are always in a leading run of one-word
    operands: what follows holds no id (strings, literal numbers), or is a last enumerant
    (a decoration, an execution mode) that holds ids only for the enumerants listed."""
    prefixes: dict[int, tuple[tuple[int, ...], int, int, frozenset[int]]] = {}
    for opcode in (*SHAPE_OPERANDS, Op.EntryPoint):
        specs = INSTRUCTIONS[opcode][2]
        ids: list[int] = []
        at = 0
        while at < len(specs) and not specs[at][1]:
            kind = specs[at][0]
            if not (kind in ID_KINDS or kind in SINGLE_WORD_LITERALS or kind in ONE_WORD_ENUMS):
                break
            if kind in ID_KINDS:
                ids.append(at)
            at += 1
        rest = specs[at:]
        if not any(_has_ids(kind) for kind, _quantifier in rest):
            prefixes[opcode] = (tuple(ids), at, -1, frozenset())
        elif len(rest) == 1 and not rest[0][1]:
            enumerants = OPERAND_KINDS.get(rest[0][0], ("", None))[1]
            if isinstance(enumerants, dict):
                with_ids = frozenset(
                    value
                    for value, entry in enumerants.items()
                    if any(_has_ids(parameter) for parameter in entry[1])
                )
                prefixes[opcode] = (tuple(ids), at + 1, at, with_ids)
    return prefixes


# Only opcodes that the fixed shapes leave to a walk need this.
ID_PREFIXES: Final = _id_prefixes()


# enumerant -> (parameter words, offsets of the id parameters among them)
EnumerantShapes = dict[int, tuple[int, tuple[int, ...]]]


def _enumerant_last() -> dict[int, tuple[tuple[int, ...], int, EnumerantShapes]]:
    """opcode -> (id positions before the enumerant, its position, enumerant -> (parameter
    words, id offsets among them)) for OpDecorate, OpMemberDecorate, OpExecutionMode: the
    enumerants whose parameters are all one word, so that the length says it all."""
    found: dict[int, tuple[tuple[int, ...], int, EnumerantShapes]] = {}
    for opcode, (ids, _words, enumerant_at, _with_ids) in ID_PREFIXES.items():
        if enumerant_at < 0:
            continue
        enumerants = OPERAND_KINDS[INSTRUCTIONS[opcode][2][enumerant_at][0]][1]
        assert isinstance(enumerants, dict)
        one_word = ID_KINDS | SINGLE_WORD_LITERALS | ONE_WORD_ENUMS
        found[opcode] = (
            ids,
            enumerant_at,
            {
                value: (len(entry[1]), tuple(i for i, k in enumerate(entry[1]) if k in ID_KINDS))
                for value, entry in enumerants.items()
                if all(kind in one_word for kind in entry[1])
            },
        )
    return found


_ENUMERANT_LAST: Final = _enumerant_last()


def prefix_ids(opcode: int, operands: list[int]) -> tuple[int, ...] | None:
    """The id positions when the grammar alone says where they are (no walk), else None.

    For instructions already known to be well formed: OpName's target, OpConstant's type and
    result, OpDecorate's target unless the decoration takes id parameters...
    """
    prefix = ID_PREFIXES.get(opcode)
    if prefix is None:
        return None
    ids, words, enumerant_at, with_ids = prefix
    if len(operands) < words or (enumerant_at >= 0 and operands[enumerant_at] in with_ids):
        return None
    return ids


class Shape(NamedTuple):
    ids: tuple[int, ...]  # operand indices holding ids
    strings: tuple[tuple[int, int], ...]  # (first word, word after the nul) of each string


_shapes: dict[tuple[object, ...], Shape | None] = {}


def shape_key(opcode: int, operands: list[int], context: WalkContext) -> tuple[object, ...] | None:
    """What decides the layout, in terms that mean the same in every module; None if unknown."""
    deciding = SHAPE_OPERANDS.get(opcode)
    if deciding is None:
        return None
    length = len(operands)
    if opcode == Op.ExtInst:
        name = context.imports.get(operands[2]) if length > 3 else None
        return None if name is None else (opcode, length, name, operands[3])
    if opcode == Op.Constant or opcode == Op.SpecConstant:
        return (opcode, length, context.widths.get(operands[0]) if length else None)
    return (opcode, length, *[operands[at] for at in deciding if at < length])


def learn(opcode: int, operands: list[int], context: WalkContext) -> Shape:
    """Walk the grammar (raising OperandError) and return the layout it found."""
    ids: list[int] = []
    strings: list[tuple[int, int]] = []
    enums: list[int] = []

    def visit(kind: str, first: int, words: int) -> None:
        if kind in ID_KINDS:
            ids.append(first)
        elif kind == "LiteralString":
            strings.append((first, first + words))
        elif kind not in _NUMBER_KINDS:
            enums.append(first)

    walk_operands(opcode, operands, context, visit)
    shape = Shape(tuple(ids), tuple(strings))
    key = shape_key(opcode, operands, context)
    if key is not None and len(_shapes) < MAX_SHAPES:
        # An enumerant whose value is not part of the key may bring other parameters.
        deciding = SHAPE_OPERANDS[opcode]
        _shapes[key] = shape if all(at in deciding for at in enums) else None
    return shape


def checked_shape(opcode: int, operands: list[int], context: WalkContext) -> Shape:
    """The layout of a well-formed instruction; OperandError for one the grammar rejects.

    A remembered layout is used only when every id is in range and every string ends where
    it did; anything else is walked again, so the errors are the walk's own.
    """
    key = shape_key(opcode, operands, context)
    shape = None if key is None else _shapes.get(key)
    if shape is not None:
        bound = context.bound
        for at in shape.ids:
            if not 0 < operands[at] < bound:
                break
        else:
            for start, end in shape.strings:
                try:
                    if string_end(operands, start) != end:
                        break
                except ValueError:
                    break
            else:
                return shape
    return learn(opcode, operands, context)


def _string_last() -> dict[int, tuple[tuple[int, ...], int]]:
    """opcode -> (id positions, first word of the string) for instructions made of one-word
    ids and literals and then one string (OpName, OpMemberName, OpString, OpExtension...)."""
    found: dict[int, tuple[tuple[int, ...], int]] = {}
    for opcode, info in INSTRUCTIONS.items():
        specs = info[2]
        if not specs or specs[-1] != ("LiteralString", ""):
            continue
        prefix = specs[:-1]
        if all(not q and (k in ID_KINDS or k in SINGLE_WORD_LITERALS) for k, q in prefix):
            ids = tuple(at for at, (kind, _q) in enumerate(prefix) if kind in ID_KINDS)
            found[opcode] = (ids, len(prefix))
    return found


_STRING_LAST: Final = _string_last()
_CONSTANTS: Final = frozenset({Op.Constant, Op.SpecConstant})


def _string_fills(words: list[int], start: int) -> bool:
    """Whether the string at ``start`` ends in the last word: its nul is there, not before.

    A word holds a 0 byte exactly when (word - 0x01010101) & ~word & 0x80808080 is nonzero.
    """
    last = len(words) - 1
    if last - start > 8:  # long text (OpSource): let bytes.find do the scanning
        try:
            return string_end(words, start) == last + 1
        except ValueError:
            return False
    for at in range(start, last):
        word = words[at]
        if (word - 0x01010101) & ~word & 0x80808080:
            return False
    word = words[last]
    return bool((word - 0x01010101) & ~word & 0x80808080)


def check(opcode: int, operands: list[int], context: WalkContext) -> None:
    """Raise OperandError unless the instruction is well formed, as a grammar walk would.

    Instructions ending in one string, decorations and execution modes of one-word parameters
    and numeric constants are checked directly; the rest
    through their remembered layout (``checked_shape``).
    """
    bound = context.bound
    simple = _STRING_LAST.get(opcode)
    if simple is not None:
        ids, start = simple
        if (
            len(operands) > start
            and all(0 < operands[at] < bound for at in ids)
            and _string_fills(operands, start)
        ):
            return
    elif opcode in _ENUMERANT_LAST:
        ids, at, parameters = _ENUMERANT_LAST[opcode]
        shape = parameters.get(operands[at]) if len(operands) > at else None
        if (
            shape is not None
            and len(operands) == at + 1 + shape[0]
            and all(0 < operands[position] < bound for position in ids)
            and all(0 < operands[at + 1 + offset] < bound for offset in shape[1])
        ):
            return
    elif opcode in _CONSTANTS and len(operands) > 2:
        width = context.widths.get(operands[0])
        expected = 1 if width is None or width <= 32 else (width + 31) // 32
        if len(operands) == 2 + expected and 0 < operands[0] < bound and 0 < operands[1] < bound:
            return
    checked_shape(opcode, operands, context)


def id_positions(opcode: int, operands: list[int], context: WalkContext) -> tuple[int, ...]:
    """Operand indices holding ids, for an instruction already known to be well formed."""
    key = shape_key(opcode, operands, context)
    shape = None if key is None else _shapes.get(key)
    return (shape or learn(opcode, operands, context)).ids


__all__ = [
    "ID_PREFIXES",
    "MAX_SHAPES",
    "SHAPE_OPERANDS",
    "OperandError",
    "Shape",
    "check",
    "checked_shape",
    "id_positions",
    "prefix_ids",
]
