"""Issue 8 on lavapipe: runtime arrays checked against the layer's descriptor state,
unwritten descriptors reported, NO_STATE meaning unknown, and the three buffers reached
through a context address (push constant or specialization constants) instead of a set."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from gpuav.instrument import image_facts
from gpuav.instrument.api import instrument_shader
from gpuav.instrument.descriptor_state import (
    ACCESSIBLE,
    BOUND_AREA_WORDS,
    CONTEXT_ADDRESSES,
    MIN_CONTEXT_DATA_WORDS,
    NO_STATE,
    SUMMARY_LIMIT,
    TABLE_SETS,
    ContextAddressSource,
    PushConstantAddress,
    SpecializationAddress,
    binding_table_word,
    region_words,
    summary,
    summary_word,
    table_entry_word,
)
from gpuav.instrument.record import (
    ErrorCode,
    ErrorRecord,
    Stage,
    pack_compute_yz,
    pack_set_binding,
)
from gpuav.spirv.disassembler import disassemble
from gpuav.spirv.grammar import Op
from tests.harness import Binding, DescriptorSetSpec, VulkanContext
from tests.instrument.util import DEBUG_SET, SHADER_ID, bound_sets_area, origins
from tests.shaders.glsl import TargetEnv, compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

RUNTIME_COMP = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 4) in;
layout(set = {set}, binding = 0) uniform sampler2D textures[{size}];
layout(set = {set}, binding = 1) readonly buffer Indices {{ uint index[4]; }} indices;
layout(set = {set}, binding = 2) buffer Out {{ vec4 v[4]; }} o;
void main() {{
    uint i = gl_GlobalInvocationID.x;
    o.v[i] = texture(textures[nonuniformEXT(indices.index[i])], vec2(0.5));
}}
"""


def _words(size: str = "", set_index: int = 0) -> list[int]:
    source = RUNTIME_COMP.format(size=size, set=set_index)
    return compile_glsl(source, "comp", target_env="vulkan1.2")


def _instrument(
    words: list[int], env: TargetEnv = "vulkan1.2", context: ContextAddressSource | None = None
) -> list[int]:
    out = instrument_shader(
        words,
        shader_id=SHADER_ID,
        descriptor_set=DEBUG_SET,
        descriptor_state=True,
        context_address=context,
    )
    spirv_val(out, env)
    return out


def _state(unwritten: int | None, size: int = 4) -> list[int]:
    words = region_words({0: size, 1: 1, 2: 1})
    if unwritten is not None:
        words[words[binding_table_word(0)] + unwritten] = 0
    return words


def _app_set(vk: VulkanContext, indices: list[int], out: object) -> list[Binding]:
    sampler = vk.sampler()
    pairs = []
    for i in range(4):
        image = vk.image(1, 1, "R32G32B32A32_SFLOAT")
        image.upload(np.array([[[i + 1.0, 0.0, 0.0, 1.0]]], np.float32))
        pairs.append((image.view(), sampler))
    return [
        Binding(0, "combined_image_sampler", pairs),
        Binding(1, "storage_buffer", [vk.buffer(data=np.array(indices, np.uint32))]),
        Binding(2, "storage_buffer", [out]),
    ]


def _with_state(region_of_set_0: int, state: list[int]) -> tuple[np.ndarray, list[int]]:
    """The bound-sets area of set 0 at ``region_of_set_0`` of ``state``, and ``state``."""
    return bound_sets_area(state, region_of_set_0), state


def _records(
    x_and_codes: list[tuple[int, ErrorCode, int, int | None]], sample: int, set_index: int = 0
) -> list[ErrorRecord]:
    return [
        ErrorRecord(
            SHADER_ID,
            sample,
            Stage.COMPUTE,
            (x, pack_compute_yz(0, 0)),
            code,
            index,
            length,
            (pack_set_binding(set_index, 0),),  # the sampled array's set and binding
        )
        for x, code, index, length in x_and_codes
    ]


