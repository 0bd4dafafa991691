"""Buffer-range checks on lavapipe: every load, store and atomic of a uniform or storage
buffer compared with the range the descriptor state gives, exact records for one past the
end, far out and negative indices, skipped accesses, and correct programs unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from gpuav.instrument import record
from gpuav.instrument.api import instrument_shader
from gpuav.instrument.descriptor_state import (
    binding_table_word,
    range_word,
    region_words,
)
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage, pack_compute_yz
from gpuav.spirv.grammar import Op
from tests.harness import Binding, DescriptorSetSpec, VulkanContext
from tests.instrument.util import DEBUG_SET, SHADER_ID, bound_sets_area, load_origins, origins
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

SHADER = """#version 450
#extension GL_EXT_shader_atomic_int64 : enable
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) readonly buffer Indices { int index[8]; } indices;
layout(set = 0, binding = 2) buffer Out { uint o[8]; } o;
layout(set = 0, binding = 3) uniform Params { uvec4 add; } params;
void main() {
    uint i = gl_GlobalInvocationID.x;
    int at = indices.index[i];
    o.o[i] = data.v[at] + params.add.x;
    atomicAdd(data.v[at], 1u);
}
"""
DATA_WORDS = 4
INDICES = [0, 3, 4, 100, -1, 2, 1, 0]


def _state(data_range: int | None) -> list[int]:
    words = region_words({0: 1, 1: 1, 2: 1, 3: 1})
    if data_range is not None:
        words[words[binding_table_word(0)]] = range_word(data_range)
    return words


def _run(
    vk: VulkanContext, words: list[int], state: list[int], indices: list[int] = INDICES
) -> tuple[list[int], list[int], list[ErrorRecord]]:
    data = vk.buffer(data=np.arange(10, 10 + DATA_WORDS, dtype=np.uint32))
    out = vk.buffer(4 * 8)
    debug = vk.debug_buffer(capacity_words=1024)
    bound = bound_sets_area(state, 0)
    app = [
        Binding(0, "storage_buffer", [data]),
        Binding(1, "storage_buffer", [vk.buffer(data=np.array(indices, np.int32))]),
        Binding(2, "storage_buffer", [out]),
        Binding(3, "uniform_buffer", [vk.buffer(data=np.array([5, 0, 0, 0], np.uint32))]),
    ]
    ours = DescriptorSetSpec(
        [
            debug.binding(),
            Binding(1, "uniform_buffer", [vk.buffer(data=bound)]),
            Binding(2, "storage_buffer", [vk.buffer(data=np.array(state, np.uint32))]),
        ]
    )
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours})
    records = sorted(debug.records(), key=lambda r: (r.instruction_index, r.stage_words))
    return result.buffer(out).tolist(), result.buffer(data).tolist(), records


def _instrument(words: list[int]) -> list[int]:
    out = instrument_shader(
        words, shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    spirv_val(out, "vulkan1.2")
    return out


def _range_record(instruction: int, x: int, offset: int, flags: int = 0) -> ErrorRecord:
    return ErrorRecord(
        SHADER_ID,
        instruction,
        Stage.COMPUTE,
        (x, pack_compute_yz(0, 0)),
        ErrorCode.BUFFER_OUT_OF_BOUNDS,
        0,
        details=(
            0 << record.SET_SHIFT | record.STORAGE_BIT | 0,
            offset & 0xFFFF_FFFF,
            4,
            4 * DATA_WORDS,
            flags,
        ),
    )


def test_out_of_range_accesses_are_reported_and_skipped(vk: VulkanContext) -> None:
    words = compile_glsl(SHADER, "comp", target_env="vulkan1.2")
    out, data, records = _run(vk, _instrument(words), _state(4 * DATA_WORDS))
    (data_load,) = load_origins(words, "data")
    atomic = origins(words, Op.AtomicIAdd)[0]
    expected = []
    for x, at in enumerate(INDICES):
        if 0 <= at < DATA_WORDS:
            continue
        flags = record.FLAG_NEGATIVE | record.FLAG_WRAPPED if at < 0 else 0
        for instruction in (data_load, atomic):
            expected.append(_range_record(instruction, x, 4 * at, flags))
    got = [r for r in records if r.instruction_index in (data_load, atomic)]
    assert sorted(got, key=lambda r: (r.instruction_index, r.stage_words)) == sorted(
        expected, key=lambda r: (r.instruction_index, r.stage_words)
    )
    assert len(records) == len(expected)
    # Out-of-range loads give zero; only in-range atomics changed the data.
    assert out == [(10 + at if 0 <= at < DATA_WORDS else 0) + 5 for at in INDICES]
    hits = [INDICES.count(k) for k in range(DATA_WORDS)]
    assert data == [10 + k + hits[k] for k in range(DATA_WORDS)]


def test_in_range_program_is_unchanged_and_silent(vk: VulkanContext) -> None:
    words = compile_glsl(SHADER, "comp", target_env="vulkan1.2")
    inside = [3, 2, 1, 0, 0, 1, 2, 3]  # every byte of the last word too
    plain_out, plain_data, _ = _run(vk, words, _state(None), inside)
    out, data, records = _run(vk, _instrument(words), _state(4 * DATA_WORDS), inside)
    assert records == []
    assert (out, data) == (plain_out, plain_data)


def test_unknown_range_checks_nothing(vk: VulkanContext) -> None:
    words = compile_glsl(SHADER, "comp", target_env="vulkan1.2")
    _, _, records = _run(vk, _instrument(words), _state(None))
    assert [r for r in records if r.error_code is ErrorCode.BUFFER_OUT_OF_BOUNDS] == []
