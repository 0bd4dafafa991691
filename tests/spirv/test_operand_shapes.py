"""Remembered operand layouts never let a malformed instruction through.

Each case first reads a well-formed module so that the layout is remembered, then reads a
module whose instruction has that layout's key (opcode, operand count, deciding operands)
but is broken elsewhere: the reader must reject it just as a fresh grammar walk does.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuav.errors import DecodeError
from gpuav.spirv import encode_string, operand_shapes, read, write
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import MAGIC_NUMBER, Decoration, Op
from gpuav.spirv.instruction import string_end
from gpuav.spirv.operand_shapes import learn, shape_key
from gpuav.spirv.operand_walker import WalkContext
from tests.spirv.corpus import all_corpus_words

BOUND = 20
INT32, INT64, FLOAT32 = 2, 3, 4


def _module(*instructions: list[int]) -> list[int]:
    """A header, three numeric types (ids 2, 3, 4) and the given global instructions."""
    body = [
        [Op.Capability, 1],  # Shader
        [Op.Capability, 11],  # Int64
        [Op.MemoryModel, 0, 1],
        *instructions[:1],  # debug names go before the annotations and types
    ]
    rest = list(instructions[1:])
    annotations = [i for i in rest if i[0] in (Op.Decorate, Op.MemberDecorate)]
    types = [[Op.TypeInt, INT32, 32, 0], [Op.TypeInt, INT64, 64, 0], [Op.TypeFloat, FLOAT32, 32]]
    others = [i for i in rest if i not in annotations]
    words = [MAGIC_NUMBER, 0x00010000, 0, BOUND, 0]
    for opcode, *operands in [*body, *annotations, *types, *others]:
        words += [(len(operands) + 1) << 16 | opcode, *operands]
    return words


def _name(target: int, text: str) -> list[int]:
    return [Op.Name, target, *encode_string(text)]


def test_a_string_that_no_longer_ends_in_its_last_word_is_rejected() -> None:
    good = _name(5, "abcdefg")  # two words of string
    read(_module(good))
    unterminated = [*good[:-1], 0x41414141]
    with pytest.raises(DecodeError, match="string"):
        read(_module(unterminated))
    early = [Op.Name, 5, *encode_string("abc"), 0x00000041]  # same length, nul in word one
    with pytest.raises(DecodeError, match="left after"):
        read(_module(early))


@pytest.mark.parametrize("target", [0, BOUND])
def test_a_name_of_an_id_out_of_range_is_rejected(target: int) -> None:
    read(_module(_name(5, "ok")))
    with pytest.raises(DecodeError, match="id"):
        read(_module(_name(target, "ok")))


def test_an_id_out_of_range_in_a_remembered_decoration_is_rejected() -> None:
    read(_module(_name(5, "x"), [Op.Decorate, 5, Decoration.Location, 3]))
    with pytest.raises(DecodeError, match="id"):
        read(_module(_name(5, "x"), [Op.Decorate, BOUND + 5, Decoration.Location, 3]))
    with pytest.raises(DecodeError, match="id"):
        read(_module(_name(5, "x"), [Op.Decorate, 0, Decoration.Location, 3]))


def test_decoration_parameters_are_checked_by_the_enumerant() -> None:
    # UniformId's parameter is an id (range-checked); Location needs exactly one word.
    read(_module(_name(5, "x"), [Op.Decorate, 5, Decoration.UniformId, 6]))
    with pytest.raises(DecodeError, match="id"):
        read(_module(_name(5, "x"), [Op.Decorate, 5, Decoration.UniformId, BOUND]))
    with pytest.raises(DecodeError, match="missing"):
        read(_module(_name(5, "x"), [Op.Decorate, 5, Decoration.Location]))
    with pytest.raises(DecodeError, match="left after"):
        read(_module(_name(5, "x"), [Op.Decorate, 5, Decoration.Location, 1, 2]))
    with pytest.raises(DecodeError, match="unknown Decoration"):
        read(_module(_name(5, "x"), [Op.Decorate, 5, 0xFFFF, 1]))


def test_a_constant_layout_is_remembered_per_type_width() -> None:
    # One value word is right for a 32-bit type and wrong for a 64-bit one.
    read(_module(_name(5, "x"), [Op.Constant, INT32, 5, 7]))
    with pytest.raises(DecodeError, match="value words"):
        read(_module(_name(5, "x"), [Op.Constant, INT64, 5, 7]))
    read(_module(_name(5, "x"), [Op.Constant, INT64, 5, 7, 0]))


def test_a_decoration_whose_parameter_is_an_enumerant_is_walked_each_time() -> None:
    # BuiltIn's parameter is an enumerant outside the key: its value could bring parameters
    # of its own, so that layout is marked "walk again" rather than remembered.
    read(_module(_name(5, "x"), [Op.Decorate, 5, Decoration.BuiltIn, 0]))
    context = WalkContext(BOUND)
    key = shape_key(Op.Decorate, [5, Decoration.BuiltIn, 0], context)
    assert key is not None
    learn(Op.Decorate, [5, Decoration.BuiltIn, 0], context)
    assert key in operand_shapes._shapes and operand_shapes._shapes[key] is None


def test_id_positions_of_remembered_layouts_match_a_walk_on_the_corpus() -> None:
    for words in all_corpus_words():
        module = read(words)
        assert write(module) == list(words)
        id_operands = IdOperands(module)
        for instruction in module.instructions():
            assert list(id_operands.shared_positions(instruction)) == id_operands.walk(
                instruction
            ), instruction


_BYTES = st.sampled_from([0, 0x41, 0x80, 0xFF, 0x01])


@given(
    st.lists(
        st.one_of(
            st.integers(0, 0xFFFFFFFF),
            st.tuples(_BYTES, _BYTES, _BYTES, _BYTES).map(
                lambda b: b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24
            ),
        ),
        min_size=1,
        max_size=14,
    ),
    st.integers(0, 13),
)
def test_the_word_test_for_a_string_end_agrees_with_the_byte_search(
    words: list[int], start: int
) -> None:
    start = min(start, len(words) - 1)
    try:
        expected = string_end(words, start) == len(words)
    except ValueError:
        expected = False
    assert operand_shapes._string_fills(words, start) == expected
