"""Instrumented compute shaders on lavapipe: exact records, null results, identical output.

Indices cover in bounds, one past the end, far (1000) and negative (-1, i.e. 0xFFFFFFFF).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from gpuav.instrument.record import (
    ErrorCode,
    ErrorRecord,
    Stage,
    pack_compute_yz,
    pack_set_binding,
)
from gpuav.spirv.grammar import Op
from tests.harness import Binding, VulkanContext
from tests.instrument.util import SHADER_ID, instrumented, origins
from tests.shaders.glsl import compile_glsl

pytestmark = pytest.mark.vulkan

BAD_INDICES = [3, 1000, 0xFFFF_FFFF]

TEXTURE_COMP = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) uniform sampler2D textures[3];
layout(set = 0, binding = 1) readonly buffer Indices { uint index[4]; } indices;
layout(set = 0, binding = 2) buffer Out { vec4 v[4]; } o;
void main() {
    uint i = gl_GlobalInvocationID.x;
    o.v[i] = texture(textures[nonuniformEXT(indices.index[i])], vec2(0.5));
}
"""

BUFFER_COMP = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) buffer Data { uint count; uint values[]; } data[2];
layout(set = 0, binding = 1) readonly buffer Indices { uint index[4]; } indices;
layout(set = 0, binding = 2) buffer Out { uint v[16]; } o;
layout(set = 0, binding = 3) uniform Params { uint scale; } params[2];
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint k = indices.index[i];
    o.v[4 * i] = data[nonuniformEXT(k)].values[1];
    data[nonuniformEXT(k)].values[2 + i] = 40u + i;
    o.v[4 * i + 1] = atomicAdd(data[nonuniformEXT(k)].count, 1u);
    o.v[4 * i + 2] = uint(data[nonuniformEXT(k)].values.length());
    o.v[4 * i + 3] = params[nonuniformEXT(k)].scale;
}
"""


def _textures(vk: VulkanContext, count: int) -> list[tuple[object, object]]:
    sampler = vk.sampler()
    pairs = []
    for i in range(count):
        image = vk.image(1, 1, "R32G32B32A32_SFLOAT")
        image.upload(np.array([[[i + 1.0, 0.5, 0.25, 1.0]]], np.float32))
        pairs.append((image.view(), sampler))
    return pairs


def _compute_record(x: int, instruction: int, index: int, length: int) -> ErrorRecord:
    return ErrorRecord(
        SHADER_ID,
        instruction,
        Stage.COMPUTE,
        (x, pack_compute_yz(0, 0)),
        ErrorCode.INDEX_OUT_OF_BOUNDS,
        index,
        length,
        (pack_set_binding(0, 0),),  # the failing descriptor's set and binding
    )


def _run_texture(
    vk: VulkanContext, words: list[int], index: list[int]
) -> tuple[list[float], object]:
    out = vk.buffer(4 * 16)
    debug = vk.debug_buffer(capacity_words=256)
    sets = {
        0: [
            Binding(0, "combined_image_sampler", _textures(vk, 3)),
            Binding(1, "storage_buffer", [vk.buffer(data=np.array(index, np.uint32))]),
            Binding(2, "storage_buffer", [out]),
        ],
        **debug.sets(),
    }
    result = vk.run_compute(words, sets)
    return result.buffer(out, np.float32).tolist(), debug


def test_sampled_image_array_out_of_bounds_records(vk: VulkanContext) -> None:
    words = compile_glsl(TEXTURE_COMP, "comp", target_env="vulkan1.2")
    checked = instrumented(words)
    values, debug = _run_texture(vk, checked, [1, *BAD_INDICES])
    sample = origins(words, Op.ImageSampleExplicitLod)[0]
    assert sorted(debug.records(), key=lambda r: r.stage_words) == [  # type: ignore[attr-defined]
        _compute_record(x, sample, index, 3) for x, index in enumerate(BAD_INDICES, start=1)
    ]
    assert values[:4] == [2.0, 0.5, 0.25, 1.0]
    assert values[4:] == [0.0] * 12  # the failing path yields a null vec4


def test_in_bounds_texture_run_is_identical(vk: VulkanContext) -> None:
    words = compile_glsl(TEXTURE_COMP, "comp", target_env="vulkan1.2")
    original, _ = _run_texture(vk, words, [2, 0, 1, 2])
    checked, debug = _run_texture(vk, instrumented(words), [2, 0, 1, 2])
    assert checked == original
    assert debug.records() == [] and debug.written_length == 0  # type: ignore[attr-defined]


def _run_buffers(
    vk: VulkanContext, words: list[int], index: list[int]
) -> tuple[list[int], list[list[int]], object]:
    data = [
        vk.buffer(data=np.array([10 * b, 100 + b, 200 + b, 0, 0, 0, 0, 0], np.uint32))
        for b in range(2)
    ]
    params = [vk.buffer(data=np.array([7 + b], np.uint32)) for b in range(2)]
    out = vk.buffer(4 * 16)
    debug = vk.debug_buffer(capacity_words=512)
    sets = {
        0: [
            Binding(0, "storage_buffer", data),
            Binding(1, "storage_buffer", [vk.buffer(data=np.array(index, np.uint32))]),
            Binding(2, "storage_buffer", [out]),
            Binding(3, "uniform_buffer", params),
        ],
        **debug.sets(),
    }
    result = vk.run_compute(words, sets)
    return result.buffer(out).tolist(), [result.buffer(b).tolist() for b in data], debug


def test_buffer_array_accesses_out_of_bounds(vk: VulkanContext) -> None:
    words = compile_glsl(BUFFER_COMP, "comp", target_env="vulkan1.2")
    out, data, debug = _run_buffers(vk, instrumented(words), [1, 2, 1000, 0xFFFF_FFFF])
    # Invocation 0 reads and writes buffer 1; the others touch nothing.
    assert out[:4] == [201, 10, 7, 8]
    assert out[4:] == [0] * 12
    assert data == [[0, 100, 200, 0, 0, 0, 0, 0], [11, 101, 201, 40, 0, 0, 0, 0]]
    records = debug.records()  # type: ignore[attr-defined]
    # Five accesses per bad invocation: load, store, atomic, array length, uniform load.
    assert len(records) == 15
    by_invocation = {
        x: sorted(r.instruction_index for r in records if r.stage_words[0] == x) for x in (1, 2, 3)
    }
    assert by_invocation[1] == by_invocation[2] == by_invocation[3]
    assert len(set(by_invocation[1])) == 5
    for record in records:
        x = record.stage_words[0]
        assert record.descriptor_index == [0, 2, 1000, 0xFFFF_FFFF][x]
        assert record.array_length == 2 and record.stage is Stage.COMPUTE


def test_in_bounds_buffer_run_is_identical(vk: VulkanContext) -> None:
    words = compile_glsl(BUFFER_COMP, "comp", target_env="vulkan1.2")
    indices = [1, 0, 1, 0]
    original = _run_buffers(vk, words, indices)
    checked = _run_buffers(vk, instrumented(words), indices)
    assert checked[0] == original[0] and checked[1] == original[1]
    assert checked[2].records() == []  # type: ignore[attr-defined]


def test_error_flood_keeps_whole_records(vk: VulkanContext) -> None:
    flood = TEXTURE_COMP.replace("index[4]", "index[]").replace("v[4]", "v[]")
    words = instrumented(compile_glsl(flood, "comp", target_env="vulkan1.2"))
    out = vk.buffer(4 * 16 * 64)
    debug = vk.debug_buffer(capacity_words=44)  # room for four 10-word records and 4 words
    sets = {
        0: [
            Binding(0, "combined_image_sampler", _textures(vk, 3)),
            Binding(1, "storage_buffer", [vk.buffer(data=np.full(64, 5, np.uint32))]),
            Binding(2, "storage_buffer", [out]),
        ],
        **debug.sets(),
    }
    vk.run_compute(words, sets, group_count=(16, 1, 1))  # 64 invocations, 16 distinct x
    records = debug.records()
    assert len(records) == 4
    assert debug.written_length == 10 * 64
    assert debug.words()[1 + 40 :].tolist() == [0] * 4
    assert all(
        r.error_code is ErrorCode.INDEX_OUT_OF_BOUNDS and r.array_length == 3 for r in records
    )


CALL_COMP = """#version 450
layout(local_size_x = 2) in;
layout(set = 0, binding = 0) uniform sampler2D textures[3];
layout(set = 0, binding = 2) buffer Out { vec4 v[2]; } o;
layout(push_constant) uniform P { uint index; } p;
vec4 fetch(sampler2D s) { return textureLod(s, vec2(0.5), 0.0); }
void main() { o.v[gl_GlobalInvocationID.x] = fetch(textures[p.index]); }
"""


@pytest.mark.parametrize("index", [2, 3, 0xFFFF_FFFF])
def test_descriptor_passed_to_a_function_guards_the_call(vk: VulkanContext, index: int) -> None:
    words = compile_glsl(CALL_COMP, "comp", target_env="vulkan1.2")
    out = vk.buffer(4 * 8)
    debug = vk.debug_buffer(capacity_words=64)
    sets = {
        0: [
            Binding(0, "combined_image_sampler", _textures(vk, 3)),
            Binding(2, "storage_buffer", [out]),
        ],
        **debug.sets(),
    }
    result = vk.run_compute(instrumented(words), sets, push_constants=struct.pack("<I", index))
    values = result.buffer(out, np.float32).tolist()
    call = origins(words, Op.FunctionCall)[0]
    if index < 3:
        assert values == [index + 1.0, 0.5, 0.25, 1.0] * 2 and debug.records() == []
        return
    assert values == [0.0] * 8
    assert sorted(debug.records(), key=lambda r: r.stage_words) == [
        _compute_record(x, call, index, 3) for x in (0, 1)
    ]
