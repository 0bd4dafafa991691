"""read() pauses the cycle collector and hands its objects to the oldest generation: the
caller's collector settings and frozen objects must come out as they went in."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from gpuav.errors import DecodeError
from gpuav.spirv import read
from tests.spirv.corpus import CASES, corpus_words


@pytest.fixture
def restore_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.usefixtures("restore_gc")
def test_collector_stays_enabled_and_nothing_stays_frozen() -> None:
    gc.enable()
    read(corpus_words(*CASES[0]))
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0
    with pytest.raises(DecodeError):
        read([0x07230203, 0x10000, 0, 1, 0, 0])
    assert gc.isenabled()


@pytest.mark.usefixtures("restore_gc")
def test_a_disabled_collector_stays_disabled() -> None:
    gc.disable()
    read(corpus_words(*CASES[0]))
    assert not gc.isenabled()


@pytest.mark.usefixtures("restore_gc")
def test_the_programs_frozen_objects_stay_frozen() -> None:
    gc.enable()
    gc.freeze()
    frozen = gc.get_freeze_count()
    read(corpus_words(*CASES[0]))
    assert gc.get_freeze_count() == frozen
