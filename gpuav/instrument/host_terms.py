"""Tests the layer makes for a shader, on the host, once per draw or dispatch.

An entry function whose every check a test at its start could decide runs unchecked where the
test passes (``function_versions``). Made in the shader, that test costs every invocation a
read of each binding's table; on an H100 those reads cost more than the checks they replace.
Most such tests depend only on what the layer itself knows of the action: what it writes into
the action's bound-sets area (``descriptor_state``: each binding's length and summary, and from
the summary a buffer's bound range) and the push constants the app pushed. So the pass
describes the test instead, as *terms* of the classes below, and the layer works them out when
it records the action and writes one *verdict* word into the area: a bit per shader stage
whose terms all hold. The shader reads that word and nothing else.

This module is the contract between the pass, which makes the terms, and the layer, which
evaluates them (``verdict_of``) and keeps them with a module's outcome (``to_rows``,
``from_rows``). Every evaluation errs one way: where what the layer knows does not show that a
term holds (a set it does not track, a binding of many buffers, a range it does not know, a
word never pushed), the term fails and the shader runs its checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
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


# -- evaluation ---------------------------------------------------------------------------------

# Works an action's verdict word out from its bound-sets area, the bytes the app pushed and a
# bit per 32-bit word it pushed (the other words are undefined).
Verdict = Callable[[Sequence[int], bytes, int], int]
_Check = Callable[[Sequence[int], bytes, int], bool]
_Value = Callable[[Sequence[int], bytes, int], "int | None"]


def pushed_offsets(terms: Sequence[Term]) -> set[int]:
    """The byte offsets of the push constants ``terms`` read: they change with each push."""
    found: set[int] = set()
    for term in terms:
        _collect_pushed(term, found)
    return found


def _collect_pushed(item: Term | Bound | int, found: set[int]) -> None:
    if isinstance(item, Pushed):
        found.add(item.offset)
    elif not isinstance(item, int):
        for field in fields(item):
            _collect_pushed(getattr(item, field.name), found)


def verdict_of(stages: Sequence[tuple[int, Sequence[Term]]]) -> Verdict:
    """The verdict word for an action of a pipeline with these (stage bit, terms) pairs: the
    bits of the stages whose terms all hold. Made once per pipeline, as closures, since a
    pipeline whose terms read push constants works its verdict out again after each push."""
    checks = [(bit, [_check(term) for term in terms]) for bit, terms in stages]

    def word(area: Sequence[int], pushed: bytes, pushed_words: int) -> int:
        found = 0
        for bit, stage_checks in checks:
            if all(check(area, pushed, pushed_words) for check in stage_checks):
                found |= bit
        return found

    return word


def _check(term: Term) -> _Check:
    value = _value(term.bound if not isinstance(term, Fits) else term.end)
    if isinstance(term, Less):
        limit = term.limit

        def less(area: Sequence[int], pushed: bytes, words: int) -> bool:
            found = value(area, pushed, words)
            return found is not None and found < limit

        return less
    at = _entry_word(term.descriptor_set, term.binding)
    if at is None:
        return _never
    if isinstance(term, Fits):
        forbidden = term.forbidden

        def fits(area: Sequence[int], pushed: bytes, words: int) -> bool:
            summary = area[at + 2]
            end = value(area, pushed, words)
            if area[at] == NO_STATE or end is None or summary == 0 or summary & forbidden:
                return False
            return end == 0 or (area[at + 1] == 1 and _fits_range(summary, end))

        return fits
    if isinstance(term, Below):

        def below(area: Sequence[int], pushed: bytes, words: int) -> bool:
            found = value(area, pushed, words)
            return area[at] != NO_STATE and found is not None and found < area[at + 1]

        return below
    if term.index != 0:
        return _never

    def within(area: Sequence[int], pushed: bytes, words: int) -> bool:
        found = value(area, pushed, words)
        summary = area[at + 2]
        return (
            area[at] != NO_STATE
            and found is not None
            and area[at + 1] == 1
            and summary != 0
            and _fits_range(summary, found)
        )

    return within


def _never(area: Sequence[int], pushed: bytes, words: int) -> bool:
    return False


def _entry_word(descriptor_set: int, binding: int) -> int | None:
    """Where a binding's entry (start, length, summary) is in the action's table; None where
    the table does not have it."""
    if not (0 <= descriptor_set < TABLE_SETS and 0 <= binding < TABLE_BINDINGS):
        return None
    return table_entry_word(descriptor_set, binding)


def _range(word: int) -> int | None:
    """The bytes a buffer descriptor's word says are bound: None where it does not say (the
    shader's checks pass then too), 0 where the descriptor may not be used."""
    if word == 0:
        return 0
    return word - RANGE_BASE if RANGE_BASE <= word < RANGE_UNKNOWN else None


