"""Buffer-range checks in every graphics stage on lavapipe: vertex, tessellation control and
evaluation, geometry and fragment shaders read a storage buffer at a pushed index; one past
the end, far out and negative indices give exact records with the stage's invocation words
and a skipped (zero) read; an index inside gives no record and the same image."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from gpuav.instrument import record
from gpuav.instrument.api import instrument_shader
from gpuav.instrument.descriptor_state import (
    binding_table_word,
    range_word,
    region_words,
)
from gpuav.instrument.record import ErrorCode, Stage
from tests.harness import Binding, DescriptorSetSpec, VulkanContext
from tests.instrument.util import DEBUG_SET, SHADER_ID, bound_sets_area, load_origins
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

WORDS = 4  # the buffer holds 4 uints: 1.0 as bits, so a read inside colours the image
DATA = """layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(push_constant) uniform P { int index; } p;
float shade() { return uintBitsToFloat(data.v[p.index]); }
"""
PASS_VERT = """#version 450
void main() {
    vec2 corner = vec2(gl_VertexIndex & 1, gl_VertexIndex >> 1) * 4.0 - 1.0;
    gl_Position = vec4(corner, 0.0, 1.0);
}
"""
SHADERS = {
    "vert": """#version 450
%s
layout(location = 0) out float value;
void main() {
    vec2 corner = vec2(gl_VertexIndex & 1, gl_VertexIndex >> 1) * 4.0 - 1.0;
    gl_Position = vec4(corner, 0.0, 1.0);
    value = shade();
}
""",
    "tesc": """#version 450
%s
layout(vertices = 3) out;
void main() {
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position * shade();
    gl_TessLevelOuter[0] = 1.0; gl_TessLevelOuter[1] = 1.0; gl_TessLevelOuter[2] = 1.0;
    gl_TessLevelInner[0] = 1.0;
}
""",
    "tese": """#version 450
%s
layout(triangles) in;
void main() {
    gl_Position = (gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position
        + gl_TessCoord.z * gl_in[2].gl_Position) * shade();
}
""",
    "geom": """#version 450
%s
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
void main() {
    for (int k = 0; k < 3; ++k) {
        gl_Position = gl_in[k].gl_Position * shade();
        EmitVertex();
    }
}
""",
    "frag": """#version 450
%s
layout(location = 0) out vec4 color;
void main() {
    color = vec4(shade(), 0.0, 0.0, 1.0);
}
""",
}
STAGES = {
    "vert": Stage.VERTEX,
    "tesc": Stage.TESSELLATION_CONTROL,
    "tese": Stage.TESSELLATION_EVALUATION,
    "geom": Stage.GEOMETRY,
    "frag": Stage.FRAGMENT,
}
PLAIN_TESC = """#version 450
layout(vertices = 3) out;
void main() {
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    gl_TessLevelOuter[0] = 1.0; gl_TessLevelOuter[1] = 1.0; gl_TessLevelOuter[2] = 1.0;
    gl_TessLevelInner[0] = 1.0;
}
"""
PLAIN_TESE = """#version 450
layout(triangles) in;
void main() {
    gl_Position = gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position
        + gl_TessCoord.z * gl_in[2].gl_Position;
}
"""
PLAIN_FRAG = """#version 450
layout(location = 0) out vec4 color;
void main() { color = vec4(0.0, 1.0, 0.0, 1.0); }
"""
VALUE_FRAG = """#version 450
layout(location = 0) in float value;
layout(location = 0) out vec4 color;
void main() { color = vec4(value, 1.0, 0.0, 1.0); }
"""


def _compile(stage: str) -> list[int]:
    return compile_glsl(SHADERS[stage] % DATA, stage, target_env="vulkan1.2")


def _draw(
    vk: VulkanContext, stage: str, words: list[int], index: int
) -> tuple[np.ndarray, list[record.ErrorRecord]]:
    data = vk.buffer(data=np.full(WORDS, 0x3F80_0000, np.uint32))  # 1.0
    state = region_words({0: 1})
    state[state[binding_table_word(0)]] = range_word(4 * WORDS)
    bound = bound_sets_area(state, 0)
    debug = vk.debug_buffer(capacity_words=4096)
    ours = DescriptorSetSpec(
        [
            debug.binding(),
            Binding(1, "uniform_buffer", [vk.buffer(data=bound)]),
            Binding(2, "storage_buffer", [vk.buffer(data=np.array(state, np.uint32))]),
        ]
    )
    sets = {0: [Binding(0, "storage_buffer", [data])], DEBUG_SET: ours}
    shaders: dict[str, list[int] | None] = {
        "vert": compile_glsl(PASS_VERT, "vert", target_env="vulkan1.2"),
        "frag": compile_glsl(PLAIN_FRAG, "frag", target_env="vulkan1.2"),
        "tesc": None,
        "tese": None,
        "geom": None,
    }
    if stage in ("tesc", "tese"):
        shaders["tesc"] = compile_glsl(PLAIN_TESC, "tesc", target_env="vulkan1.2")
        shaders["tese"] = compile_glsl(PLAIN_TESE, "tese", target_env="vulkan1.2")
    if stage == "vert":
        shaders["frag"] = compile_glsl(VALUE_FRAG, "frag", target_env="vulkan1.2")
    shaders[stage] = words
    result = vk.run_graphics(
        shaders["vert"],
        shaders["frag"],
        sets,
        width=4,
        height=4,
        tess_control_words=shaders["tesc"],
        tess_eval_words=shaders["tese"],
        geometry_words=shaders["geom"],
        push_constants=struct.pack("<i", index),
    )
    return result.color, debug.records()


def _instrumented(words: list[int]) -> list[int]:
    out = instrument_shader(
        words, shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    spirv_val(out, "vulkan1.2")
    return out


@pytest.mark.parametrize("index", [4, 1000, -1])
@pytest.mark.parametrize("stage", list(SHADERS))
def test_out_of_range_reads_in_every_stage(vk: VulkanContext, stage: str, index: int) -> None:
    words = _compile(stage)
    (load,) = load_origins(words, "data")
    _, records = _draw(vk, stage, _instrumented(words), index)
    assert records, "no invocation reported"
    flags = record.FLAG_NEGATIVE | record.FLAG_WRAPPED if index < 0 else 0
    details = (record.STORAGE_BIT, (4 * index) & 0xFFFF_FFFF, 4, 4 * WORDS, flags)
    assert {
        (r.stage, r.instruction_index, r.error_code, r.descriptor_index, r.details) for r in records
    } == {(STAGES[stage], load, ErrorCode.BUFFER_OUT_OF_BOUNDS, 0, details)}


@pytest.mark.parametrize("stage", list(SHADERS))
def test_reads_inside_are_silent_and_unchanged(vk: VulkanContext, stage: str) -> None:
    words = _compile(stage)
    plain, _ = _draw(vk, stage, words, WORDS - 1)
    checked, records = _draw(vk, stage, _instrumented(words), WORDS - 1)
    assert records == []
    assert np.array_equal(plain, checked)
