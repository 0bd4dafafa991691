"""The byte spans the buffer-range checks compare: offsets and sizes from real glslang layouts
(std140, std430, scalar, row-major matrices, nested structs, arrays of blocks), and every
emitted module, with texel buffers and stages beyond compute, valid for spirv-val."""

from __future__ import annotations

import pytest

from gpuav.instrument.api import instrument_shader
from gpuav.instrument.buffer_spans import BufferSpan, find_buffer_accesses
from gpuav.spirv import read
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.disassembler import disassemble
from gpuav.spirv.grammar import Op
from tests.instrument.util import DEBUG_SET, SHADER_ID
from tests.shaders.glsl import compile_glsl, spirv_val

LAYOUTS = """#version 450
#extension GL_EXT_scalar_block_layout : require
layout(local_size_x = 1) in;
struct Inner { vec3 a; float b; mat2x3 m; };
layout(set = 0, binding = 0, std140) uniform U { float f; vec3 v; Inner inner[2]; } u;
layout(set = 0, binding = 1, std430) buffer S {
    float f; vec3 v; layout(row_major) mat3x2 r; Inner items[];
} s;
layout(set = 0, binding = 2, scalar) buffer Packed { vec3 p[]; } packed;
layout(set = 1, binding = 0) buffer Many { uint w[4]; } many[3];
layout(push_constant) uniform P { int i; } pc;
void main() {
    s.f = u.inner[1].b;             // store 4 @0 ; load 4 @ 32 + 48 + 12 (std140 Inner: 48)
    s.v = u.v;                      // store 12 @16 ; load 12 @16
    s.r[1] = vec2(u.f);             // row-major column 1: 4 @ 32+4, rows 16 apart -> 20
    s.items[pc.i].m[1].z = 1.0;     // 48*i + 64 + 16 + 16 + 8
    packed.p[pc.i].y = many[2].w[3];  // scalar: 12*i + 4 ; many[2]: 4 @ 12
}
"""


def _spans(words: list[int]) -> list[tuple[str, int, int, tuple[int, ...], int]]:
    """(opcode, set << 8 | binding, constant, strides of the index terms, size) per span."""
    module = read(words)
    types = Types({i.result_id: i for i in module.instructions() if i.result_id is not None})
    findings = find_buffer_accesses(module, types, Decorations(module))
    out = []
    for access in findings.accesses:
        for span in access.spans:
            out.append(_summary(access.consumer.name, span))
    return out


def _summary(name: str, span: BufferSpan) -> tuple[str, int, int, tuple[int, ...], int]:
    strides = tuple(term.stride for term in span.terms)
    return name, span.descriptor_set << 8 | span.binding, span.constant, strides, span.size


def test_spans_follow_the_explicit_layouts() -> None:
    words = compile_glsl(LAYOUTS, "comp", target_env="vulkan1.2")
    spans = _spans(words)
    assert ("OpLoad", 0, 32 + 48 + 12, (), 4) in spans
    assert ("OpLoad", 0, 0, (), 4) in spans
    assert ("OpStore", 1, 0, (), 4) in spans
    assert ("OpLoad", 0, 16, (), 12) in spans
    assert ("OpStore", 1, 16, (), 12) in spans
    assert ("OpStore", 1, 36, (), 20) in spans  # a row-major matrix's column
    assert ("OpStore", 1, 64 + 16 + 16 + 8, (48,), 4) in spans
    assert ("OpStore", 2, 4, (12,), 4) in spans  # scalar layout: vec3 is 12 bytes
    assert ("OpLoad", 1 << 8, 12, (), 4) in spans  # many[2].w[3]: the index picks the range
    # The push constant is not a buffer descriptor.
    assert len(spans) == 9


SHADERS = {
    "vertex": (
        "vert",
        """#version 450
layout(set = 0, binding = 0) readonly buffer Positions { vec4 p[]; } positions;
layout(set = 0, binding = 1) uniform Transform { mat4 m[4]; } transform;
void main() {
    gl_Position = transform.m[gl_InstanceIndex] * positions.p[gl_VertexIndex];
}
""",
    ),
    "fragment": (
        "frag",
        """#version 450
layout(set = 0, binding = 0) uniform samplerBuffer colors;
layout(set = 0, binding = 1, r32ui) uniform uimageBuffer counts[2];
layout(set = 0, binding = 2) buffer Hits { uint hits[]; } hits;
layout(location = 0) flat in int index;
layout(location = 0) out vec4 color;
void main() {
    color = texelFetch(colors, index);
    imageAtomicAdd(counts[index & 1], index, 1u);
    atomicAdd(hits.hits[index], 1u);
}
""",
    ),
    "compute_16bit_indices": (
        "comp",
        """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; } data;
layout(push_constant) uniform P { int16_t signed_index; uint16_t unsigned_index; } pc;
void main() {
    data.v[pc.signed_index] = data.v[pc.unsigned_index];
}
""",
    ),
}


@pytest.mark.parametrize("name", SHADERS)
def test_instrumented_modules_pass_spirv_val(name: str) -> None:
    stage, source = SHADERS[name]
    words = compile_glsl(source, stage, target_env="vulkan1.2")
    out = instrument_shader(
        words, shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    spirv_val(out, "vulkan1.2")
    text = disassemble(read(out))
    original = read(words)
    accesses = sum(
        1
        for i in original.instructions()
        if i.opcode in (Op.Load, Op.Store, Op.AtomicIAdd, Op.ImageFetch, Op.ImageTexelPointer)
    )
    # CHECK: every buffer and texel access got a check call.
    checks = text.count("OpFunctionCall %bool %gpuav_check_buffer_range") + text.count(
        "OpFunctionCall %bool %gpuav_check_texel"
    )
    assert checks >= 2
    assert checks <= accesses


POINTER_MEMBERS = """#version 450
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 1) in;
layout(buffer_reference, std430) buffer Data { uint v[]; };
layout(set = 0, binding = 0) uniform Pointers { Data data; Data result; } pointers;
void main() {
    pointers.result.v[0] = pointers.data.v[1];
}
"""


def test_loads_of_pointers_from_a_block_stay_unchecked_and_the_module_valid() -> None:
    """A pointer has no null value to stand in for a skipped load: such loads are left as they
    are, and nothing of their declined check stays behind."""
    words = compile_glsl(POINTER_MEMBERS, "comp", target_env="vulkan1.2")
    out = instrument_shader(
        words, shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    spirv_val(out, "vulkan1.2")
    assert "gpuav_buffer_range" not in disassemble(read(out))
