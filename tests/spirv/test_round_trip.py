"""write(read(words)) == words, word for word, for every corpus module in both byte orders."""

from __future__ import annotations

import pytest

from gpuav.spirv import read, write, write_bytes
from tests.spirv.corpus import CASE_IDS, CASES, corpus_words, to_bytes


@pytest.mark.parametrize(("name", "debug"), CASES, ids=CASE_IDS)
def test_round_trip_is_word_exact(name: str, debug: str) -> None:
    words = list(corpus_words(name, debug))  # type: ignore[arg-type]
    module = read(words)
    assert write(module) == words
    # The writer walks the sections itself: it must agree with Module.instructions().
    assert words[5:] == [
        word for instruction in module.instructions() for word in instruction.words()
    ]
    # Every instruction remembers its index in the input, in order.
    assert [instruction.origin for instruction in module.instructions()] == list(
        range(sum(1 for _ in module.instructions()))
    )


@pytest.mark.parametrize(("name", "debug"), CASES, ids=CASE_IDS)
def test_round_trip_from_either_byte_order(name: str, debug: str) -> None:
    words = list(corpus_words(name, debug))  # type: ignore[arg-type]
    for byteorder in ("big", "little"):
        module = read(to_bytes(words, byteorder))  # type: ignore[arg-type]
        assert write(module) == words, byteorder
    assert read(write_bytes(read(words))).bound == words[3]