def _run_with_set(
    vk: VulkanContext,
    words: list[int],
    indices: list[int],
    bound: np.ndarray,
    state: list[int],
    set_index: int = 0,
) -> tuple[list[float], list[ErrorRecord]]:
    out = vk.buffer(4 * 16)
    debug = vk.debug_buffer(capacity_words=256)
    ours = DescriptorSetSpec(
        [
            debug.binding(),
            Binding(1, "uniform_buffer", [vk.buffer(data=bound)]),
            Binding(2, "storage_buffer", [vk.buffer(data=np.array(state, np.uint32))]),
        ]
    )
    result = vk.run_compute(words, {set_index: _app_set(vk, indices, out), DEBUG_SET: ours})
    records = sorted(debug.records(), key=lambda r: r.stage_words)
    return result.buffer(out, np.float32).tolist(), records


def test_runtime_array_bounds_and_unwritten_descriptor(vk: VulkanContext) -> None:
    words = _words()
    values, records = _run_with_set(
        vk, _instrument(words), [1, 2, 4, 0xFFFF_FFFF], *_with_state(0, _state(unwritten=2))
    )
    sample = origins(words, Op.ImageSampleExplicitLod)[0]
    assert records == _records(
        [
            (1, ErrorCode.DESCRIPTOR_UNINITIALIZED, 2, 4),
            (2, ErrorCode.INDEX_OUT_OF_BOUNDS, 4, 4),
            (3, ErrorCode.INDEX_OUT_OF_BOUNDS, 0xFFFF_FFFF, 4),
        ],
        sample,
    )
    assert values[:4] == [2.0, 0.0, 0.0, 1.0] and values[4:] == [0.0] * 12


def test_a_summary_without_forbidden_bits_stands_for_every_descriptor_word(
    vk: VulkanContext,
) -> None:
    # The action's table says every descriptor of the binding is usable (its summary, made
    # when the layer knew them all written): the shader reads no descriptor word, so the 0
    # the state now holds for descriptor 2 goes unseen. The layer clears summaries that no
    # longer hold before the submit (gpuav.layer.binding_summaries).
    words = _words()
    bound = bound_sets_area(_state(None), 0)
    assert bound[summary_word(0, 0)] == ACCESSIBLE
    values, records = _run_with_set(
        vk, _instrument(words), [1, 2, 4, 0], bound, _state(unwritten=2)
    )
    sample = origins(words, Op.ImageSampleExplicitLod)[0]
    assert records == _records([(2, ErrorCode.INDEX_OUT_OF_BOUNDS, 4, 4)], sample)
    assert values[0::4][:4] == [2.0, 3.0, 0.0, 1.0]


def test_a_summary_with_a_forbidden_bit_leaves_each_descriptor_to_its_word(
    vk: VulkanContext,
) -> None:
    # A 3D view somewhere in the binding: a sampler2D access cannot take the summary, so each
    # access reads its own descriptor's word.
    words = _words()
    state = _state(unwritten=2)
    bound = bound_sets_area(state, 0)
    bound[summary_word(0, 0)] = ACCESSIBLE | image_facts.VIEW_TYPE_BIT << 2
    _, records = _run_with_set(vk, _instrument(words), [1, 2, 4, 0], bound, state)
    sample = origins(words, Op.ImageSampleExplicitLod)[0]
    assert records == _records(
        [(1, ErrorCode.DESCRIPTOR_UNINITIALIZED, 2, 4), (2, ErrorCode.INDEX_OUT_OF_BOUNDS, 4, 4)],
        sample,
    )


def test_summary_is_the_or_of_the_words_when_none_is_0() -> None:
    assert summary([1, 1 | 2, 1 | 256]) == 1 | 2 | 256
    assert summary([1, 0, 1]) == 0
    assert summary([]) == 0
    assert summary([1] * SUMMARY_LIMIT) == 1
    assert summary([1] * (SUMMARY_LIMIT + 1)) == 0  # too many to summarize at each change


def test_a_set_past_the_action_tables_is_read_through_its_region_header(
    vk: VulkanContext,
) -> None:
    # Set 4 has no action table entries (TABLE_SETS): the shader follows its region's header.
    set_index = 4
    assert set_index >= TABLE_SETS
    words = _words(set_index=set_index)
    state = _state(unwritten=2)
    bound = bound_sets_area(state, *[NO_STATE] * set_index, 0)
    values, records = _run_with_set(
        vk, _instrument(words), [1, 2, 4, 0xFFFF_FFFF], bound, state, set_index
    )
    sample = origins(words, Op.ImageSampleExplicitLod)[0]
    expected = [
        (1, ErrorCode.DESCRIPTOR_UNINITIALIZED, 2, 4),
        (2, ErrorCode.INDEX_OUT_OF_BOUNDS, 4, 4),
        (3, ErrorCode.INDEX_OUT_OF_BOUNDS, 0xFFFF_FFFF, 4),
    ]
    assert records == _records(expected, sample, set_index)
    assert values[:4] == [2.0, 0.0, 0.0, 1.0]


