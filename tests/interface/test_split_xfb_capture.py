"""Transform feedback captures the same bytes before and after split-output-structs.

The seed's OuterStruct (as a vertex output, with the blog's dvec3[4] matrix, GLSL dmat4x3)
captured to buffer 0 and a second output to buffer 1, on lavapipe through
VK_EXT_transform_feedback; after the split, eight per-member outputs carry the capture.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from gpuav.spirv import read
from gpuav.transform.split_output_structs import split_output_structs_words
from gpuav.validate.interface import analyze_interfaces
from tests.harness import VulkanContext
from tests.interface.xfb_capture import capture
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

VERTEX = """#version 450
struct TestStruct { dmat4x3 a; double b; float c; dvec2 d; };
struct OuterStruct { TestStruct inner_struct_a; TestStruct inner_struct_b; };
layout(location = 0, xfb_buffer = 0, xfb_offset = 0) out OuterStruct goku;
layout(location = 22, xfb_buffer = 1, xfb_offset = 0, xfb_stride = 16) out vec4 extra;
void main() {
    double k = double(gl_VertexIndex + 1);
    TestStruct t;
    t.a = dmat4x3(k);
    t.a[3] = dvec3(k, 2.0lf * k, 3.0lf * k);
    t.b = k * 0.5lf;
    t.c = float(k) * 0.25;
    t.d = dvec2(k, -k);
    goku.inner_struct_a = t;
    t.b = -t.b;
    goku.inner_struct_b = t;
    extra = vec4(float(gl_VertexIndex), 1.0, 2.0, 3.0);
    gl_Position = vec4(0.0, 0.0, 0.0, 1.0);
    gl_PointSize = 1.0;
}
"""

VERTICES = 3
STRIDE = 256


def test_capture_identical_after_split(vk: VulkanContext) -> None:
    vk.require("transformFeedback", "shaderFloat64")
    original = compile_glsl(VERTEX, "vert", target_env="vulkan1.2")
    split = split_output_structs_words(original)
    spirv_val(split, "vulkan1.2")
    (entry,) = analyze_interfaces(read(split))
    assert [v.location for v in entry.user(3)] == [0, 8, 9, 10, 11, 19, 20, 21, 22]

    sizes = [VERTICES * STRIDE, VERTICES * 16]
    before = capture(vk, original, VERTICES, sizes)
    after = capture(vk, split, VERTICES, sizes)
    assert before == after

    data = before[0]
    for vertex in range(VERTICES):
        k = float(vertex + 1)
        base = vertex * STRIDE
        columns = struct.unpack_from("<12d", data, base)
        assert columns == (k, 0, 0, 0, k, 0, 0, 0, k, k, 2 * k, 3 * k)
        assert struct.unpack_from("<d", data, base + 96) == (k * 0.5,)
        assert struct.unpack_from("<f", data, base + 104) == (k * 0.25,)
        assert struct.unpack_from("<2d", data, base + 112) == (k, -k)
        assert struct.unpack_from("<d", data, base + 128 + 96) == (-k * 0.5,)
    extra = np.frombuffer(before[1], np.float32).reshape(VERTICES, 4)
    assert extra.tolist() == [[float(v), 1.0, 2.0, 3.0] for v in range(VERTICES)]
