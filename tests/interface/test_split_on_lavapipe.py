"""The split pass changes nothing a pipeline computes: a vertex shader writing a struct output
(nested structs, arrays, a matrix, integers, doubles) feeds a fragment shader that reads the
same struct; after the split, the vertex shader feeds a fragment shader that reads one input
per member at the locations the pass must have chosen. The two images are identical, bit for
bit. Runs on lavapipe under the Khronos validation layer (the ``vk`` fixture fails on any
error it reports): Vulkan matches a struct interface variable as a whole, so a split producer
needs a consumer declared member by member (or no consumer: the last pre-rasterization stage
whose outputs only feed transform feedback, zink's case), which is what the layer confirms.

Transform-feedback capture is not compared here: the test harness has no transform-feedback
support yet, so the capture layout is checked statically (test_seed_example.py,
test_split_output_structs.py) and the pipeline check is vertex -> fragment only.
"""

from __future__ import annotations

import numpy as np
import pytest

from gpuav.spirv import read
from gpuav.transform.split_output_structs import split_output_structs_words
from gpuav.validate.interface import analyze_interfaces
from tests.harness import VulkanContext
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

STRUCTS = """
struct Inner { vec2 uv; float weights[3]; };
struct Varyings {
    vec4 color;
    Inner inner;
    mat2 m;
    ivec2 id;
    DOUBLE_MEMBER
};
"""

VERTEX = """#version 450
STRUCTS
layout(location = 0) flat out Varyings v;
void main() {
    // A full-screen triangle; every output depends on the vertex so that a misplaced
    // location shows up in the picture.
    vec2 corner = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
    v.color = vec4(0.25, 0.5, 0.75, 1.0) * float(gl_VertexIndex + 1);
    v.inner.uv = corner * 0.5;
    for (int i = 0; i < 3; ++i) v.inner.weights[i] = float(i + gl_VertexIndex) * 0.125;
    v.m = mat2(1.0, 2.0, 3.0, 4.0) * float(gl_VertexIndex);
    v.id = ivec2(gl_VertexIndex * 7, 11);
    DOUBLE_STORE
}
"""

FRAGMENT = """#version 450
STRUCTS
layout(location = 0) flat in Varyings v;
layout(location = 0) out vec4 color;
void main() {
    color = v.color * 0.125
        + vec4(v.inner.uv, v.inner.weights[1], v.inner.weights[2])
        + vec4(v.m[0], v.m[1]) * 0.01
        + vec4(vec2(v.id) * 0.001, 0.0, 0.0)
        DOUBLE_READ;
}
"""

FRAGMENT_SPLIT = """#version 450
layout(location = 0) flat in vec4 color_;
layout(location = 1) flat in vec2 uv;
layout(location = 2) flat in float weights[3];
layout(location = 5) flat in mat2 m;
layout(location = 7) flat in ivec2 id;
DOUBLE_INPUT
layout(location = 0) out vec4 color;
void main() {
    color = color_ * 0.125
        + vec4(uv, weights[1], weights[2])
        + vec4(m[0], m[1]) * 0.01
        + vec4(vec2(id) * 0.001, 0.0, 0.0)
        DOUBLE_READ;
}
"""


def _sources(with_double: bool) -> tuple[str, str, str]:
    replacements = {
        "DOUBLE_MEMBER": "dvec2 exact;" if with_double else "",
        "DOUBLE_STORE": "v.exact = dvec2(0.5lf, 0.25lf);" if with_double else "",
        "DOUBLE_READ": "+ vec4(vec2(v.exact), 0.0, 0.0)" if with_double else "",
        "DOUBLE_INPUT": "layout(location = 8) flat in dvec2 exact;" if with_double else "",
    }
    vertex, fragment = VERTEX.replace("STRUCTS", STRUCTS), FRAGMENT.replace("STRUCTS", STRUCTS)
    split = FRAGMENT_SPLIT
    for key, value in replacements.items():
        vertex, fragment = vertex.replace(key, value), fragment.replace(key, value)
        split = split.replace(key, value.replace("v.exact", "exact"))
    return vertex, fragment, split


@pytest.mark.parametrize("with_double", [False, True], ids=["32-bit", "with-dvec2"])
def test_vertex_to_fragment_identical_after_split(vk: VulkanContext, with_double: bool) -> None:
    if with_double:
        vk.require("shaderFloat64")
    vertex_source, fragment_source, split_fragment_source = _sources(with_double)
    vertex = compile_glsl(vertex_source, "vert", target_env="vulkan1.2")
    fragment = compile_glsl(fragment_source, "frag", target_env="vulkan1.2")
    split_fragment = compile_glsl(split_fragment_source, "frag", target_env="vulkan1.2")
    split = split_output_structs_words(vertex)
    spirv_val(split, "vulkan1.2")
    (entry,) = analyze_interfaces(read(split))
    assert len(entry.user(3)) == 5 + with_double  # color, uv, weights, m, id (+ exact)

    def draw(vertex_words: list[int], fragment_words: list[int]) -> np.ndarray:
        result = vk.run_graphics(
            vertex_words, fragment_words, width=8, height=8, color_format="R32G32B32A32_SFLOAT"
        )
        return np.asarray(result.color)

    before, after = draw(vertex, fragment), draw(split, split_fragment)
    assert before.shape == (8, 8, 4)
    # The provoking (first) vertex's flat values reach every pixel.
    expected = (
        np.array([0.25, 0.5, 0.75, 1.0], np.float32) * 0.125
        + np.array([0.0, 0.011, 0.125, 0.25], np.float32)  # weights[1..2], id.y * 0.001
        + (np.array([0.5, 0.25, 0.0, 0.0], np.float32) if with_double else 0.0)
    )
    assert np.allclose(before[4, 4], expected)
    assert np.array_equal(before, after)
