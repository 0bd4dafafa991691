"""Device-address checks: every load, store, atomic and copy through a PhysicalStorageBuffer
pointer is compared with the layer's table of live buffers (``address_table``). Exact records
on lavapipe for in range, one past the end, far out, before the start, a destroyed buffer (no
longer in the table) and a misaligned address; failing accesses skipped, correct programs
unchanged; every emitted module passes spirv-val."""

from __future__ import annotations

import numpy as np
import pytest

from gpuav.instrument.address_table import TABLE_OFFSET_WORD, table_words
from gpuav.instrument.api import instrument_module, instrument_shader
from gpuav.instrument.descriptor_state import NO_STATE, PushConstantAddress
from gpuav.instrument.device_addresses import UNCHECKABLE
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage, pack_compute_yz
from gpuav.spirv import read
from gpuav.spirv.grammar import Op
from tests.harness import Binding, DescriptorSetSpec, VulkanContext
from tests.instrument.util import DEBUG_SET, SHADER_ID, bound_sets_area, origins
from tests.shaders.glsl import TargetEnv, compile_glsl, spirv_val

SHADER = """#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 8) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Data { uint v[]; };
layout(set = 0, binding = 0) buffer In { Data data; int index[8]; } inp;
layout(set = 0, binding = 1) buffer Out { uint o[8]; } o;
void main() {
    uint i = gl_GlobalInvocationID.x;
    o.o[i] = inp.data.v[inp.index[i]];
}
"""
SHAPES = """#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_scalar_block_layout : require
layout(local_size_x = 1) in;
layout(buffer_reference) buffer Node;
layout(buffer_reference, scalar, buffer_reference_align = 16) buffer Node {
    vec3 v; uint x[4]; layout(row_major) mat3x2 m; Node next;
};
layout(set = 0, binding = 0) buffer In { Node node; uint index; uint result; } inp;
void main() {
    inp.node.x[inp.index] = 7u;
    inp.result = inp.node.x[0] + atomicAdd(inp.node.x[1], 2u);
    inp.node.v = vec3(inp.node.m[1], 1.0);
    mat3x2 copy = inp.node.m;
    inp.node.next.m = copy;
}
"""
DATA_WORDS = 4
INDICES = [0, 3, 4, 100, -1, 2, 1, 0]


def _instrument(
    words: list[int], target_env: TargetEnv = "vulkan1.2", **options: object
) -> list[int]:
    out = instrument_shader(
        words, shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True, **options
    )
    assert out != words
    spirv_val(out, target_env)
    return out


@pytest.mark.parametrize("target_env", ["vulkan1.0", "vulkan1.2", "vulkan1.3"])
@pytest.mark.parametrize("pushed", [False, True])
def test_instrumented_modules_pass_spirv_val(target_env: TargetEnv, pushed: bool) -> None:
    words = compile_glsl(SHAPES, "comp", target_env=target_env)
    context = PushConstantAddress(128) if pushed else None
    _instrument(words, target_env, shader_int64=True, context_address=context)


def test_sizes_and_alignments_come_from_the_explicit_layout() -> None:
    words = compile_glsl(SHAPES, "comp", target_env="vulkan1.2")
    result = instrument_module(
        read(words), shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    spans = sorted(
        (access.consumer.name, span.size, span.alignment)
        for access in result.address_findings.accesses
        for span in access.spans
    )
    # uint 4 (the atomic has no Aligned operand); vec3 12 (scalar layout, promised 16); the
    # row-major mat3x2 spans 2 rows 12 bytes apart, 24 bytes; its column m[1] counts as a
    # packed vec2 (8 bytes: a strided column is not traced yet).
    assert spans == sorted(
        [
            ("OpStore", 4, 4),
            ("OpLoad", 4, 4),
            ("OpAtomicIAdd", 4, 0),
            ("OpStore", 12, 16),
            ("OpLoad", 8, 4),
            ("OpLoad", 24, 4),
            ("OpStore", 24, 4),
        ]
    ), spans
    # Loading the next pointer: a pointer result has no null value to stand in for it.
    assert [reason for _, reason in result.address_findings.unchecked] == [
        "a result with no null value"
    ]


def test_pointers_before_spirv_1_5_without_int64_stay_unchecked() -> None:
    words = compile_glsl(SHADER, "comp", target_env="vulkan1.0")
    result = instrument_module(
        read(words), shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    assert result.address_findings.accesses == []
    assert [reason for _, reason in result.address_findings.unchecked] == [UNCHECKABLE]


def _run(
    vk: VulkanContext,
    words: list[int],
    table: list[int] | None,
    indices: list[int] = INDICES,
    published: bool = True,
) -> tuple[list[int], list[ErrorRecord], int]:
    """Run with the table ``table`` (None: the data buffer's) at state word 1."""
    data = vk.buffer(data=np.arange(10, 10 + DATA_WORDS, dtype=np.uint32))
    address = data.device_address
    inputs = np.zeros(2 + 8, np.uint32)
    inputs[0], inputs[1] = address & 0xFFFF_FFFF, address >> 32
    inputs[2:] = np.array(indices, np.int32).view(np.uint32)
    out = vk.buffer(4 * 8)
    debug = vk.debug_buffer(capacity_words=1024)
    bound = bound_sets_area([], NO_STATE)
    state = [0, *(table_words([(address, 4 * DATA_WORDS)]) if table is None else table)]
    state[TABLE_OFFSET_WORD] = 1 if published else 0
    app = [
        Binding(0, "storage_buffer", [vk.buffer(data=inputs)]),
        Binding(1, "storage_buffer", [out]),
    ]
    ours = DescriptorSetSpec(
        [
            debug.binding(),
            Binding(1, "uniform_buffer", [vk.buffer(data=bound)]),
            Binding(2, "storage_buffer", [vk.buffer(data=np.array(state, np.uint32))]),
        ]
    )
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours})
    records = sorted(debug.records(), key=lambda r: r.stage_words)
    return result.buffer(out).tolist(), records, address