def test_the_action_table_entry_is_what_the_shader_reads(vk: VulkanContext) -> None:
    # The table entry of set 0's binding 0 says 3 descriptors where the header says 4: the
    # shader takes the entry's, so index 3 is outside.
    words = _words()
    state = _state(None)
    bound = bound_sets_area(state, 0)
    bound[table_entry_word(0, 0) + 1] = 3
    _, records = _run_with_set(vk, _instrument(words), [0, 3, 1, 2], bound, state)
    sample = origins(words, Op.ImageSampleExplicitLod)[0]
    assert records == _records([(1, ErrorCode.INDEX_OUT_OF_BOUNDS, 3, 3)], sample)


def test_state_size_smaller_than_the_declared_array(vk: VulkanContext) -> None:
    words = _words("4")
    _, records = _run_with_set(
        vk, _instrument(words), [0, 3, 1, 2], *_with_state(0, _state(None, size=3))
    )
    sample = origins(words, Op.ImageSampleExplicitLod)[0]
    assert records == _records([(1, ErrorCode.INDEX_OUT_OF_BOUNDS, 3, 3)], sample)


def test_no_state_means_unknown(vk: VulkanContext) -> None:
    words = _words()
    indices = [3, 2, 1, 0]
    values, records = _run_with_set(
        vk, _instrument(words), indices, *_with_state(NO_STATE, _state(unwritten=2))
    )
    assert records == []
    assert values[0::4] == [4.0, 3.0, 2.0, 1.0]


def _context(
    vk: VulkanContext, debug: object, bound: np.ndarray, state: list[int], data_words: int
) -> object:
    bound_buffer = vk.buffer(data=bound)
    state_buffer = vk.buffer(data=np.array(state, np.uint32))
    addresses = [
        debug.buffer.device_address,  # type: ignore[attr-defined]
        bound_buffer.device_address,
        state_buffer.device_address,
        data_words,
    ]
    assert CONTEXT_ADDRESSES == 3
    return vk.buffer(data=np.array(addresses, np.uint64))


@pytest.mark.parametrize("source", ["push", "spec"])
def test_context_address_modes(vk: VulkanContext, source: str) -> None:
    vk.require("bufferDeviceAddress", "shaderInt64")
    words = _words()
    debug = vk.debug_buffer(capacity_words=256)
    context = _context(vk, debug, *_with_state(0, _state(unwritten=2)), debug.capacity_words)
    address = context.device_address  # type: ignore[attr-defined]
    out = vk.buffer(4 * 16)
    app = {0: _app_set(vk, [1, 2, 4, 0], out)}
    if source == "push":
        checked = _instrument(words, context=PushConstantAddress(0))
        vk.run_compute(checked, app, push_constants=struct.pack("<Q", address))
    else:
        checked = _instrument(words, context=SpecializationAddress(40, 41))
        spec = {40: address & 0xFFFF_FFFF, 41: address >> 32}
        vk.run_compute(checked, app, specialization=spec)
    assert f"DescriptorSet {DEBUG_SET}" not in disassemble(checked)  # no set needed
    sample = origins(words, Op.ImageSampleExplicitLod)[0]
    assert sorted(debug.records(), key=lambda r: r.stage_words) == _records(
        [
            (1, ErrorCode.DESCRIPTOR_UNINITIALIZED, 2, 4),
            (2, ErrorCode.INDEX_OUT_OF_BOUNDS, 4, 4),
        ],
        sample,
    )


