"""Instrumented vertex and fragment shaders on lavapipe (offscreen): exact records with their
stage words, null results on the failing path, identical images when every index is valid."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage, pack_set_binding
from gpuav.spirv.grammar import Op
from tests.harness import Binding, VulkanContext
from tests.instrument.util import SHADER_ID, instrumented, load_origins, origins
from tests.shaders.glsl import compile_glsl

pytestmark = pytest.mark.vulkan

OFFSET_VERT = """#version 450
layout(set = 0, binding = 0) uniform Offsets { vec4 offset; } offsets[2];
layout(push_constant) uniform P { uint bad_vertex; uint bad_index; } p;
void main() {
    vec2 corners[3] = vec2[](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(-1.0, 1.0));
    uint k = uint(gl_VertexIndex) == p.bad_vertex ? p.bad_index : 1u;
    gl_Position = vec4(corners[gl_VertexIndex], 0.0, 1.0) + offsets[k].offset;
}
"""

PLAIN_FRAG = """#version 450
layout(location = 0) out vec4 color;
void main() { color = vec4(1.0, 0.0, 0.0, 1.0); }
"""

FULLSCREEN_VERT = """#version 450
void main() {
    vec2 corners[3] = vec2[](vec2(-1.0, -1.0), vec2(3.0, -1.0), vec2(-1.0, 3.0));
    gl_Position = vec4(corners[gl_VertexIndex], 0.0, 1.0);
}
"""

TEXTURE_FRAG = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) uniform sampler2D textures[2];
layout(push_constant) uniform P { uvec2 target; uint bad_index; } p;
layout(location = 0) out vec4 color;
void main() {
    uvec2 pixel = uvec2(gl_FragCoord.xy);
    uint k = pixel == p.target ? p.bad_index : 1u;
    color = texture(textures[nonuniformEXT(k)], vec2(0.5));
}
"""

SET_0_BINDING_0 = (pack_set_binding(0, 0),)  # the records' failing descriptor


def _glsl(source: str, stage: str) -> list[int]:
    return compile_glsl(source, stage, target_env="vulkan1.2")


def _offsets(vk: VulkanContext) -> Binding:
    zero = np.zeros(4, np.float32)
    return Binding(0, "uniform_buffer", [vk.buffer(data=zero), vk.buffer(data=zero)])


@pytest.mark.parametrize("bad_index", [2, 1000, 0xFFFF_FFFF])
def test_vertex_shader_uniform_block_array(vk: VulkanContext, bad_index: int) -> None:
    words = _glsl(OFFSET_VERT, "vert")
    debug = vk.debug_buffer(capacity_words=256)
    sets = {0: [_offsets(vk)], **debug.sets()}
    vk.run_graphics(
        instrumented(words),
        _glsl(PLAIN_FRAG, "frag"),
        sets,
        width=8,
        height=8,
        instance_count=2,
        push_constants=struct.pack("<II", 1, bad_index),
    )
    (load,) = load_origins(words, "offsets")
    expected = {
        ErrorRecord(
            SHADER_ID,
            load,
            Stage.VERTEX,
            (1, instance),
            ErrorCode.INDEX_OUT_OF_BOUNDS,
            bad_index,
            2,
            SET_0_BINDING_0,
        )
        for instance in (0, 1)
    }
    assert set(debug.records()) == expected


def test_vertex_shader_in_bounds_image_is_identical(vk: VulkanContext) -> None:
    words = _glsl(OFFSET_VERT, "vert")
    frag = _glsl(PLAIN_FRAG, "frag")
    images = []
    for vert in (words, instrumented(words)):
        debug = vk.debug_buffer(capacity_words=64)
        result = vk.run_graphics(
            vert,
            frag,
            {0: [_offsets(vk)], **debug.sets()},
            width=8,
            height=8,
            push_constants=struct.pack("<II", 1, 0),
        )
        images.append(result.color)
        assert debug.records() == []
    assert np.array_equal(images[0], images[1])


def _textures(vk: VulkanContext) -> Binding:
    sampler = vk.sampler()
    pairs = []
    for value in (64, 200):
        image = vk.image(1, 1, "R8G8B8A8_UNORM")
        image.upload(np.full((1, 1, 4), value, np.uint8))
        pairs.append((image.view(), sampler))
    return Binding(0, "combined_image_sampler", pairs)