def _record(instruction: int, x: int, address: int) -> ErrorRecord:
    return ErrorRecord(
        SHADER_ID,
        instruction,
        Stage.COMPUTE,
        (x, pack_compute_yz(0, 0)),
        ErrorCode.ADDRESS_OUT_OF_BOUNDS,
        0,
        details=(address & 0xFFFF_FFFF, address >> 32, 4, 4),
    )


@pytest.mark.vulkan
@pytest.mark.parametrize("target_env", ["vulkan1.0", "vulkan1.2"])
def test_accesses_outside_the_buffer_are_reported_and_skipped(
    vk: VulkanContext, target_env: TargetEnv
) -> None:
    words = compile_glsl(SHADER, "comp", target_env=target_env)
    out, records, address = _run(vk, _instrument(words, target_env, shader_int64=True), None)
    load = origins(words, Op.Load)[-1]
    expected = [
        _record(load, x, address + 4 * at)
        for x, at in enumerate(INDICES)
        if not 0 <= at < DATA_WORDS
    ]
    assert records == expected
    assert out == [10 + at if 0 <= at < DATA_WORDS else 0 for at in INDICES]


@pytest.mark.vulkan
def test_correct_program_is_unchanged_and_silent(vk: VulkanContext) -> None:
    words = compile_glsl(SHADER, "comp", target_env="vulkan1.2")
    inside = [3, 2, 1, 0, 0, 1, 2, 3]
    plain, _, _ = _run(vk, words, None, inside)
    out, records, _ = _run(vk, _instrument(words), None, inside)
    assert records == []
    assert out == plain


@pytest.mark.vulkan
def test_a_buffer_missing_from_the_table_fails_every_access(vk: VulkanContext) -> None:
    """A destroyed buffer is no longer published: every access into it is reported."""
    words = compile_glsl(SHADER, "comp", target_env="vulkan1.2")
    out, records, _ = _run(vk, _instrument(words), table_words([]), [0, 1, 2, 3] * 2)
    assert len(records) == 8
    assert out == [0] * 8


@pytest.mark.vulkan
def test_no_published_table_checks_nothing(vk: VulkanContext) -> None:
    words = compile_glsl(SHADER, "comp", target_env="vulkan1.2")
    out, records, _ = _run(vk, _instrument(words), None, published=False)
    assert records == []
    assert out[:2] == [10, 13]  # index 4 then reads past the buffer, unchecked


LOOP = """#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 1) in;
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Data { uint v[]; };
layout(set = 0, binding = 0) buffer In { Data data; int index[8]; } inp;
layout(set = 0, binding = 1) buffer Out { uint o[8]; } o;
void main() {
    for (int k = 0; k < 8; ++k) {
        o.o[k] = inp.data.v[inp.index[k]];
    }
}
"""


@pytest.mark.vulkan
def test_the_remembered_stretch_lets_no_access_outside_through(vk: VulkanContext) -> None:
    """One invocation walks the buffer: after an access inside, the stretch it found is
    remembered, yet the accesses outside between accesses inside are still reported."""
    words = compile_glsl(LOOP, "comp", target_env="vulkan1.2")
    out, records, address = _run(vk, _instrument(words), None)
    load = records[0].instruction_index if records else -1
    assert load in origins(words, Op.Load)
    assert records == [
        _record(load, 0, address + 4 * at) for at in INDICES if not 0 <= at < DATA_WORDS
    ]
    assert out == [10 + at if 0 <= at < DATA_WORDS else 0 for at in INDICES]
