"""Queries over the generated grammar tables, shaped for the reader's and printer's hot paths.

Everything here is derived from grammar_tables.py at import time; nothing is typed by hand.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from gpuav.spirv import grammar_tables
from gpuav.spirv.grammar_tables import *  # noqa: F403  (re-exported: Op, StorageClass, ...)
from gpuav.spirv.grammar_tables import (
    EXTENDED_INSTRUCTION_SETS,
    INSTRUCTIONS,
    OPERAND_KINDS,
)

__all__ = list(grammar_tables.__all__)

ID_KINDS: Final = frozenset({"IdResultType", "IdResult", "IdMemorySemantics", "IdScope", "IdRef"})
SINGLE_WORD_LITERALS: Final = frozenset(
    {"LiteralInteger", "LiteralExtInstInteger", "LiteralSpecConstantOpInteger", "LiteralFloat"}
)

OPCODE_NAMES: Final[dict[int, str]] = {op: info[0] for op, info in INSTRUCTIONS.items()}
OPCODES_BY_NAME: Final[dict[str, int]] = {name: op for op, name in OPCODE_NAMES.items()}


def _positions() -> tuple[dict[int, int], dict[int, int]]:
    """opcode -> operand index of its IdResult, and of its IdResultType, where it has one."""
    results: dict[int, int] = {}
    types: dict[int, int] = {}
    for op, info in INSTRUCTIONS.items():
        for index, (operand_kind, _quantifier) in enumerate(info[2]):
            if operand_kind == "IdResult":
                results[op] = index
            elif operand_kind == "IdResultType":
                types[op] = index
    return results, types


_RESULTS_AND_TYPES = _positions()
RESULT_INDEX: Final[dict[int, int]] = _RESULTS_AND_TYPES[0]
TYPE_INDEX: Final[dict[int, int]] = _RESULTS_AND_TYPES[1]


def _is_one_word_enum(kind: str) -> bool:
    """An enum none of whose enumerants takes parameters occupies exactly one word."""
    category, enumerants = OPERAND_KINDS[kind]
    if category not in ("ValueEnum", "BitEnum") or not isinstance(enumerants, dict):
        return False
    return all(not info[1] for info in enumerants.values())


# Enums none of whose enumerants take parameters: a value newer than our grammar is still
# one word, so it is kept rather than rejected (the same on the fast and the walked path).
ONE_WORD_ENUMS: Final = frozenset(kind for kind in OPERAND_KINDS if _is_one_word_enum(kind))


def _is_one_word(kind: str) -> bool:
    return kind in ID_KINDS or kind in SINGLE_WORD_LITERALS or kind in ONE_WORD_ENUMS


# How the words after an instruction's fixed operands may continue, for the fast path.
TAIL_NONE, TAIL_IDS, TAIL_LITERALS = range(3)


@cache  # 858 opcodes share 156 operand lists: computed once each at import
def _fast_shape(operands: tuple[tuple[str, str], ...]) -> tuple[int, tuple[int, ...] | None, int]:
    """(fixed length, positions of ids or None when all are ids, tail kind).

    The fixed part is the leading run of mandatory one-word operands; it is usable only when
    everything after it is optional, so that an instruction of exactly that length is
    complete. A variadic tail of one-word operands (ids, or literals) can be checked just as
    cheaply. A fixed length of -1 means the reader must always walk the grammar.
    """
    fixed = 0
    id_positions: list[int] = []
    for kind, quantifier in operands:
        if quantifier or not _is_one_word(kind):
            break
        if kind in ID_KINDS:
            id_positions.append(fixed)
        fixed += 1
    tail = operands[fixed:]
    if any(not quantifier for _kind, quantifier in tail):
        return -1, None, TAIL_NONE
    all_ids = len(id_positions) == fixed
    tail_kind = TAIL_NONE
    if len(tail) == 1 and tail[0][1] == "*" and _is_one_word(tail[0][0]):
        tail_kind = TAIL_IDS if tail[0][0] in ID_KINDS else TAIL_LITERALS
    if tail_kind == TAIL_IDS and not all_ids:
        tail_kind = TAIL_NONE
    return fixed, (None if all_ids else tuple(id_positions)), tail_kind


# opcode -> (fixed length, id positions, tail kind, operand index of IdResult or -1)
FAST_SHAPES: Final[dict[int, tuple[int, tuple[int, ...] | None, int, int]]] = {
    op: (*_fast_shape(info[2]), RESULT_INDEX.get(op, -1)) for op, info in INSTRUCTIONS.items()
}


def _ids_only_shapes() -> dict[str, dict[int, tuple[int, bool]]]:
    """set -> instruction -> (fixed id count, variadic ids) for all-id extended instructions."""
    shapes: dict[str, dict[int, tuple[int, bool]]] = {}
    for set_name, instructions in EXTENDED_INSTRUCTION_SETS.items():
        shapes[set_name] = {}
        for number, (_name, operands) in instructions.items():
            kinds = {kind for kind, _quantifier in operands}
            quantifiers = [quantifier for _kind, quantifier in operands]
            if kinds <= {"IdRef"} and "?" not in quantifiers and "*" not in quantifiers[:-1]:
                variadic = bool(quantifiers) and quantifiers[-1] == "*"
                shapes[set_name][number] = (len(operands) - variadic, variadic)
    return shapes


# Extended instructions whose operands are all ids, checked on the reader's fast path.
EXT_INST_ID_SHAPES: Final = _ids_only_shapes()


def enumerant_name(kind: str, value: int) -> str | None:
    entry = OPERAND_KINDS.get(kind)
    if entry is None or not isinstance(entry[1], dict):
        return None
    info = entry[1].get(value)
    return None if info is None else info[0]


def enumerant_value(kind: str, name: str) -> int:
    """The value of an enumerant by its grammar spelling (aliases are not accepted here)."""
    entry = OPERAND_KINDS[kind]
    assert isinstance(entry[1], dict)
    for value, info in entry[1].items():
        if info[0] == name:
            return value
    raise KeyError(f"{kind} has no enumerant {name}")


def enumerant_parameters(kind: str, value: int) -> tuple[str, ...] | None:
    """Parameter operand kinds of one enumerant, or None when the value is unknown."""
    entry = OPERAND_KINDS.get(kind)
    if entry is None or not isinstance(entry[1], dict):
        return None
    info = entry[1].get(value)
    return None if info is None else info[1]


def operand_category(kind: str) -> str:
    return OPERAND_KINDS[kind][0]


def composite_bases(kind: str) -> tuple[str, ...]:
    bases = OPERAND_KINDS[kind][1]
    assert isinstance(bases, tuple)
    return bases


def extended_instruction(
    set_name: str, number: int
) -> tuple[str, tuple[tuple[str, str], ...]] | None:
    instructions = EXTENDED_INSTRUCTION_SETS.get(set_name)
    return None if instructions is None else instructions.get(number)