@pytest.mark.parametrize("bad_index", [2, 1000, 0xFFFF_FFFF])
def test_fragment_shader_sampler_array(vk: VulkanContext, bad_index: int) -> None:
    words = _glsl(TEXTURE_FRAG, "frag")
    debug = vk.debug_buffer(capacity_words=256)
    result = vk.run_graphics(
        _glsl(FULLSCREEN_VERT, "vert"),
        instrumented(words),
        {0: [_textures(vk)], **debug.sets()},
        width=8,
        height=8,
        push_constants=struct.pack("<III", 2, 3, bad_index),
    )
    x_bits, y_bits = struct.unpack("<II", struct.pack("<ff", 2.5, 3.5))
    sample = origins(words, Op.ImageSampleImplicitLod)[0]
    assert debug.records() == [
        ErrorRecord(
            SHADER_ID,
            sample,
            Stage.FRAGMENT,
            (x_bits, y_bits),
            ErrorCode.INDEX_OUT_OF_BOUNDS,
            bad_index,
            2,
            SET_0_BINDING_0,
        )
    ]
    assert result.color[3, 2].tolist() == [0, 0, 0, 0]  # the null vec4 of the failing path
    assert result.color[0, 0].tolist() == [200, 200, 200, 200]


def test_fragment_shader_in_bounds_image_is_identical(vk: VulkanContext) -> None:
    words = _glsl(TEXTURE_FRAG, "frag")
    vert = _glsl(FULLSCREEN_VERT, "vert")
    images = []
    for frag in (words, instrumented(words)):
        debug = vk.debug_buffer(capacity_words=64)
        result = vk.run_graphics(
            vert,
            frag,
            {0: [_textures(vk)], **debug.sets()},
            width=8,
            height=8,
            push_constants=struct.pack("<III", 2, 3, 0),
        )
        images.append(result.color)
        assert debug.records() == []
    assert np.array_equal(images[0], images[1])
    assert images[0][3, 2].tolist() == [64, 64, 64, 64]


UBO = """layout(set = 0, binding = 0) uniform Offsets { vec4 offset; } offsets[2];
layout(push_constant) uniform P { uint bad_vertex; uint bad_index; } p;
"""
TESC = (
    "#version 450\nlayout(vertices = 3) out;\n"
    + UBO
    + """void main() {
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position
                                          + offsets[p.bad_index].offset;
    gl_TessLevelInner[0] = 1.0;
    gl_TessLevelOuter[0] = 1.0; gl_TessLevelOuter[1] = 1.0; gl_TessLevelOuter[2] = 1.0;
}
"""
)
TESE = (
    "#version 450\nlayout(triangles) in;\n"
    + UBO
    + """void main() {
    gl_Position = gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position
                + gl_TessCoord.z * gl_in[2].gl_Position + offsets[p.bad_index].offset;
}
"""
)
GEOM = (
    "#version 450\nlayout(triangles) in;\nlayout(triangle_strip, max_vertices = 3) out;\n"
    + UBO
    + """void main() {
    for (int i = 0; i < 3; ++i) {
        gl_Position = gl_in[i].gl_Position + offsets[p.bad_index].offset;
        EmitVertex();
    }
    EndPrimitive();
}
"""
)
PASS_TESC = """#version 450
layout(vertices = 3) out;
void main() {
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    gl_TessLevelInner[0] = 1.0;
    gl_TessLevelOuter[0] = 1.0; gl_TessLevelOuter[1] = 1.0; gl_TessLevelOuter[2] = 1.0;
}
"""
PASS_TESE = """#version 450
layout(triangles) in;
void main() {
    gl_Position = gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position
                + gl_TessCoord.z * gl_in[2].gl_Position;
}
"""

# stage -> (source, record stage, expected stage words)
STAGES = {
    "tesc": (TESC, Stage.TESSELLATION_CONTROL, {(i, 0) for i in range(3)}),
    "tese": (TESE, Stage.TESSELLATION_EVALUATION, {(0, 0)}),
    "geom": (GEOM, Stage.GEOMETRY, {(0, 0)}),
}


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_tessellation_and_geometry_stage_words(vk: VulkanContext, stage: str) -> None:
    vk.require("tessellationShader", "geometryShader")
    source, record_stage, stage_words = STAGES[stage]
    words = _glsl(source, stage)
    shaders = {"tesc": _glsl(PASS_TESC, "tesc"), "tese": _glsl(PASS_TESE, "tese"), "geom": None}
    shaders[stage] = instrumented(words)
    debug = vk.debug_buffer(capacity_words=512)
    vk.run_graphics(
        _glsl(FULLSCREEN_VERT, "vert"),
        _glsl(PLAIN_FRAG, "frag"),
        {0: [_offsets(vk)], **debug.sets()},
        width=8,
        height=8,
        tess_control_words=shaders["tesc"],
        tess_eval_words=shaders["tese"],
        geometry_words=shaders["geom"],
        push_constants=struct.pack("<II", 0, 9),
    )
    (load,) = load_origins(words, "offsets")
    code = ErrorCode.INDEX_OUT_OF_BOUNDS
    assert set(debug.records()) == {
        ErrorRecord(SHADER_ID, load, record_stage, pair, code, 9, 2, SET_0_BINDING_0)
        for pair in stage_words
    }
