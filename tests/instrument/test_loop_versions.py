"""Loops with an unchecked copy on lavapipe: the copy runs only where the test before the
loop proves every access fits, so a correct program computes what it computes without the
layer and reports nothing, and a program that overruns gets every record the checked loop
gives, with the same numbers."""

from __future__ import annotations

import numpy as np
import pytest

from gpuav.instrument import memory_guards, record
from gpuav.instrument.address_table import TABLE_OFFSET_WORD, table_words
from gpuav.instrument.descriptor_state import (
    NO_STATE,
    binding_table_word,
    range_word,
    region_words,
)
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage, pack_compute_yz
from gpuav.spirv.grammar import LoopControl, Op
from gpuav.spirv.reader import read
from tests.harness import Binding, VulkanContext
from tests.instrument.util import (
    DEBUG_SET,
    SHADER_ID,
    bound_sets_area,
    buffer_region,
    gpuav_set,
    instrumented_with_state,
    load_origins,
    origins,
)
from tests.shaders.glsl import compile_glsl, optimize

pytestmark = pytest.mark.vulkan

INVOCATIONS = 8
DATA_WORDS = 24

HEAD = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Out { uint v[]; } o;
layout(set = 0, binding = 2) uniform Params { uint count; uint base; } params;
"""

# Reads data.v[base + i + k] for k < count: the index is bounded by base + 7 + count - 1,
# from two uniform reads, a variable stored once and the loop's counter. The store's index
# does not change in the loop; acc is used after it.
COUNTED = (
    HEAD
    + """void main() {
    uint i = gl_GlobalInvocationID.x;
    uint acc = 0u;
    for (COUNTER k = 0; k < COUNTER(params.count); ++k) {
        acc += data.v[params.base + i + uint(k)];
        o.v[i] = acc;
    }
    o.v[8u + i] = acc * 2u;
}
"""
)

# The index is read from memory: no bound, so no copy.
UNBOUNDED = (
    HEAD
    + """void main() {
    uint i = gl_GlobalInvocationID.x;
    uint acc = 0u;
    for (uint k = 0u; k < 4u; ++k) {
        acc += data.v[data.v[i + k]];
    }
    o.v[i] = acc;
}
"""
)

# A mask bounds the index; the loop leaves early through a break.
MASKED_WITH_BREAK = (
    HEAD
    + """void main() {
    uint i = gl_GlobalInvocationID.x;
    uint acc = 0u;
    uint k = 0u;
    for (; k < 64u; ++k) {
        uint value = data.v[(i * 5u + k) & MASK];
        if (value == 1000u + params.base) break;
        acc += value;
    }
    o.v[i] = acc + k * 100000u;
}
"""
)


def _module(source: str, optimized: bool, **defines: str) -> list[int]:
    for name, value in defines.items():
        source = source.replace(name, value)
    words = compile_glsl(source, "comp", target_env="vulkan1.2")
    return optimize(words) if optimized else words


def _run(
    vk: VulkanContext, words: list[int], count: int, base: int, data_words: int = DATA_WORDS
) -> tuple[list[int], list[ErrorRecord]]:
    data = vk.buffer(data=np.arange(1, 1 + 64, dtype=np.uint32))
    out = vk.buffer(4 * 2 * INVOCATIONS)
    debug = vk.debug_buffer(capacity_words=4096)
    state = buffer_region([4 * data_words, 4 * 2 * INVOCATIONS, 8])
    app = [
        Binding(0, "storage_buffer", [data]),
        Binding(1, "storage_buffer", [out]),
        Binding(2, "uniform_buffer", [vk.buffer(data=np.array([count, base], np.uint32))]),
    ]
    ours = gpuav_set(vk, debug, state, bound_sets_area(state, 0))
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours})
    records = sorted(debug.records(), key=lambda r: (r.instruction_index, r.stage_words))
    return result.buffer(out).tolist(), records


def _data_record(instruction: int, x: int, word: int, data_words: int) -> ErrorRecord:
    return ErrorRecord(
        SHADER_ID,
        instruction,
        Stage.COMPUTE,
        (x, pack_compute_yz(0, 0)),
        ErrorCode.BUFFER_OUT_OF_BOUNDS,
        0,
        details=(
            record.STORAGE_BIT,
            4 * word & 0xFFFF_FFFF,
            4,
            4 * data_words,
            record.FLAG_WRAPPED if 4 * word > 0xFFFF_FFFF else 0,
        ),
    )


def _counted_expectation(count: int, base: int) -> list[int]:
    """What the checked loop computes: a word past the range reads as zero."""
    sums = []
    for i in range(INVOCATIONS):
        sums.append(sum(1 + at for k in range(count) if (at := base + i + k) < DATA_WORDS))
    stored = [s if count else 0 for s in sums]
    return stored + [2 * s for s in sums]


@pytest.mark.parametrize("optimized", [False, True], ids=["glslang", "spirv-opt"])
@pytest.mark.parametrize("counter", ["uint", "int"])
def test_proven_loop_runs_its_copy_and_matches_no_layer(
    vk: VulkanContext, optimized: bool, counter: str
) -> None:
    words = _module(COUNTED, optimized, COUNTER=counter)
    instrumented, copied = instrumented_with_state(words)
    assert copied == 1
    plain, _ = _run(vk, words, count=5, base=3)
    out, records = _run(vk, instrumented, count=5, base=3)
    assert records == []
    assert out == plain == _counted_expectation(5, 3)


@pytest.mark.parametrize("optimized", [False, True], ids=["glslang", "spirv-opt"])
@pytest.mark.parametrize("counter", ["uint", "int"])
def test_overrun_takes_the_checked_loop_with_every_record(
    vk: VulkanContext, optimized: bool, counter: str
) -> None:
    words = _module(COUNTED, optimized, COUNTER=counter)
    instrumented, _ = instrumented_with_state(words)
    count, base = 6, 14  # invocations 5..7 read past word 23
    out, records = _run(vk, instrumented, count=count, base=base)
    (data_load,) = load_origins(words, "data")
    expected = [
        _data_record(data_load, x, base + x + k, DATA_WORDS)
        for x in range(INVOCATIONS)
        for k in range(count)
        if base + x + k >= DATA_WORDS
    ]
    assert records == sorted(expected, key=lambda r: (r.instruction_index, r.stage_words))
    assert out == _counted_expectation(count, base)


def test_zero_iterations_and_a_bound_that_wraps(vk: VulkanContext) -> None:
    words = _module(COUNTED, False, COUNTER="uint")
    (data_load,) = load_origins(words, "data")
    instrumented, _ = instrumented_with_state(words)
    out, records = _run(vk, instrumented, count=0, base=0)
    assert (out, records) == (_counted_expectation(0, 0), [])
    # base + i + k wraps past 2^32 to small, valid indices; base + 7 + count - 1 wraps too,
    # so the test before the loop must fail (not pass on a small sum) and the checked loop
    # report the two indices below 2^32 that lie past the range.
    base, count = 0xFFFF_FFFE, 4
    out, records = _run(vk, instrumented, count=count, base=base)
    sums, expected = [], []
    for x in range(INVOCATIONS):
        total = 0
        for k in range(count):
            at = (base + x + k) & 0xFFFF_FFFF
            if at < DATA_WORDS:
                total += 1 + at
            else:
                expected.append(_data_record(data_load, x, at, DATA_WORDS))
        sums.append(total)
    assert records == sorted(expected, key=lambda r: (r.instruction_index, r.stage_words))
    assert out == sums + [2 * s for s in sums]


def test_index_read_from_memory_gets_no_copy(vk: VulkanContext) -> None:
    words = _module(UNBOUNDED, False)
    instrumented, copied = instrumented_with_state(words)
    assert copied == 0
    plain, _ = _run(vk, words, count=0, base=0, data_words=64)
    out, records = _run(vk, instrumented, count=0, base=0, data_words=64)
    assert (out, records) == (plain, [])


@pytest.mark.parametrize("optimized", [False, True], ids=["glslang", "spirv-opt"])
@pytest.mark.parametrize("mask", [15, 63])
def test_break_and_values_after_the_loop(vk: VulkanContext, optimized: bool, mask: int) -> None:
    """With a mask inside the range the copy runs; past it the checked loop reports."""
    words = _module(MASKED_WITH_BREAK, optimized, MASK=f"{mask}u")
    instrumented, copied = instrumented_with_state(words)
    assert copied == 1
    plain, _ = _run(vk, words, count=0, base=7, data_words=64)
    out, records = _run(vk, instrumented, count=0, base=7, data_words=DATA_WORDS)
    if mask < DATA_WORDS:
        assert (out, records) == (plain, [])
        return
    assert records and all(r.details[1] >= 4 * DATA_WORDS for r in records)
    expected = []
    for i in range(INVOCATIONS):
        acc, k = 0, 0
        while k < 64:
            at = (i * 5 + k) & mask
            value = 1 + at if at < DATA_WORDS else 0
            if value == 1007:
                break
            acc += value
            k += 1
        expected.append(acc + k * 100000)
    assert out[:INVOCATIONS] == expected


def test_copy_asks_to_unroll_only_a_short_constant_loop() -> None:
    def controls(words: list[int]) -> list[int]:
        module = read(words)
        return [i.operands[2] for i in module.instructions() if i.opcode == Op.LoopMerge]

    short, _ = instrumented_with_state(_module(MASKED_WITH_BREAK, False, MASK="15u"))
    assert sorted(controls(short)) == [LoopControl.None_, LoopControl.Unroll]
    counted, _ = instrumented_with_state(_module(COUNTED, False, COUNTER="uint"))
    assert controls(counted) == [LoopControl.None_, LoopControl.None_]


def test_loop_with_a_barrier_or_subgroup_operation_is_not_copied() -> None:
    """The test before the loop may differ between invocations: a copy would split them
    between two barriers, or two subgroup operations."""
    for statement in ("barrier();", "acc = subgroupAdd(acc);"):
        source = MASKED_WITH_BREAK.replace("acc += value;", f"acc += value; {statement}")
        source = source.replace(
            "#version 450", "#version 450\n#extension GL_KHR_shader_subgroup_arithmetic : require"
        )
        _, copied = instrumented_with_state(_module(source, False, MASK="15u"))
        assert copied == 0, statement


# Walks count words from data + i through a buffer-reference pointer read before the loop.
ADDRESSED = """#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 8) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Data { uint v[]; };
layout(set = 0, binding = 0) buffer In { Data data; uint count; } inp;
layout(set = 0, binding = 1) buffer Out { uint o[8]; } o;
void main() {
    uint i = gl_GlobalInvocationID.x;
    Data data = inp.data;
    uint count = inp.count;
    uint acc = 0u;
    for (uint k = 0u; k < count; ++k) {
        acc += data.v[i + k];
    }
    o.o[i] = acc;
}
"""
ADDRESSED_WORDS = 16


def _run_addressed(
    vk: VulkanContext, words: list[int], count: int, published: bool = True
) -> tuple[list[int], list[ErrorRecord], int]:
    data = vk.buffer(data=np.arange(1, 1 + ADDRESSED_WORDS, dtype=np.uint32))
    address = data.device_address
    inputs = np.array([address & 0xFFFF_FFFF, address >> 32, count, 0], np.uint32)
    out = vk.buffer(4 * INVOCATIONS)
    debug = vk.debug_buffer(capacity_words=4096)
    live = [(address, 4 * ADDRESSED_WORDS)] if published else []
    state = [0, *table_words(live)]
    state[TABLE_OFFSET_WORD] = 1
    app = [
        Binding(0, "storage_buffer", [vk.buffer(data=inputs)]),
        Binding(1, "storage_buffer", [out]),
    ]
    ours = gpuav_set(vk, debug, state, bound_sets_area([], NO_STATE))
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours})
    records = sorted(debug.records(), key=lambda r: (r.stage_words, r.details))
    return result.buffer(out).tolist(), records, address


@pytest.mark.parametrize("optimized", [False, True], ids=["glslang", "spirv-opt"])
def test_device_address_loop_copy(vk: VulkanContext, optimized: bool) -> None:
    words = _module(ADDRESSED, optimized)
    instrumented, copied = instrumented_with_state(words)
    assert copied == 1
    plain, _, _ = _run_addressed(vk, words, count=ADDRESSED_WORDS - INVOCATIONS + 1)
    out, records, _ = _run_addressed(vk, instrumented, count=ADDRESSED_WORDS - INVOCATIONS + 1)
    assert (out, records) == (plain, [])
    # One word more and the last invocation reads past the buffer: the checked loop runs
    # and reports exactly that word.
    count = ADDRESSED_WORDS - INVOCATIONS + 2
    out, records, address = _run_addressed(vk, instrumented, count=count)
    (load,) = [r.instruction_index for r in records][:1] or [-1]
    assert load in origins(words, Op.Load)
    assert [(r.stage_words[0], r.error_code, r.details[:2]) for r in records] == [
        (INVOCATIONS - 1, ErrorCode.ADDRESS_OUT_OF_BOUNDS, (a & 0xFFFF_FFFF, a >> 32))
        for a in [address + 4 * ADDRESSED_WORDS]
    ]
    assert out == [
        sum(1 + at for at in range(i, i + count) if at < ADDRESSED_WORDS)
        for i in range(INVOCATIONS)
    ]
    # A buffer no longer live fails the test before the loop, and every access is reported.
    out, records, _ = _run_addressed(vk, instrumented, count=2, published=False)
    assert (out, len(records)) == ([0] * INVOCATIONS, 2 * INVOCATIONS)


# A runtime array of storage buffers read by indices from memory: no bound, so the copy
# keeps the index check without a branch and reports after the loop.
SOURCES = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Source { uint v[]; } sources[];
layout(set = 0, binding = 1) readonly buffer Which { uint at[]; } which;
layout(set = 0, binding = 2) buffer Out { uint o[]; } o;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint sum = 0u;
    for (uint k = 0u; k < 4u; ++k) {
        uint d = which.at[i * 4u + k];
        sum += sources[nonuniformEXT(d)].v[k];
    }
    o.o[i] = sum;
}
"""
SOURCE_COUNT = 4


