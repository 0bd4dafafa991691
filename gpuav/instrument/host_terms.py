"""Tests the layer makes for a shader, on the host, once per draw or dispatch.

An entry function whose every check a test at its start could decide runs unchecked where the
test passes (``function_versions``). Made in the shader, that test costs every invocation a
read of each binding's table; on an H100 those reads cost more than the checks they replace.
Most such tests depend only on what the layer itself writes into the action's bound-sets area
(``descriptor_state``): each binding's length and summary, and from the summary a buffer's
bound range. So the pass describes the test instead, as *terms* of the classes below, and the
layer works them out when it records the action and writes one *verdict* word into the area:
a bit per shader stage whose terms all hold. The shader reads that word and nothing else.

This module is the contract between the pass, which makes the terms, and the layer, which
evaluates them (``verdict``) and keeps them with a module's outcome (``to_rows``,
``from_rows``). Every evaluation errs one way: where the area does not show that a term holds
(a set the layer does not track, a binding of many buffers, a range it does not know), the term
fails and the shader runs its checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from gpuav.instrument.descriptor_state import (
    NO_STATE,
    RANGE_BASE,
    RANGE_UNKNOWN,
    TABLE_BINDINGS,
    TABLE_SETS,
    table_entry_word,
)

_MASK = 0xFFFF_FFFF
_NEGATIVE = 0x8000_0000
# The stage bit of each execution model whose function can have a host verdict (its
# VkShaderStageFlagBits): one shader per stage in a pipeline. Ray-tracing stages have many.
STAGE_BITS = {
    0: 0x1,  # Vertex
    1: 0x2,  # TessellationControl
    2: 0x4,  # TessellationEvaluation
    3: 0x8,  # Geometry
    4: 0x10,  # Fragment
    5: 0x20,  # GLCompute
    5267: 0x40,  # TaskNV
    5364: 0x40,  # TaskEXT
    5268: 0x80,  # MeshNV
    5365: 0x80,  # MeshEXT
}


# -- bounds: what a value is at most ------------------------------------------------------------


@dataclass(frozen=True)
class Const:
    value: int


@dataclass(frozen=True)
class ArrayLength:
    """Elements of a runtime array at byte ``offset`` of the buffer bound to a descriptor,
    ``stride`` bytes each, as the driver measures it from the bound range."""

    descriptor_set: int
    binding: int
    index: int
    offset: int
    stride: int


@dataclass(frozen=True)
class Pushed:
    """The 32-bit word at byte ``offset`` of the push constants the app pushed last."""

    offset: int


@dataclass(frozen=True)
class MinusOne:
    bound: Bound


@dataclass(frozen=True)
class Shifted:
    bound: Bound
    shift: int


@dataclass(frozen=True)
class Sum:
    left: Bound
    right: Bound


@dataclass(frozen=True)
class Product:
    left: Bound
    right: Bound


@dataclass(frozen=True)
class NotNegative:
    """A signed index's bound: it holds only below 2^31."""

    bound: Bound


Bound = Const | ArrayLength | Pushed | MinusOne | Shifted | Sum | Product | NotNegative


# -- terms: what must hold ----------------------------------------------------------------------


@dataclass(frozen=True)
class Fits:
    """Every descriptor of the binding is usable by the access (none of the ``forbidden``
    bits) and, where ``end`` is above 0, bound to at least ``end`` bytes."""

    descriptor_set: int
    binding: int
    forbidden: int
    end: Bound


@dataclass(frozen=True)
class Below:
    """``bound`` is below the binding's length."""

    bound: Bound
    descriptor_set: int
    binding: int


@dataclass(frozen=True)
class Within:
    """``bound`` bytes at most are read of the descriptor's buffer."""

    bound: Bound
    descriptor_set: int
    binding: int
    index: int


@dataclass(frozen=True)
class Less:
    """``bound`` is below a constant ``limit``."""

    bound: Bound
    limit: int


Term = Fits | Below | Within | Less
# A module's entry functions with an unchecked copy: (entry point name, stage bit, terms).
EntryVerdicts = tuple[tuple[str, int, tuple[Term, ...]], ...]
# A pipeline's: (stage bit, terms).
StageTerms = tuple[tuple[int, tuple[Term, ...]], ...]


# -- evaluation ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActionState:
    """What an action's terms are worked out from: its bound-sets ``area``, and the push
    constants the app pushed before it, ``pushed`` bytes of which the words with a bit in
    ``pushed_words`` were pushed (the others are undefined)."""

    area: Sequence[int]
    pushed: bytes = b""
    pushed_words: int = 0


def reads_pushed(terms: Sequence[Term]) -> bool:
    """Whether ``terms`` read a push constant: their value changes with each push."""
    return any(_reads_pushed(term) for term in terms)


def _reads_pushed(item: Term | Bound | int) -> bool:
    if isinstance(item, int):
        return False
    return isinstance(item, Pushed) or any(
        _reads_pushed(getattr(item, field.name)) for field in fields(item)
    )


def verdict(stages: Sequence[tuple[int, Sequence[Term]]], action: ActionState) -> int:
    """The verdict word for an action whose pipeline has these (stage bit, terms) pairs: the
    bits of the stages whose terms all hold."""
    word = 0
    for bit, terms in stages:
        if all(_holds(term, action) for term in terms):
            word |= bit
    return word


