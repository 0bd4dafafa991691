"""Property tests: whatever the input, the reader returns a module or raises DecodeError.

Inputs are random bytes, random words, streams of plausible instructions (known opcodes,
small operands, a valid header) and corpus modules with a few mutations (bit flips, changed
word counts, inserted, deleted or duplicated words, swapped instructions, truncation). When
the reader accepts an input, the module must also write back word for word and disassemble
without error: a module the reader lets through is one the rest of gpuav will handle.
Example counts come from the hypothesis profile in tests/conftest.py.
"""

from __future__ import annotations

from array import array

from hypothesis import given
from hypothesis import strategies as st

from gpuav.errors import DecodeError
from gpuav.spirv import read, write
from gpuav.spirv.disassembler import disassemble
from gpuav.spirv.grammar import FAST_SHAPES, INSTRUCTIONS, MAGIC_NUMBER
from tests.spirv.corpus import all_corpus_words

WORD = st.integers(0, 0xFFFFFFFF)
# Mostly small values, so that ids fall under the bound and enumerants are known.
OPERAND = st.one_of(st.integers(0, 40), st.integers(0, 0x10000), WORD)
HEADER_WORDS = 5
# Known opcodes, and a few that are not.
OPCODE = st.sampled_from([*sorted(INSTRUCTIONS), 9, 0x1234, 0xFFFF])
# Evenly spread over 0..0xFFFF: hypothesis draws small integers far more often than others.
SPREAD = st.integers(0, 0xFFFF).map(lambda value: (value * 40503 + 21011) & 0xFFFF)


def check(data: bytes | list[int]) -> None:
    """The property: reading gives a module that round-trips, or a DecodeError."""
    try:
        module = read(data)
    except DecodeError as error:
        assert error.byte_offset >= 0
        assert error.instruction_index is None or error.instruction_index >= 0
        return
    words = write(module)
    original = array("I", data).tolist() if isinstance(data, bytes) else list(data)
    if original[0] != MAGIC_NUMBER:
        swapped = array("I", original)
        swapped.byteswap()
        original = swapped.tolist()
    assert words == original
    origins = [instruction.origin for instruction in module.instructions()]
    assert origins == list(range(len(origins)))
    disassemble(module)
    disassemble(module, friendly_names=False)


@given(st.binary(max_size=512))
def test_random_bytes(data: bytes) -> None:
    check(data)


@given(st.booleans(), st.integers(1, 64), st.lists(WORD, max_size=64))
def test_random_words(valid_header: bool, bound: int, words: list[int]) -> None:
    if valid_header:
        words = [MAGIC_NUMBER, 0x00010000, 0, bound, 0, *words]
    check(words)


# One instruction: (opcode, operands, ill-formed unless 0..6, word count for an ill-formed one).
# A well-formed instruction gets the grammar's count of fixed operands, ids already defined
# and a fresh result id, so that decoding goes past the first few instructions. Few draws per
# instruction keep generation cheap enough for thousands of cases.
INSTRUCTION = st.tuples(
    OPCODE, st.lists(st.integers(0, 40), max_size=8), st.integers(0, 7), st.integers(0, 12)
)


@st.composite
def instruction_stream(draw: st.DrawFn) -> list[int]:
    body: list[int] = []
    next_id = 1
    for opcode, operands, form, count in draw(st.lists(INSTRUCTION, max_size=20)):
        shape = FAST_SHAPES.get(opcode)
        if form < 7 and shape is not None and shape[0] >= 0:
            operands = [1 + value % next_id for value in operands + [1] * shape[0]][: shape[0]]
            if shape[3] >= 0:
                operands[shape[3]] = next_id
                next_id += 1
            count = len(operands) + 1
        body += [count << 16 | opcode, *operands]
    bound = draw(st.sampled_from([next_id, next_id, next_id + 40, 1]))
    return [MAGIC_NUMBER, 0x00010300, 8 << 16, bound, 0, *body]


@given(instruction_stream())
def test_plausible_instruction_streams(words: list[int]) -> None:
    check(words)


@st.composite
def mutated_corpus_module(draw: st.DrawFn) -> list[int]:
    corpus = all_corpus_words()
    words = list(corpus[draw(SPREAD) * len(corpus) // 0x10000])
    for _ in range(draw(st.integers(1, 4))):
        if len(words) <= HEADER_WORDS:
            break
        at = HEADER_WORDS + draw(SPREAD) * (len(words) - HEADER_WORDS) // 0x10000
        kind = draw(st.sampled_from(["flip", "count", "insert", "delete", "duplicate", "truncate"]))
        if kind == "flip":
            words[at] ^= 1 << draw(st.integers(0, 31))
        elif kind == "count":  # a new word count on whatever word is there
            words[at] = draw(st.integers(0, 16)) << 16 | (words[at] & 0xFFFF)
        elif kind == "insert":
            words.insert(at, draw(st.one_of(OPERAND, st.sampled_from(words))))
        elif kind == "delete":
            del words[at]
        elif kind == "duplicate":
            length = draw(st.integers(1, 16))
            words[at:at] = words[at : at + length]
        elif kind == "swap":  # exchange the instruction starting at or after `at` and the next
            swap_instructions(words, at)
        else:
            del words[at:]
    return words


def swap_instructions(words: list[int], at: int) -> None:
    """Swap two neighbouring instructions (found by walking the word counts) to break layout."""
    start = HEADER_WORDS
    while start < len(words) and start < at and words[start] >> 16:
        start += words[start] >> 16
    middle = start + (words[start] >> 16 if start < len(words) else 0)
    end = middle + (words[middle] >> 16 if middle < len(words) else 0)
    if start < middle < end <= len(words):
        words[start:end] = words[middle:end] + words[start:middle]


@given(mutated_corpus_module())
def test_mutated_corpus_modules(words: list[int]) -> None:
    check(words)