def _run_sources(
    vk: VulkanContext, words: list[int], which: list[int], unwritten: int | None = None
) -> tuple[list[int], list[tuple[int, ErrorCode, int, int | None]]]:
    sources = [
        vk.buffer(data=np.array([10 * d + k for k in range(4)], np.uint32))
        for d in range(SOURCE_COUNT)
    ]
    out = vk.buffer(4 * INVOCATIONS)
    debug = vk.debug_buffer(capacity_words=4096)
    state = region_words({0: SOURCE_COUNT, 1: 1, 2: 1})
    for d in range(SOURCE_COUNT):
        state[state[binding_table_word(0)] + d] = 0 if d == unwritten else range_word(16)
    state[state[binding_table_word(1)]] = range_word(4 * len(which))
    state[state[binding_table_word(2)]] = range_word(4 * INVOCATIONS)
    app = [
        Binding(0, "storage_buffer", sources),
        Binding(1, "storage_buffer", [vk.buffer(data=np.array(which, np.uint32))]),
        Binding(2, "storage_buffer", [out]),
    ]
    ours = gpuav_set(vk, debug, state, bound_sets_area(state, 0))
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours})
    records = sorted(
        (r.stage_words[0], r.error_code, r.descriptor_index, r.array_length)
        for r in debug.records()
    )
    return result.buffer(out).tolist(), records