def _holds(term: Term, action: ActionState) -> bool:
    if isinstance(term, Less):
        value = _value(term.bound, action)
        return value is not None and value < term.limit
    entry = _entry(action.area, term.descriptor_set, term.binding)
    if entry is None:
        return False
    size, summary = entry
    if isinstance(term, Fits):
        end = _value(term.end, action)
        if end is None or summary == 0 or summary & term.forbidden:
            return False
        return end == 0 or (size == 1 and _fits_range(summary, end))
    if isinstance(term, Below):
        value = _value(term.bound, action)
        return value is not None and value < size
    value = _value(term.bound, action)
    return (
        value is not None
        and term.index == 0
        and size == 1
        and summary != 0
        and _fits_range(summary, value)
    )


def _entry(area: Sequence[int], descriptor_set: int, binding: int) -> tuple[int, int] | None:
    """(length, summary) of a binding from the action's table, None where the table does not
    have it or the layer does not track its set."""
    if not (0 <= descriptor_set < TABLE_SETS and 0 <= binding < TABLE_BINDINGS):
        return None
    at = table_entry_word(descriptor_set, binding)
    if area[at] == NO_STATE:
        return None
    return area[at + 1], area[at + 2]


def _range(word: int) -> int | None:
    """The bytes a buffer descriptor's word says are bound: None where it does not say (the
    shader's checks pass then too), 0 where the descriptor may not be used."""
    if word == 0:
        return 0
    return word - RANGE_BASE if RANGE_BASE <= word < RANGE_UNKNOWN else None


def _fits_range(word: int, end: int) -> bool:
    bound = _range(word)
    return bound is None or end <= bound


def _value(bound: Bound, action: ActionState) -> int | None:
    """The bound's value for this action; None where it does not hold (it wraps past 32 bits,
    a signed value is negative, a length or a push constant cannot be known)."""
    if isinstance(bound, Const):
        return bound.value
    if isinstance(bound, ArrayLength):
        entry = _entry(action.area, bound.descriptor_set, bound.binding)
        if entry is None or bound.index != 0 or entry[0] != 1:
            return None
        bytes_ = _range(entry[1])
        if bytes_ is None or bytes_ < bound.offset:
            return None
        return (bytes_ - bound.offset) // bound.stride
    if isinstance(bound, Pushed):
        word, misaligned = divmod(bound.offset, 4)
        if misaligned or not action.pushed_words >> word & 1:
            return None
        return int.from_bytes(action.pushed[bound.offset : bound.offset + 4], "little")
    if isinstance(bound, NotNegative):
        value = _value(bound.bound, action)
        return None if value is None or value >= _NEGATIVE else value
    if isinstance(bound, MinusOne):
        value = _value(bound.bound, action)
        return None if value is None else (value - 1) & _MASK
    if isinstance(bound, Shifted):
        value = _value(bound.bound, action)
        return None if value is None else value >> bound.shift
    left, right = _value(bound.left, action), _value(bound.right, action)
    if left is None or right is None:
        return None
    combined = left + right if isinstance(bound, Sum) else left * right
    return None if combined > _MASK else combined


# -- rows: terms as JSON lists, as a module's outcome keeps them --------------------------------

_BOUND_TAGS: dict[type, str] = {
    Const: "c",
    ArrayLength: "len",
    Pushed: "push",
    MinusOne: "m1",
    Shifted: "shr",
    Sum: "add",
    Product: "mul",
    NotNegative: "nn",
}
_TERM_TAGS: dict[type, str] = {Fits: "fits", Below: "below", Within: "within", Less: "less"}
_BY_TAG: dict[str, type] = {tag: kind for kind, tag in (*_BOUND_TAGS.items(), *_TERM_TAGS.items())}


def to_rows(terms: Sequence[Term]) -> list[object]:
    """``terms`` as JSON-ready lists: a tag, then each field (a bound as a list too)."""
    return [_row(term) for term in terms]


def _row(item: Term | Bound) -> list[object]:
    tag = _TERM_TAGS.get(type(item)) or _BOUND_TAGS[type(item)]
    values = [getattr(item, field.name) for field in fields(item)]
    return [tag, *(value if isinstance(value, int) else _row(value) for value in values)]


def from_rows(rows: object) -> tuple[Term, ...]:
    """Terms from ``to_rows``' lists; raises ``ValueError`` or ``TypeError`` for others."""
    if not isinstance(rows, list):
        raise TypeError("terms")
    terms = tuple(_item(row) for row in rows)
    if not all(type(term) in _TERM_TAGS for term in terms):
        raise ValueError("a bound where a term belongs")
    return terms  # type: ignore[return-value]


def _item(row: object) -> Term | Bound:
    if not isinstance(row, list) or not row or not isinstance(row[0], str):
        raise TypeError("a term or bound row")
    kind = _BY_TAG.get(row[0])
    if kind is None:
        raise ValueError(f"unknown tag {row[0]!r}")
    values = [value if isinstance(value, int) else _item(value) for value in row[1:]]
    if len(values) != len(fields(kind)):
        raise ValueError(f"{row[0]} takes {len(fields(kind))} fields")
    if any(isinstance(value, int) and value < 0 for value in values):
        raise ValueError(f"a negative field in {row[0]}")
    item: Term | Bound = kind(*values)
    if isinstance(item, ArrayLength) and item.stride == 0:
        raise ValueError("an array length of stride 0")
    return item
