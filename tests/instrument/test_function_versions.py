"""Entry functions whose every check the layer can decide for an action: the pass keeps them
twice and says how (``host_terms``); the shader runs the unchecked copy exactly where the
action's verdict word has its stage's bit, and the layer sets that bit exactly where every
term holds. On lavapipe, with gpuav's set made by hand as the layer makes it."""

from __future__ import annotations

import numpy as np
import pytest

from gpuav.instrument import host_terms
from gpuav.instrument.api import instrument_module
from gpuav.instrument.descriptor_state import VERDICT_WORD
from gpuav.instrument.record import ErrorCode, ErrorRecord
from gpuav.spirv import read, write
from gpuav.spirv.grammar import Op
from tests.harness import Binding, VulkanContext
from tests.instrument.util import DEBUG_SET, SHADER_ID, bound_sets_area, buffer_region, gpuav_set
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

COMPUTE_BIT = 0x20
DATA_WORDS = 24

# Every index has a bound the layer can work out: a remainder of the runtime array's own
# length (kept in a local, as glslang leaves it), a remainder of a constant, and uniform
# members at constant offsets.
PROVABLE = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Out { uint v[8]; } o;
layout(set = 0, binding = 2) uniform Params { uint base; uint scale; } params;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint at = (i * 7u + params.base) % uint(data.v.length());
    o.v[i % 8u] = data.v[at] * params.scale;
}
"""

# The same with the reads in a function main calls (glslang passes its argument through a
# pointer): main's bit stands for the terms of both copies.
IN_A_CALL = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Out { uint v[8]; } o;
layout(set = 0, binding = 2) uniform Params { uint base; uint scale; } params;
uint fetch(uint i) {
    return data.v[(i * 7u + params.base) % uint(data.v.length())] * params.scale;
}
void main() {
    uint i = gl_GlobalInvocationID.x;
    o.v[i % 8u] = fetch(i);
}
"""
SOURCES = {"main": PROVABLE, "called": IN_A_CALL}

# The same with an index pushed by the app: the layer sees what it pushes.
PUSHED = PROVABLE.replace(
    "layout(local_size_x = 8) in;",
    "layout(local_size_x = 8) in;\nlayout(push_constant) uniform P { uint skip; uint at; } p;",
).replace("data.v[at]", "data.v[p.at]")

# An index read from memory: only the shader sees it.
FROM_MEMORY = PROVABLE.replace("data.v[at]", "data.v[data.v[i]]")


