"""Locations and components consumed by every scalar, vector and matrix width, arrays and
structs, and the per-vertex array level of tessellation and geometry stages, on
glslang-compiled shaders (Vulkan "Location Assignment")."""

from __future__ import annotations

import pytest

from gpuav.spirv import read
from gpuav.validate.interface import EntryPointInterface, InterfaceVariable, analyze_interfaces
from tests.shaders.glsl import compile_glsl

# (GLSL declaration type, locations, components)
TYPES = [
    ("float", 1, 1),
    ("vec2", 1, 2),
    ("vec3", 1, 3),
    ("vec4", 1, 4),
    ("int", 1, 1),
    ("ivec3", 1, 3),
    ("uvec4", 1, 4),
    ("double", 1, 2),
    ("dvec2", 1, 4),
    ("dvec3", 2, 6),
    ("dvec4", 2, 8),
    ("mat2", 2, 4),
    ("mat3", 3, 9),
    ("mat4", 4, 16),
    ("mat2x3", 2, 6),
    ("mat3x2", 3, 6),
    ("mat4x2", 4, 8),
    ("mat2x4", 2, 8),
    ("dmat2", 2, 8),
    ("dmat3", 6, 18),  # three dvec3 columns, two locations each
    ("dmat4", 8, 32),
    ("dmat2x3", 4, 12),
    ("dmat3x2", 3, 12),
    ("dmat3x4", 6, 24),  # GLSL: three columns of dvec4
    ("dmat4x3", 8, 24),  # four columns of dvec3: the seed's "dvec3[4]"
    ("float[3]", 3, 3),
    ("vec4[2]", 2, 8),
    ("dvec3[2]", 4, 12),
    ("mat2[2]", 4, 8),
    ("float16_t", 1, 1),
    ("f16vec3", 1, 3),
    ("int64_t", 1, 2),
    ("i64vec3", 2, 6),
]

HEADER = """#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
"""


def _output(words: list[int], name: str) -> InterfaceVariable:
    (entry,) = analyze_interfaces(read(words))
    return next(v for v in entry.variables if v.name == name)


@pytest.mark.parametrize(("glsl_type", "locations", "components"), TYPES)
def test_vertex_output_type(glsl_type: str, locations: int, components: int) -> None:
    base, _, array = glsl_type.partition("[")
    declaration = f"{base} v" + (f"[{array}" if array else "")
    words = compile_glsl(
        HEADER + f"layout(location = 3) flat out {declaration};\nvoid main() {{}}\n", "vert"
    )
    variable = _output(words, "v")
    assert (variable.location, variable.locations_used, variable.components_used) == (
        3,
        locations,
        components,
    )
    assert min(location for location, _ in variable.slots) == 3


def test_component_decoration_packs_into_one_location() -> None:
    words = compile_glsl(
        """#version 450
        layout(location = 2, component = 1) out vec2 a;
        layout(location = 2, component = 3) out float b;
        layout(location = 2, component = 0) out float c;
        void main() {}
        """,
        "vert",
    )
    (entry,) = analyze_interfaces(read(words))
    slots = {v.name: v.slots for v in entry.variables}
    assert slots == {"a": ((2, 1), (2, 2)), "b": ((2, 3),), "c": ((2, 0),)}


def test_struct_and_nested_struct_members_take_consecutive_locations() -> None:
    words = compile_glsl(
        """#version 450
        struct Inner { dvec3 p; float q[2]; };
        struct Outer { vec2 a; Inner inner; mat3 m; };
        layout(location = 1) flat out Outer o;
        void main() {}
        """,
        "vert",
    )
    variable = _output(words, "o")
    # a: 1, inner.p: 2-3, inner.q: 4-5, m: 6-8
    assert variable.locations_used == 8
    assert sorted({location for location, _ in variable.slots}) == list(range(1, 9))
    assert variable.components_used == 2 + 6 + 2 + 9


def test_block_members_with_their_own_locations() -> None:
    words = compile_glsl(
        """#version 450
        layout(location = 0) out vec4 first;
        out Block {
            layout(location = 5) vec4 x;
            layout(location = 7) vec3 y;
            layout(location = 1) dvec4 z;
        } block;
        void main() {}
        """,
        "vert",
    )
    variable = _output(words, "block")
    assert variable.location is None
    assert sorted({location for location, _ in variable.slots}) == [1, 2, 5, 7]
    assert not variable.missing_location


def _entry(source: str, stage: str) -> EntryPointInterface:
    (entry,) = analyze_interfaces(read(compile_glsl(source, stage)))
    return entry


def test_tessellation_control_per_vertex_arrays_are_not_counted() -> None:
    entry = _entry(
        """#version 450
        layout(vertices = 4) out;
        layout(location = 0) in vec4 inColor[];
        layout(location = 1) in dvec3 inNormal[];
        layout(location = 0) out vec4 outColor[];
        layout(location = 1) patch out vec4 patchData[3];
        void main() {
            outColor[gl_InvocationID] = inColor[gl_InvocationID];
            patchData[0] = vec4(inNormal[0][0]);
            gl_TessLevelOuter[0] = 1.0;
        }
        """,
        "tesc",
    )
    by_name = {v.name: v for v in entry.variables}
    assert by_name["inColor"].per_vertex and by_name["inColor"].locations_used == 1
    assert by_name["inNormal"].locations_used == 2
    assert by_name["outColor"].locations_used == 1
    patch = by_name["patchData"]
    assert patch.patch and not patch.per_vertex and patch.locations_used == 3


def test_geometry_inputs_drop_the_vertex_level_but_outputs_keep_arrays() -> None:
    entry = _entry(
        """#version 450
        layout(triangles) in;
        layout(triangle_strip, max_vertices = 3) out;
        layout(location = 0) in vec3 normals[];
        layout(location = 1) in float weights[][2];
        layout(location = 0) out float outWeights[2];
        void main() { outWeights[0] = weights[0][1] + normals[0].x; EmitVertex(); }
        """,
        "geom",
    )
    by_name = {v.name: v for v in entry.variables}
    assert by_name["normals"].locations_used == 1
    assert by_name["weights"].locations_used == 2
    assert by_name["outWeights"].locations_used == 2
    assert not by_name["outWeights"].per_vertex


def test_builtins_take_no_locations() -> None:
    entry = _entry(
        """#version 450
        layout(location = 0) in vec4 position;
        void main() { gl_Position = position; gl_PointSize = 1.0; }
        """,
        "vert",
    )
    builtins = [v for v in entry.variables if v.builtin]
    assert builtins and all(v.slots == () for v in builtins)
    assert [v.name for v in entry.user(1)] == ["position"]
