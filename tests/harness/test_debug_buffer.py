"""The debug output buffer on lavapipe: records written by compute and fragment shaders at the
reserved set decode to what record.py encodes, and only whole records are kept.

Runs under the ``vk`` fixture, which fails a test if the validation layer reports an error
about the harness's own Vulkan usage.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage
from tests.harness import Binding, VulkanContext, decode_records
from tests.harness.shaders import FULLSCREEN_TRIANGLE_VERT, glsl

pytestmark = pytest.mark.vulkan

DEBUG_RECORD_COMP = """#version 450
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) readonly buffer Indices { uint index[]; } app;
layout(set = 7, binding = 0) buffer Out { uint written; uint data[]; } debug_output;

// The protocol of seed 000, by hand: claim space atomically, write only whole records.
void write_record(uint code, uint descriptor_index) {
    uint size = 10u;  // both errors: index, array length, set and binding
    uint at = atomicAdd(debug_output.written, size);
    if (at + size > uint(debug_output.data.length())) return;
    debug_output.data[at + 1u] = 0x5Au;                        // shader id
    debug_output.data[at + 2u] = 42u;                          // instruction index
    debug_output.data[at + 3u] = 5u;                           // stage: compute
    debug_output.data[at + 4u] = gl_GlobalInvocationID.x;
    debug_output.data[at + 5u] = 0u;
    debug_output.data[at + 6u] = code;
    debug_output.data[at + 7u] = descriptor_index;
    debug_output.data[at + 8u] = 2u;                           // array length
    debug_output.data[at + 9u] = 0xFFFFFFFFu;                  // no set and binding
    debug_output.data[at] = size;
}

void main() {
    uint i = app.index[gl_GlobalInvocationID.x];
    if (i >= 100u) write_record(1u, i - 100u);
    else if (i >= 2u) write_record(0u, i);
}
"""


def _compute_record(invocation: int, code: ErrorCode, index: int) -> ErrorRecord:
    return ErrorRecord(
        shader_id=0x5A,
        instruction_index=42,
        stage=Stage.COMPUTE,
        stage_words=(invocation, 0),
        error_code=code,
        descriptor_index=index,
        array_length=2,
    )


def _sorted_records(records: list[ErrorRecord]) -> list[ErrorRecord]:
    return sorted(records, key=lambda r: r.stage_words)


def test_debug_buffer_records_from_compute_at_set_7(vk: VulkanContext) -> None:
    words = glsl(DEBUG_RECORD_COMP, "comp")
    indices = vk.buffer(data=np.array([0, 5, 1, 103], np.uint32))
    debug = vk.debug_buffer(capacity_words=64)
    sets = {0: [Binding(0, "storage_buffer", [indices])], **debug.sets()}
    result = vk.run_compute(words, sets)
    assert debug.written_length == 10 + 10
    assert _sorted_records(debug.records()) == [
        _compute_record(1, ErrorCode.INDEX_OUT_OF_BOUNDS, 5),
        _compute_record(3, ErrorCode.DESCRIPTOR_UNINITIALIZED, 3),
    ]
    assert debug.buffer in result.buffers  # the snapshot decodes the same way
    assert decode_records(result.buffer(debug.buffer)) == debug.records()
    for record in debug.records():  # the encoder in record.py writes what the shader wrote
        words_in_buffer = debug.words()[1:].tolist()
        encoded = record.encode()
        assert any(
            words_in_buffer[k : k + len(encoded)] == encoded for k in range(len(words_in_buffer))
        )


def test_debug_buffer_keeps_only_whole_records(vk: VulkanContext) -> None:
    words = glsl(DEBUG_RECORD_COMP, "comp")
    indices = vk.buffer(data=np.array([2, 3, 4, 5], np.uint32))  # four 10-word records
    debug = vk.debug_buffer(capacity_words=21)  # room for two
    vk.run_compute(words, {0: [Binding(0, "storage_buffer", [indices])], **debug.sets()})
    records = debug.records()
    assert debug.written_length == 40
    assert len(records) == 2
    assert all(r.error_code is ErrorCode.INDEX_OUT_OF_BOUNDS for r in records)
    assert debug.words()[1 + 20 :].tolist() == [0]  # nothing past the last whole record
    debug.reset()
    assert debug.records() == [] and debug.written_length == 0


def test_debug_buffer_record_from_fragment_shader(vk: VulkanContext) -> None:
    frag = glsl(
        """#version 450
        layout(location = 0) out vec4 color;
        layout(set = 0, binding = 0) uniform U { uvec2 target; } app;
        layout(set = 7, binding = 0) buffer Out { uint written; uint data[]; } debug_output;
        void main() {
            uvec2 pixel = uvec2(gl_FragCoord.xy);
            if (pixel == app.target) {
                uint at = atomicAdd(debug_output.written, 10u);
                if (at + 10u <= uint(debug_output.data.length())) {
                    uint record[10] = uint[](10u, 7u, 11u, 4u, pixel.x, pixel.y, 0u, 3u, 3u,
                                             0xFFFFFFFFu);
                    for (int k = 0; k < 10; ++k) debug_output.data[at + uint(k)] = record[k];
                }
            }
            color = vec4(0.0, 1.0, 0.0, 1.0);
        }
        """,
        "frag",
    )
    target = vk.buffer(data=np.array([2, 3], np.uint32))
    debug = vk.debug_buffer(capacity_words=32)
    sets = {0: [Binding(0, "uniform_buffer", [target])], **debug.sets()}
    result = vk.run_graphics(glsl(FULLSCREEN_TRIANGLE_VERT, "vert"), frag, sets, width=8, height=8)
    assert result.color[3, 2].tolist() == [0, 255, 0, 255]
    assert debug.records() == [
        ErrorRecord(7, 11, Stage.FRAGMENT, (2, 3), ErrorCode.INDEX_OUT_OF_BOUNDS, 3, 3)
    ]