def _fits_range(word: int, end: int) -> bool:
    bound = _range(word)
    return bound is None or end <= bound


def _value(bound: Bound) -> _Value:
    """The bound's value for an action; None where it does not hold (it wraps past 32 bits,
    a signed value is negative, a length or a push constant cannot be known)."""
    if isinstance(bound, Const):
        constant = bound.value
        return lambda area, pushed, words: constant
    if isinstance(bound, ArrayLength):
        return _array_length(bound)
    if isinstance(bound, Pushed):
        return _pushed(bound.offset)
    if isinstance(bound, (NotNegative, MinusOne, Shifted)):
        return _unary(bound)
    left, right = _value(bound.left), _value(bound.right)
    add = isinstance(bound, Sum)

    def combined(area: Sequence[int], pushed: bytes, words: int) -> int | None:
        a, b = left(area, pushed, words), right(area, pushed, words)
        if a is None or b is None:
            return None
        found = a + b if add else a * b
        return None if found > _MASK else found

    return combined


def _array_length(bound: ArrayLength) -> _Value:
    at = _entry_word(bound.descriptor_set, bound.binding)
    offset, stride = bound.offset, bound.stride

    def length(area: Sequence[int], pushed: bytes, words: int) -> int | None:
        if at is None or bound.index != 0 or area[at] == NO_STATE or area[at + 1] != 1:
            return None
        bytes_ = _range(area[at + 2])
        if bytes_ is None or bytes_ < offset:
            return None
        return (bytes_ - offset) // stride

    return length


def _pushed(offset: int) -> _Value:
    word, misaligned = divmod(offset, 4)

    def pushed_word(area: Sequence[int], pushed: bytes, words: int) -> int | None:
        if misaligned or not words >> word & 1:
            return None
        return int.from_bytes(pushed[offset : offset + 4], "little")

    return pushed_word


def _unary(bound: NotNegative | MinusOne | Shifted) -> _Value:
    inner = _value(bound.bound)
    shift = bound.shift if isinstance(bound, Shifted) else 0
    negative_fails = isinstance(bound, NotNegative)
    step = 1 if isinstance(bound, MinusOne) else 0

    def unary(area: Sequence[int], pushed: bytes, words: int) -> int | None:
        found = inner(area, pushed, words)
        if found is None or (negative_fails and found >= _NEGATIVE):
            return None
        return ((found - step) & _MASK) >> shift

    return unary


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
_BOUND_FIELDS = frozenset({"bound", "end", "left", "right"})  # the others are counts
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
    for field, value in zip(fields(kind), values, strict=True):
        if field.name in _BOUND_FIELDS:
            if type(value) not in _BOUND_TAGS:
                raise ValueError(f"{row[0]}'s {field.name} is no bound")
        elif not isinstance(value, int) or value < 0:
            raise ValueError(f"{row[0]}'s {field.name} is no count")
    item: Term | Bound = kind(*values)
    if isinstance(item, ArrayLength) and item.stride == 0:
        raise ValueError("an array length of stride 0")
    return item
