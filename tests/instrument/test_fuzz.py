"""Property: random and mutated input to instrument_shader raises only GpuavError subclasses."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from gpuav.errors import GpuavError
from gpuav.instrument.api import instrument_shader
from gpuav.instrument.descriptor_state import PushConstantAddress
from tests.instrument.test_pass_shapes import (
    ARRAY_ARGUMENT_COMP,
    LOOP,
    SELECT,
    asm,
    split_chain_module,
)
from tests.shaders.glsl import compile_glsl
from tests.spirv.corpus import all_corpus_words

WORD = st.integers(0, 0xFFFFFFFF)
HEADER = [0x07230203, 0x00010300, 0, 200, 0]


MODES: list[dict[str, object]] = [
    {},
    {"descriptor_state": True},
    {"descriptor_state": True, "context_address": PushConstantAddress(128)},
]


def _run(words: list[int]) -> None:
    for options in MODES:
        try:
            out = instrument_shader(words, shader_id=1, descriptor_set=4, **options)  # type: ignore[arg-type]
        except GpuavError:
            continue
        assert all(0 <= word <= 0xFFFFFFFF for word in out)


@given(st.lists(WORD, max_size=64))
def test_random_words(words: list[int]) -> None:
    _run(HEADER + words)


_SHAPES: list[list[int]] = []


def _shapes() -> list[list[int]]:
    """The merged, split-chain and function-argument shapes (test_pass_shapes), built once."""
    if not _SHAPES:
        _SHAPES.extend(
            [
                asm(LOOP),
                asm(SELECT),
                split_chain_module(),
                compile_glsl(ARRAY_ARGUMENT_COMP, "comp", target_env="vulkan1.1"),
            ]
        )
    return _SHAPES


@given(st.data())
def test_mutated_corpus_modules(data: st.DataObject) -> None:
    _mutate_and_run(data, all_corpus_words())


@given(st.data())
def test_mutated_shape_modules(data: st.DataObject) -> None:
    _mutate_and_run(data, _shapes())


def _mutate_and_run(data: st.DataObject, corpus: Sequence[Sequence[int]]) -> None:
    words = list(corpus[data.draw(st.integers(0, len(corpus) - 1))])
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(5, len(words) - 1))
        kind = data.draw(st.sampled_from(["flip", "small", "delete", "duplicate"]))
        if kind == "flip":
            words[at] ^= 1 << data.draw(st.integers(0, 31))
        elif kind == "small":  # a small value where an id or a count was
            words[at] = data.draw(st.integers(0, 64))
        elif kind == "delete":
            del words[at]
        else:
            words[at:at] = words[at : at + data.draw(st.integers(1, 8))]
    _run(words)
