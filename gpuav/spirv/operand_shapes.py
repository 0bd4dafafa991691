"""Remembered operand layouts of the instructions that the fixed shapes do not cover.

Names, decorations, strings, constants and extended instructions (four in ten of glslang's
instructions) need a grammar walk to find where their ids and strings are. Their layouts
repeat: for the opcodes in ``SHAPE_OPERANDS`` the layout depends only on the operand count
and a few operand values (the decoration, the execution mode, the extended instruction...),
so each layout is walked once and kept, for the reader (which still checks every id's range
and every string's end) and for def-use.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from gpuav.spirv.grammar import ID_KINDS, SINGLE_WORD_LITERALS, Op
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


def id_positions(opcode: int, operands: list[int], context: WalkContext) -> tuple[int, ...]:
    """Operand indices holding ids, for an instruction already known to be well formed."""
    key = shape_key(opcode, operands, context)
    shape = None if key is None else _shapes.get(key)
    return (shape or learn(opcode, operands, context)).ids


__all__ = ["MAX_SHAPES", "SHAPE_OPERANDS", "OperandError", "Shape", "checked_shape", "id_positions"]
