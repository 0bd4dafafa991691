"""Instrumented words whose shader id is written in afterwards (issue 17 target 2).

Every record a check writes carries the layer's shader id, which the pass puts in the module
as a 32-bit unsigned ``OpConstant``. The pass runs with a placeholder for it: a value no
constant of the app's module holds, so the constant the pass makes for it is its own and not
shared with any of the app's. The word that holds its value is the module's *slot*: writing
an id there gives the words the pass would give for that id, so one instrumentation serves
every id (the layer keeps it by content across modules, devices and processes). The
instrumented words are then the same for the same words, options and id, whatever the
app's own constants are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuav.instrument.host_terms import EntryVerdicts
from gpuav.spirv.grammar import Op
from gpuav.spirv.module import Module

HEADER_WORDS = 5
_FIRST_PLACEHOLDER = 0xC0DE_5EED
_PLACEHOLDER_STEP = 0x0101_0101
_CONSTANT_WORD_COUNT = 4  # OpConstant of 32 bits: opcode word, result type, result id, value


@dataclass(frozen=True)
class SlottedWords:
    """Instrumented words with ``placeholder`` in their shader-id ``slots`` (none when no
    record is written)."""

    words: list[int]
    placeholder: int
    slots: tuple[int, ...]
    # the entry functions with an unchecked copy (InstrumentResult.entry_verdicts)
    verdicts: EntryVerdicts = ()

    def with_shader_id(self, shader_id: int) -> list[int]:
        words = list(self.words)
        for slot in self.slots:
            words[slot] = shader_id & 0xFFFF_FFFF
        return words


def placeholder_for(module: Module) -> int:
    """A 32-bit value that no constant or specialization constant of ``module`` holds, the
    same for the same module."""
    held = {
        operand
        for instruction in module.globals
        if instruction.opcode in (Op.Constant, Op.SpecConstant)
        for operand in instruction.operands[2:]
    }
    candidate = _FIRST_PLACEHOLDER
    while candidate in held:
        candidate = (candidate + _PLACEHOLDER_STEP) & 0xFFFF_FFFF
    return candidate


def slotted(
    words: Sequence[int],
    placeholder: int,
    verdicts: EntryVerdicts = (),
) -> SlottedWords:
    """The words with the slot of the 32-bit unsigned constant holding ``placeholder`` (at most
    one: the builder declares each constant once)."""
    uint_types: set[int] = set()
    slots = []
    at = HEADER_WORDS
    while at < len(words):
        word_count = words[at] >> 16
        if word_count == 0:
            break
        opcode = words[at] & 0xFFFF
        if opcode == Op.TypeInt and word_count == 4 and words[at + 2] == 32 and not words[at + 3]:
            uint_types.add(words[at + 1])
        elif (
            opcode == Op.Constant
            and word_count == _CONSTANT_WORD_COUNT
            and words[at + 1] in uint_types
            and words[at + 3] == placeholder
        ):
            slots.append(at + 3)
        elif opcode == Op.Function:
            break  # constants come before the functions
        at += word_count
    return SlottedWords(list(words), placeholder, tuple(slots), verdicts)
