"""The harness itself, on lavapipe: compute, graphics, every descriptor type, the messenger.

Shaders are GLSL compiled at test time by ``tests.shaders.glsl.compile_glsl`` (cached on disk).
Every test runs under the ``vk`` fixture, which fails it if the validation layer reports an
error about the harness's own Vulkan usage.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
import vulkan as vkapi

from tests.harness import (
    PARTIALLY_BOUND,
    UPDATE_AFTER_BIND,
    VARIABLE_COUNT,
    Binding,
    BufferRange,
    DescriptorSetSpec,
    Draw,
    VertexBuffer,
    VulkanContext,
)
from tests.harness.shaders import FULLSCREEN_TRIANGLE_VERT, SOLID_FRAG, glsl

pytestmark = pytest.mark.vulkan


def test_compute_push_constants_and_specialization(vk: VulkanContext) -> None:
    words = glsl(
        """#version 450
        layout(local_size_x = 4) in;
        layout(set = 0, binding = 0) buffer Out { uint v[]; } o;
        layout(push_constant) uniform P { uint scale; } p;
        layout(constant_id = 0) const uint BIAS = 7;
        void main() { uint i = gl_GlobalInvocationID.x; o.v[i] = i * p.scale + BIAS; }
        """,
        "comp",
    )
    out = vk.buffer(16 * 4)
    result = vk.run_compute(
        words,
        {0: [Binding(0, "storage_buffer", [out])]},
        push_constants=np.array([3], np.uint32),
        specialization={0: 100},
        group_count=(4, 1, 1),
    )
    expected = np.arange(16, dtype=np.uint32) * 3 + 100
    assert result.buffer(out).tolist() == expected.tolist()
    assert out.array(np.uint32).tolist() == expected.tolist()


def test_compute_indirect_dispatch(vk: VulkanContext) -> None:
    words = glsl(
        """#version 450
        layout(local_size_x = 1) in;
        layout(set = 0, binding = 0) buffer Out { uint v[]; } o;
        void main() { atomicAdd(o.v[0], 1u); }
        """,
        "comp",
    )
    out = vk.buffer(4)
    indirect = vk.buffer(data=np.array([5, 2, 1], np.uint32))
    vk.run_compute(words, {0: [Binding(0, "storage_buffer", [out])]}, indirect_buffer=indirect)
    assert out.array()[0] == 10


def test_offscreen_triangle(vk: VulkanContext) -> None:
    result = vk.run_graphics(
        glsl(FULLSCREEN_TRIANGLE_VERT, "vert"), glsl(SOLID_FRAG, "frag"), width=16, height=16
    )
    color = result.color
    assert color.shape == (16, 16, 4) and color.dtype == np.uint8
    for y in range(16):
        for x in range(16):
            # Pixel centres with x + y + 1 < 16 are inside; skip the diagonal edge itself.
            if x + y + 1 < 16:
                assert color[y, x].tolist() == [255, 0, 0, 255], (x, y)
            elif x + y + 1 > 16:
                assert color[y, x].tolist() == [0, 0, 0, 0], (x, y)


def test_vertex_buffer_indexed_and_indirect_draws(vk: VulkanContext) -> None:
    vert = glsl(
        """#version 450
        layout(location = 0) in vec2 position;
        layout(location = 1) in vec4 tint;
        layout(location = 0) out vec4 v_tint;
        void main() { gl_Position = vec4(position, 0.0, 1.0); v_tint = tint; }
        """,
        "vert",
    )
    frag = glsl(
        """#version 450
        layout(location = 0) in vec4 v_tint;
        layout(location = 0) out vec4 color;
        void main() { color = v_tint; }
        """,
        "frag",
    )
    corners = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)]
    vertices = np.array([[x, y, 0.0, 0.0, 1.0, 1.0] for x, y in corners], np.float32)
    vertex_buffer = VertexBuffer(
        vk.buffer(data=vertices),
        stride=24,
        attributes=[(0, "R32G32_SFLOAT", 0), (1, "R32G32B32A32_SFLOAT", 8)],
    )
    indices = vk.buffer(data=np.array([0, 1, 2, 2, 3, 0], np.uint32))
    indexed = vk.run_graphics(
        vert,
        frag,
        width=8,
        height=8,
        vertex_buffer=vertex_buffer,
        draw=Draw(index_buffer=indices, index_count=6),
        color_format="R32G32B32A32_SFLOAT",
    )
    assert indexed.color.shape == (8, 8, 4)
    assert np.all(indexed.color == np.array([0.0, 0.0, 1.0, 1.0], np.float32))
    # vkCmdDrawIndexedIndirect: indexCount, instanceCount, firstIndex, vertexOffset, firstInstance
    command = vk.buffer(data=np.array([3, 1, 0, 0, 0], np.uint32))
    indirect = vk.run_graphics(
        vert,
        frag,
        width=8,
        height=8,
        vertex_buffer=vertex_buffer,
        draw=Draw(index_buffer=indices, indirect_buffer=command),
    )
    assert indirect.color[7, 0].tolist() == [0, 0, 0, 0]  # only the first triangle was drawn
    assert indirect.color[0, 7].tolist() == [0, 0, 255, 255]
    assert command in indirect.buffers


def test_tessellation_and_geometry_stages(vk: VulkanContext) -> None:
    vk.require("tessellationShader", "geometryShader")
    tesc = glsl(
        """#version 450
        layout(vertices = 3) out;
        void main() {
            gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
            gl_TessLevelInner[0] = 1.0;
            gl_TessLevelOuter[0] = 1.0; gl_TessLevelOuter[1] = 1.0; gl_TessLevelOuter[2] = 1.0;
        }
        """,
        "tesc",
    )
    tese = glsl(
        """#version 450
        layout(triangles) in;
        void main() {
            gl_Position = gl_TessCoord.x * gl_in[0].gl_Position
                        + gl_TessCoord.y * gl_in[1].gl_Position
                        + gl_TessCoord.z * gl_in[2].gl_Position;
        }
        """,
        "tese",
    )
    geom = glsl(
        """#version 450
        layout(triangles) in;
        layout(triangle_strip, max_vertices = 3) out;
        void main() {
            for (int i = 0; i < 3; ++i) { gl_Position = gl_in[i].gl_Position; EmitVertex(); }
            EndPrimitive();
        }
        """,
        "geom",
    )
    result = vk.run_graphics(
        glsl(FULLSCREEN_TRIANGLE_VERT, "vert"),
        glsl(SOLID_FRAG, "frag"),
        width=8,
        height=8,
        tess_control_words=tesc,
        tess_eval_words=tese,
        geometry_words=geom,
    )
    assert result.color[0, 0].tolist() == [255, 0, 0, 255]
    assert result.color[7, 7].tolist() == [0, 0, 0, 0]


def test_image_upload_download_layers_levels_formats(vk: VulkanContext) -> None:
    image = vk.image(4, 4, "R32_SFLOAT", layers=2, mip_levels=2)
    level1 = np.arange(4, dtype=np.float32).reshape(2, 2) + 0.5
    image.upload(level1, layer=1, level=1)
    assert image.download(layer=1, level=1).tolist() == level1.tolist()
    assert image.download(layer=0, level=0).shape == (4, 4)
    rgba = vk.image(2, 2, "R32G32B32A32_SFLOAT")
    data = np.arange(16, dtype=np.float32).reshape(2, 2, 4)
    rgba.upload(data)
    assert rgba.download().tolist() == data.tolist()


def _solid_textures(vk: VulkanContext, count: int) -> list[tuple[object, object]]:
    sampler = vk.sampler()
    pairs = []
    for i in range(count):
        image = vk.image(2, 2, "R8G8B8A8_UNORM")
        image.upload(np.full((2, 2, 4), [10 * (i + 1), i, 255 - i, 255], np.uint8))
        pairs.append((image.view(), sampler))
    return pairs


def test_texture_array_dynamic_index(vk: VulkanContext) -> None:
    words = glsl(
        """#version 450
        #extension GL_EXT_nonuniform_qualifier : require
        layout(local_size_x = 4) in;
        layout(set = 0, binding = 0) uniform sampler2D textures[4];
        layout(set = 0, binding = 1) uniform sampler2DArray layered;
        layout(set = 0, binding = 2) buffer Out { vec4 per_invocation[4]; vec4 uniform_pick;
                                                  vec4 layers[3]; } o;
        layout(push_constant) uniform P { uint pick; } p;
        void main() {
            uint i = gl_GlobalInvocationID.x;
            o.per_invocation[i] = texture(textures[nonuniformEXT(i)], vec2(0.5));
            if (i == 0u) {
                o.uniform_pick = texture(textures[p.pick], vec2(0.5));
                for (int l = 0; l < 3; ++l) o.layers[l] = texture(layered, vec3(0.5, 0.5, l));
            }
        }
        """,
        "comp",
    )
    layered = vk.image(1, 1, "R32_SFLOAT", layers=3)
    for layer in range(3):
        layered.upload(np.array([[layer + 0.25]], np.float32), layer=layer)
    out = vk.buffer(8 * 16)
    sampler = vk.sampler()
    sets = {
        0: [
            Binding(0, "combined_image_sampler", _solid_textures(vk, 4)),
            Binding(1, "combined_image_sampler", [(layered.view(), sampler)]),
            Binding(2, "storage_buffer", [out]),
        ]
    }
    result = vk.run_compute(words, sets, push_constants=struct.pack("<I", 2), group_count=(1, 1, 1))
    texels = np.rint(result.buffer(out, np.float32).reshape(8, 4)[:5] * 255).astype(int)
    expected = [[10 * (i + 1), i, 255 - i, 255] for i in range(4)]
    assert texels[:4].tolist() == expected
    assert texels[4].tolist() == expected[2]
    layers = result.buffer(out, np.float32).reshape(8, 4)[5:, 0]
    assert layers.tolist() == [0.25, 1.25, 2.25]


def test_every_descriptor_type(vk: VulkanContext) -> None:
    words = glsl(
        """#version 450
        layout(local_size_x = 1) in;
        layout(set = 0, binding = 0) uniform U { uint value; } ubo;
        layout(set = 0, binding = 1) readonly buffer S { uint value; } ssbo;
        layout(set = 0, binding = 2) uniform usamplerBuffer uniform_texels;
        layout(set = 0, binding = 3, r32ui) uniform uimageBuffer storage_texels;
        layout(set = 0, binding = 4) uniform texture2D sampled;
        layout(set = 0, binding = 5) uniform sampler only_sampler;
        layout(set = 0, binding = 6, r32ui) uniform uimage2D storage;
        layout(set = 0, binding = 7) uniform sampler2D combined;
        layout(set = 0, binding = 8) readonly buffer D { uint value; } dynamic_ssbo;
        layout(set = 1, binding = 0) buffer Out { uint v[8]; } o;
        void main() {
            o.v[0] = ubo.value;
            o.v[1] = ssbo.value;
            o.v[2] = texelFetch(uniform_texels, 1).x;
            o.v[3] = imageLoad(storage_texels, 2).x;
            imageStore(storage_texels, 3, uvec4(77u));
            o.v[4] = uint(texture(sampler2D(sampled, only_sampler), vec2(0.5)).x);
            o.v[5] = imageLoad(storage, ivec2(1, 0)).x;
            imageStore(storage, ivec2(0, 1), uvec4(99u));
            o.v[6] = uint(texture(combined, vec2(0.5)).x);
            o.v[7] = dynamic_ssbo.value;
        }
        """,
        "comp",
    )
    u32 = np.uint32
    texel_data = vk.buffer(data=np.array([0, 11, 12, 0], u32))
    sampled = vk.image(1, 1, "R32_SFLOAT")
    sampled.upload(np.array([[5.0]], np.float32))
    storage = vk.image(2, 2, "R32_UINT")
    storage.upload(np.array([[0, 6], [0, 0]], u32))
    combined = vk.image(1, 1, "R32_SFLOAT")
    combined.upload(np.array([[8.0]], np.float32))
    dynamic = vk.buffer(data=np.array([0] * 64 + [9], u32))  # 256-byte offset meets any alignment
    out = vk.buffer(8 * 4)
    sampler = vk.sampler()
    app_set = DescriptorSetSpec(
        [
            Binding(0, "uniform_buffer", [vk.buffer(data=np.array([1], u32))]),
            Binding(1, "storage_buffer", [vk.buffer(data=np.array([2], u32))]),
            Binding(2, "uniform_texel_buffer", [texel_data.view("R32_UINT")]),
            Binding(3, "storage_texel_buffer", [texel_data.view("R32_UINT")]),
            Binding(4, "sampled_image", [sampled.view()]),
            Binding(5, "sampler", [sampler]),
            Binding(6, "storage_image", [storage.view()]),
            Binding(7, "combined_image_sampler", [(combined.view(), sampler)]),
            Binding(8, "dynamic_storage_buffer", [BufferRange(dynamic, 0, 4)]),
        ],
        dynamic_offsets=[256],
    )
    result = vk.run_compute(words, {0: app_set, 1: [Binding(0, "storage_buffer", [out])]})
    assert result.buffer(out).tolist() == [1, 2, 11, 12, 5, 6, 8, 9]
    assert result.buffer(texel_data).tolist() == [0, 11, 12, 77]
    assert storage.download().tolist() == [[0, 6], [99, 0]]


def test_partially_bound_variable_count_update_after_bind(vk: VulkanContext) -> None:
    vk.require("descriptorBindingPartiallyBound", "descriptorBindingVariableDescriptorCount")
    vk.require("descriptorBindingStorageBufferUpdateAfterBind", "runtimeDescriptorArray")
    words = glsl(
        """#version 450
        #extension GL_EXT_nonuniform_qualifier : require
        layout(local_size_x = 1) in;
        layout(set = 0, binding = 0) buffer Out { uint v[2]; } o;
        layout(set = 1, binding = 0) readonly buffer In { uint value; } inputs[];
        layout(push_constant) uniform P { uint a; uint b; } p;
        void main() { o.v[0] = inputs[p.a].value; o.v[1] = inputs[p.b].value; }
        """,
        "comp",
    )
    u32 = np.uint32
    out = vk.buffer(8)
    holes = [vk.buffer(data=np.array([100], u32)), None, vk.buffer(data=np.array([102], u32)), None]
    flags = PARTIALLY_BOUND | VARIABLE_COUNT | UPDATE_AFTER_BIND
    sets = {
        0: [Binding(0, "storage_buffer", [out])],
        1: [Binding(0, "storage_buffer", holes, count=16, flags=flags)],
    }
    vk.run_compute(words, sets, push_constants=np.array([0, 2], u32))
    assert out.array().tolist() == [100, 102]


def test_validation_messenger_collects_errors(vk: VulkanContext) -> None:
    if not vk.validation_requested:
        pytest.skip("validation turned off with GPUAV_TEST_VALIDATION=0")
    if not vk.validation:
        pytest.fail("VK_LAYER_KHRONOS_validation is not installed (vulkan-validationlayers)")
    # samplerAnisotropy is not enabled, so this sampler breaks
    # VUID-VkSamplerCreateInfo-anisotropyEnable-01070; the messenger must see it.
    info = vkapi.VkSamplerCreateInfo(anisotropyEnable=vkapi.VK_TRUE, maxAnisotropy=2.0)
    sampler = vkapi.vkCreateSampler(vk.device, info, None)
    vkapi.vkDestroySampler(vk.device, sampler, None)
    assert any("anisotropyEnable-01070" in m.message_id for m in vk.validation_errors)
    vk.clear_messages()  # expected: keep the fixture's clean-run check meaningful
    # The harness's own usage, compute and graphics, leaves the layer silent.
    out = vk.buffer(4)
    vk.run_compute(
        glsl(
            "#version 450\nlayout(set=0,binding=0) buffer O { uint v; } o;\n"
            "void main() { o.v = 1u; }\n",
            "comp",
        ),
        {0: [Binding(0, "storage_buffer", [out])]},
    )
    vk.run_graphics(glsl(FULLSCREEN_TRIANGLE_VERT, "vert"), glsl(SOLID_FRAG, "frag"))
    assert vk.validation_errors == []