# 11: one 10-word record and the word that counts lost printf lines (RESERVED_TAIL_WORDS).
@pytest.mark.parametrize(("data_words", "kept"), [(0, 2), (11, 1)])
def test_context_data_words_bound_the_records(
    vk: VulkanContext, data_words: int, kept: int
) -> None:
    """0 stands for MIN_CONTEXT_DATA_WORDS (every block holds that many); otherwise the
    context's word count is the bound, even when the buffer is larger."""
    vk.require("bufferDeviceAddress", "shaderInt64")
    assert MIN_CONTEXT_DATA_WORDS >= 2 * 10
    debug = vk.debug_buffer(capacity_words=MIN_CONTEXT_DATA_WORDS)
    context = _context(vk, debug, *_with_state(0, _state(unwritten=2)), data_words)
    out = vk.buffer(4 * 16)
    checked = _instrument(_words(), context=PushConstantAddress(0))
    push = struct.pack("<Q", context.device_address)  # type: ignore[attr-defined]
    vk.run_compute(checked, {0: _app_set(vk, [1, 2, 4, 0], out)}, push_constants=push)
    assert len(debug.records()) == kept
    assert debug.written_length == 10 + 10


def test_action_tables_say_where_each_binding_starts_and_its_size() -> None:
    state = [0] * 10 + region_words({0: 3, 2: 5})
    region = 10
    area = bound_sets_area(state, NO_STATE, region)
    assert list(area[:2]) == [NO_STATE, region]
    assert area[table_entry_word(0, 0)] == NO_STATE  # no set bound at 0
    first = region + state[region + binding_table_word(0)]
    assert list(area[table_entry_word(1, 0) : table_entry_word(1, 0) + 2]) == [first, 3]
    assert area[table_entry_word(1, 1) + 1] == 0  # binding 1 is not in the layout
    third = region + state[region + binding_table_word(2)]
    assert list(area[table_entry_word(1, 2) : table_entry_word(1, 2) + 2]) == [third, 5]
    assert list(area[table_entry_word(1, 3) : table_entry_word(1, 3) + 2]) == [region, 0]
    assert len(area) == BOUND_AREA_WORDS


LOOP_COMP = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) uniform sampler2D textures[4];
layout(set = 0, binding = 1) readonly buffer Indices { uint index[4]; } indices;
layout(set = 0, binding = 2) buffer Out { vec4 v[4]; } o;
void main() {
    uint i = gl_GlobalInvocationID.x;
    vec4 sum = vec4(0.0);
    for (uint k = 0u; k < 2u; ++k) {
        sum += texture(textures[nonuniformEXT(indices.index[i])], vec2(0.5));
    }
    o.v[i] = sum;
}
"""


def _loop_run(
    vk: VulkanContext, indices: list[int], unwritten: int | None
) -> tuple[list[float], list[tuple[int, ErrorCode, int]]]:
    words = compile_glsl(LOOP_COMP, "comp", target_env="vulkan1.2")
    instrumented = _instrument(words)
    # a loop's access of a binding of 4 descriptors: the binding's verdict, then the access
    assert "OpFunctionCall %bool %gpuav_table_word_fits" in disassemble(instrumented)
    values, records = _run_with_set(
        vk, instrumented, indices, *_with_state(0, _state(unwritten, size=4))
    )
    found = sorted({(r.stage_words[0], r.error_code, r.descriptor_index) for r in records})
    return values, found


def test_a_loop_with_every_descriptor_usable_passes_on_the_verdict(vk: VulkanContext) -> None:
    values, found = _loop_run(vk, [3, 2, 1, 0], unwritten=None)
    assert found == []
    assert values[0::4] == [8.0, 6.0, 4.0, 2.0]  # two samples of texture i + 1 each


def test_an_unwritten_descriptor_no_invocation_uses_reports_nothing(vk: VulkanContext) -> None:
    # The verdict fails (descriptor 2 is unwritten), so every access takes the full check,
    # which passes for the descriptors actually used.
    values, found = _loop_run(vk, [3, 1, 0, 0], unwritten=2)
    assert found == []
    assert values[0::4] == [8.0, 4.0, 2.0, 2.0]


def test_a_loop_reports_the_descriptors_it_cannot_use(vk: VulkanContext) -> None:
    values, found = _loop_run(vk, [0, 2, 4, 1], unwritten=2)
    assert found == [
        (1, ErrorCode.DESCRIPTOR_UNINITIALIZED, 2),
        (2, ErrorCode.INDEX_OUT_OF_BOUNDS, 4),
    ]
    assert values[0::4] == [2.0, 0.0, 0.0, 4.0]


def test_an_access_outside_loops_reads_only_its_own_descriptor() -> None:
    text = disassemble(_instrument(_words("4")))  # the same array of 4, without the loop
    assert "%gpuav_check_in_table" in text
    assert "%gpuav_table_word_fits" not in text
