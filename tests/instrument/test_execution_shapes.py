"""The shapes of ``test_pass_shapes`` run on lavapipe: exact records, skipped consumers, and
the layer's descriptor-state mode through merged lookups."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from gpuav.instrument.api import instrument_shader
from gpuav.instrument.descriptor_state import (
    binding_table_word,
    region_words,
)
from gpuav.instrument.record import ErrorCode
from gpuav.spirv.grammar import Op
from tests.harness import Binding, DescriptorSetSpec, VulkanContext
from tests.instrument.test_pass_shapes import (
    ARRAY_ARGUMENT_COMP,
    LOOP,
    asm,
    split_chain_instrumented,
)
from tests.instrument.util import DEBUG_SET, SHADER_ID, bound_sets_area, instrumented, origins
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan


def _forgive(vk: VulkanContext, marker: str) -> None:
    """Drop the one validation message these runs cause on purpose (the harness's device does
    not enable variable pointers; arrays of arrays break 04655): any other still fails."""
    vk.messages[:] = [m for m in vk.messages if marker not in m.text]


def test_array_of_arrays_split_chain_on_lavapipe(vk: VulkanContext) -> None:
    words = split_chain_instrumented()
    sampler = vk.sampler()
    textures = []
    for i in range(6):
        image = vk.image(1, 1, "R32G32B32A32_SFLOAT")
        image.upload(np.array([[[i + 1.0, 0.0, 0.0, 1.0]]], np.float32))
        textures.append((image.view(), sampler))
    out = vk.buffer(16 * 12)
    debug = vk.debug_buffer(capacity_words=256)
    sets = {
        0: [
            Binding(0, "combined_image_sampler", textures),
            Binding(1, "storage_buffer", [out]),
        ],
        **debug.sets(),
    }
    result = vk.run_compute(words, sets, group_count=(3, 4, 1))
    bad = {(x, y) for x in range(3) for y in range(4) if x >= 2 or y >= 3}
    records = debug.records()
    assert {(r.stage_words[0], r.stage_words[1] & 0xFFFF) for r in records} == bad
    assert len(records) == len(bad)
    assert {(r.descriptor_index, r.array_length) for r in records if r.stage_words[0] == 2} == {
        (6 + y, 6) for y in range(4)
    }
    red = result.buffer(out, np.float32).reshape(12, 4)[:, 0].tolist()
    expected = [0.0] * 12
    for x in range(2):
        for y in range(3):
            expected[x * 4 + y] = x * 3 + y + 1.0
    assert red == expected
    _forgive(vk, "VUID-StandaloneSpirv-UniformConstant-04655")


def test_block_chosen_in_a_loop_on_lavapipe(vk: VulkanContext) -> None:
    words = asm(LOOP)
    buffers = [vk.buffer(16) for _ in range(6)]
    debug = vk.debug_buffer(capacity_words=256)
    sets = {0: [Binding(0, "storage_buffer", buffers)], **debug.sets()}
    result = vk.run_compute(instrumented(words, "vulkan1.1"), sets, group_count=(9, 1, 1))
    records = sorted(debug.records(), key=lambda r: r.stage_words)
    # The loop ends on bufs[x - 1] (bufs[0] for x = 0): x = 7 and 8 are past the end.
    assert [(r.stage_words[0], r.descriptor_index, r.array_length) for r in records] == [
        (7, 6, 6),
        (8, 7, 6),
    ]
    assert {r.instruction_index for r in records} == set(origins(words, Op.Store))
    assert all(r.error_code is ErrorCode.INDEX_OUT_OF_BOUNDS for r in records)
    # bufs[k] holds k + 1 (x = 0 and 1 both end on bufs[0], in any order).
    assert [int(result.buffer(b)[0]) for b in buffers][1:] == [2, 3, 4, 5, 6]
    _forgive(vk, "(VariablePointersStorageBuffer) was declared")


@pytest.mark.parametrize("index", [3, 4])
def test_descriptor_array_passed_to_a_function_on_lavapipe(vk: VulkanContext, index: int) -> None:
    words = compile_glsl(ARRAY_ARGUMENT_COMP, "comp", target_env="vulkan1.1")
    sampler = vk.sampler()
    textures = []
    for i in range(4):
        image = vk.image(1, 1, "R32G32B32A32_SFLOAT")
        image.upload(np.array([[[i + 1.0, 0.0, 0.0, 1.0]]], np.float32))
        textures.append((image.view(), sampler))
    out = vk.buffer(64)
    debug = vk.debug_buffer(capacity_words=64)
    sets = {
        0: [Binding(0, "combined_image_sampler", textures), Binding(1, "storage_buffer", [out])],
        **debug.sets(),
    }
    push = struct.pack("<I", index)
    result = vk.run_compute(instrumented(words, "vulkan1.1"), sets, push_constants=push)
    value = result.buffer(out, np.float32)[:4].tolist()
    records = debug.records()
    if index < 4:
        assert value == [index + 1.0, 0.0, 0.0, 1.0] and records == []
        return
    assert value == [0.0] * 4
    (record,) = records
    assert (record.descriptor_index, record.array_length) == (4, 4)
    assert record.instruction_index == origins(words, Op.ImageSampleExplicitLod)[0]


def test_block_chosen_in_a_loop_against_descriptor_state(vk: VulkanContext) -> None:
    """The layer's mode: set and binding ride through the phis to the state lookup, which
    finds the unwritten block 3 and the end of the six."""
    words = asm(LOOP)
    checked = instrument_shader(
        words, shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    spirv_val(checked, "vulkan1.1")
    state = region_words({0: 6})
    state[state[binding_table_word(0)] + 3] = 0  # bufs[3] never written
    bound = bound_sets_area(state, 0)
    debug = vk.debug_buffer(capacity_words=256)
    ours = DescriptorSetSpec(
        [
            debug.binding(),
            Binding(1, "uniform_buffer", [vk.buffer(data=bound)]),
            Binding(2, "storage_buffer", [vk.buffer(data=np.array(state, np.uint32))]),
        ]
    )
    buffers = [vk.buffer(16) for _ in range(6)]
    sets = {0: [Binding(0, "storage_buffer", buffers)], DEBUG_SET: ours}
    vk.run_compute(checked, sets, group_count=(8, 1, 1))
    records = sorted(debug.records(), key=lambda r: r.stage_words)
    assert [(r.stage_words[0], r.error_code, r.descriptor_index) for r in records] == [
        (4, ErrorCode.DESCRIPTOR_UNINITIALIZED, 3),
        (7, ErrorCode.INDEX_OUT_OF_BOUNDS, 6),
    ]
    _forgive(vk, "(VariablePointersStorageBuffer) was declared")