def _source_sums(which: list[int]) -> list[int]:
    """What the checked loop computes: a read through an index past the array gives zero."""
    return [
        sum(10 * d + k for k in range(4) if (d := which[4 * i + k]) < SOURCE_COUNT)
        for i in range(INVOCATIONS)
    ]


@pytest.mark.parametrize("optimized", [False, True], ids=["glslang", "spirv-opt"])
def test_index_from_memory_is_checked_in_the_copy(vk: VulkanContext, optimized: bool) -> None:
    words = _module(SOURCES, optimized)
    instrumented, copied = instrumented_with_state(words)
    assert copied == 1
    good = [(i + k) % SOURCE_COUNT for i in range(INVOCATIONS) for k in range(4)]
    plain, _ = _run_sources(vk, words, good)
    out, records = _run_sources(vk, instrumented, good)
    assert (out, records) == (plain, [])
    assert out == _source_sums(good)
    # Invocation 2 reads through index 7, then 9: the copy runs (every descriptor can be
    # used), gives zero for both reads and reports the first index, once.
    bad = list(good)
    bad[4 * 2 + 1], bad[4 * 2 + 3] = 7, 9
    out, records = _run_sources(vk, instrumented, bad)
    assert records == [(2, ErrorCode.INDEX_OUT_OF_BOUNDS, 7, SOURCE_COUNT)]
    assert out == _source_sums(bad)


def test_an_unusable_descriptor_sends_the_loop_to_its_checks(
    vk: VulkanContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The test before the loop fails: everything comes from the checked loop, exactly as
    from the module instrumented without copies."""
    words = _module(SOURCES, False)
    instrumented, _ = instrumented_with_state(words)
    monkeypatch.setattr(memory_guards, "version_loops", lambda *_: 0)
    checked_only, copied = instrumented_with_state(words)
    assert copied == 0
    unused = [(i + k) % 2 for i in range(INVOCATIONS) for k in range(4)]
    out, records = _run_sources(vk, instrumented, unused, unwritten=3)
    assert (out, records) == (_source_sums(unused), [])
    used = list(unused)
    used[4 * 5] = 3
    out, records = _run_sources(vk, instrumented, used, unwritten=3)
    assert records and {r[0] for r in records} == {5}
    assert (out, records) == _run_sources(vk, checked_only, used, unwritten=3)