def _instrumented(source: str) -> tuple[list[int], host_terms.EntryVerdicts]:
    words = compile_glsl(source, "comp", target_env="vulkan1.2")
    result = instrument_module(
        read(words), shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    out = write(result.module)
    spirv_val(out, "vulkan1.2")
    return out, result.entry_verdicts


def _state(data_written: bool = True, out_bytes: int = 32) -> list[int]:
    return buffer_region([4 * DATA_WORDS if data_written else None, out_bytes, 8])


def _run(
    vk: VulkanContext, words: list[int], state: list[int], verdict: int
) -> tuple[list[int], list[ErrorRecord]]:
    data = vk.buffer(data=np.arange(1, 1 + DATA_WORDS, dtype=np.uint32))
    out = vk.buffer(32)
    debug = vk.debug_buffer(capacity_words=4096)
    app = [
        Binding(0, "storage_buffer", [data]),
        Binding(1, "storage_buffer", [out]),
        Binding(2, "uniform_buffer", [vk.buffer(data=np.array([5, 3], np.uint32))]),
    ]
    area = bound_sets_area(state, 0)
    area[VERDICT_WORD] = verdict
    result = vk.run_compute(words, {0: app, DEBUG_SET: gpuav_set(vk, debug, state, area)})
    return result.buffer(out).tolist(), debug.records()


EXPECTED = [(1 + (i * 7 + 5) % DATA_WORDS) * 3 for i in range(8)]


def test_provable_entry_function_is_kept_twice_with_its_terms() -> None:
    _, verdicts = _instrumented(PROVABLE)
    ((name, bit, terms),) = verdicts
    assert (name, bit) == ("main", COMPUTE_BIT)
    ranges = {
        (t.binding, type(t.bound).__name__) for t in terms if isinstance(t, host_terms.Within)
    }
    # the data read through its own length, the output and both uniform members by constants
    assert ranges == {(0, "Sum"), (1, "Sum"), (2, "Const")}


def test_index_only_the_shader_sees_gets_no_copy() -> None:
    assert _instrumented(FROM_MEMORY)[1] == ()


@pytest.mark.parametrize(
    ("pushed", "pushed_words", "holds"),
    [
        ((0, DATA_WORDS - 1), 0b11, True),
        ((0, DATA_WORDS), 0b11, False),  # one word past the data's range
        ((0, 3), 0b01, False),  # the index's word was never pushed
    ],
    ids=["last-word", "past-the-end", "not-pushed"],
)
def test_a_pushed_index_is_decided_from_what_was_pushed(
    pushed: tuple[int, int], pushed_words: int, holds: bool
) -> None:
    ((_, bit, terms),) = _instrumented(PUSHED)[1]
    assert host_terms.pushed_offsets(terms) == {4}  # p.at, after p.skip
    assert host_terms.pushed_offsets(_instrumented(PROVABLE)[1][0][2]) == set()
    area = bound_sets_area(_state(), 0).tolist()
    data = np.array(pushed, np.uint32).tobytes()
    word = host_terms.verdict_of([(bit, terms)])(area, data, pushed_words)
    assert word == (COMPUTE_BIT if holds else 0)


def test_a_called_function_is_kept_twice_behind_its_entry_points_bit() -> None:
    words, verdicts = _instrumented(IN_A_CALL)
    ((name, bit, terms),) = verdicts
    assert (name, bit) == ("main", COMPUTE_BIT)
    lengths = [t for t in terms if isinstance(t, host_terms.Within) and t.binding == 0]
    assert lengths, terms  # fetch's read of the data, through its own length
    module = read(words)
    helper = next(
        name.operands[0]
        for name in module.debug_names
        if name.opcode == Op.Name and name.string(1) == "gpuav_action_verdict"
    )
    reads = [i for i in module.instructions() if i.opcode == Op.FunctionCall]
    assert sum(i.operands[2] == helper for i in reads) == 2  # main's copy and fetch's


@pytest.mark.parametrize("where", list(SOURCES))
@pytest.mark.parametrize("verdict", [COMPUTE_BIT, 0], ids=["copy", "checked"])
def test_either_copy_computes_what_the_shader_computes_alone(
    vk: VulkanContext, verdict: int, where: str
) -> None:
    words, _ = _instrumented(SOURCES[where])
    plain = compile_glsl(SOURCES[where], "comp", target_env="vulkan1.2")
    out, records = _run(vk, words, _state(), verdict)
    assert records == []
    assert out == _run(vk, plain, _state(), verdict)[0] == EXPECTED


@pytest.mark.parametrize("where", list(SOURCES))
def test_the_stage_bit_alone_picks_the_copy(vk: VulkanContext, where: str) -> None:
    """With the data descriptor unwritten in the state (the buffer is really there), the
    checked function reports and skips the read; the copy, run where the bit says every check
    passes, reads it."""
    words, _ = _instrumented(SOURCES[where])
    checked_out, checked = _run(vk, words, _state(data_written=False), 0)
    assert ErrorCode.BUFFER_OUT_OF_BOUNDS in {record.error_code for record in checked}
    assert checked_out == [0] * 8
    other_stage = 0x10  # a fragment shader's bit says nothing about this compute shader
    assert _run(vk, words, _state(data_written=False), other_stage)[1] == checked
    copy_out, copied = _run(vk, words, _state(data_written=False), COMPUTE_BIT)
    assert copied == [] and copy_out == EXPECTED


@pytest.mark.parametrize(
    ("state", "holds"),
    [
        (_state(), True),
        (_state(data_written=False), False),
        (_state(out_bytes=28), False),  # the output's last word is not bound
        (_state(out_bytes=4 * 64), True),
    ],
    ids=["bound", "data-unwritten", "output-short", "output-longer"],
)
def test_the_layer_sets_the_bit_where_every_term_holds(state: list[int], holds: bool) -> None:
    (_, verdicts) = _instrumented(PROVABLE)
    stages = [(bit, terms) for _, bit, terms in verdicts]
    area = bound_sets_area(state, 0).tolist()
    assert host_terms.verdict_of(stages)(area, b"", 0) == (COMPUTE_BIT if holds else 0)


def test_no_verdict_for_a_set_the_layer_does_not_track() -> None:
    (_, verdicts) = _instrumented(PROVABLE)
    stages = [(bit, terms) for _, bit, terms in verdicts]
    area = bound_sets_area(_state(), host_terms.NO_STATE).tolist()
    assert host_terms.verdict_of(stages)(area, b"", 0) == 0


def test_terms_read_back_from_their_rows() -> None:
    (_, verdicts) = _instrumented(PROVABLE)
    ((_, _, terms),) = verdicts
    assert host_terms.from_rows(host_terms.to_rows(terms)) == terms
    for bad in (
        ["fits", 0, 0],
        ["sum", 1],
        [["c", 1]],
        "fits",
        ["c", 1],  # a bound where a term belongs
        ["below", 5, 0, 0],  # a count where a bound belongs
        ["below", ["less", ["c", 1], 2], 0, 0],  # a term inside one
        ["less", ["c", 1], -2],
    ):
        with pytest.raises((ValueError, TypeError)):
            host_terms.from_rows([bad])
