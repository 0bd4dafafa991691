"""Ray-tracing, task and mesh stages: every check family instruments them, each entry point
stores its stage code (its SPIR-V execution model) and the built-ins that name the invocation
(gl_LaunchIDEXT; gl_WorkGroupID and gl_LocalInvocationIndex), and the modules pass spirv-val,
the system's and 2025.1, as the layer emits them (descriptor state, printf, and the pushed
context address)."""

from __future__ import annotations

import pytest

from gpuav.instrument.api import instrument_module
from gpuav.instrument.descriptor_state import PushConstantAddress
from gpuav.instrument.record import Stage
from gpuav.spirv import read, write
from gpuav.spirv.disassembler import disassemble
from tests.instrument.filecheck import filecheck
from tests.shaders.glsl import compile_glsl
from tests.validate.asm import newer_spirv_val, spirv_val

# Declarations every stage's shader shares: a bindless array of buffers, indices to misuse, and
# a device address (a glTF renderer's vertex buffer reached through buffer_reference).
COMMON = """#version 460
#extension GL_EXT_nonuniform_qualifier : require
#extension GL_EXT_debug_printf : require
#extension GL_EXT_buffer_reference : require
{extension}
layout(buffer_reference, std430) readonly buffer Vertices {{ vec4 positions[]; }};
layout(set = 0, binding = 0) readonly buffer Data {{ uint v[]; }} data[];
layout(set = 0, binding = 5) uniform usamplerBuffer texels;
layout(push_constant) uniform P {{ Vertices vertices; uint which; int index; }} p;
uint checked_value() {{
    uint local[4] = uint[4](1u, 2u, 3u, 4u);
    uint value = data[nonuniformEXT(p.which)].v[p.index] + local[p.index & 7];
    value += texelFetch(texels, p.index).x;
    value += uint(p.vertices.positions[p.index].x);
    debugPrintfEXT("value %u", value);
    return value;
}}
"""
RAY_TRACING = "#extension GL_EXT_ray_tracing : require"
MESH = "#extension GL_EXT_mesh_shader : require"
BODIES = {
    "rgen": (
        RAY_TRACING,
        "layout(set = 0, binding = 1) buffer Out { uint o[]; } out_;\n"
        "void main() { out_.o[gl_LaunchIDEXT.x] = checked_value(); }\n",
    ),
    "rint": (
        RAY_TRACING,
        "hitAttributeEXT vec2 attributes;\n"
        "void main() {\n"
        "    attributes = vec2(0.5);\n"
        "    reportIntersectionEXT(float(checked_value()), 0u);\n"
        "}\n",
    ),
    "rahit": (
        RAY_TRACING,
        "layout(location = 0) rayPayloadInEXT uint payload;\n"
        "void main() { if (checked_value() == 0u) ignoreIntersectionEXT; payload = 1u; }\n",
    ),
    "rchit": (
        RAY_TRACING,
        "layout(location = 0) rayPayloadInEXT uint payload[4];\n"
        "void main() { payload[p.index] = checked_value(); }\n",
    ),
    "rmiss": (
        RAY_TRACING,
        "layout(location = 0) rayPayloadInEXT uint payload;\n"
        "void main() { payload = checked_value(); }\n",
    ),
    "rcall": (
        RAY_TRACING,
        "layout(location = 0) callableDataInEXT uint data_in;\n"
        "void main() { data_in = checked_value(); }\n",
    ),
    "task": (
        MESH,
        "layout(local_size_x = 4) in;\n"
        "struct Payload { uint values[4]; };\n"
        "taskPayloadSharedEXT Payload payload;\n"
        "void main() {\n"
        "    payload.values[gl_LocalInvocationIndex + uint(p.index)] = checked_value();\n"
        "    EmitMeshTasksEXT(1, 1, 1);\n"
        "}\n",
    ),
    "mesh": (
        MESH,
        "layout(local_size_x = 1) in;\n"
        "layout(triangles, max_vertices = 3, max_primitives = 1) out;\n"
        "void main() {\n"
        "    SetMeshOutputsEXT(3, 1);\n"
        "    gl_MeshVerticesEXT[0].gl_Position = vec4(float(checked_value()));\n"
        "    gl_MeshVerticesEXT[1].gl_Position = vec4(1.0);\n"
        "    gl_MeshVerticesEXT[2].gl_Position = vec4(2.0);\n"
        "    gl_PrimitiveTriangleIndicesEXT[0] = uvec3(0, 1, 2);\n"
        "}\n",
    ),
}
STAGES = {
    "rgen": (Stage.RAY_GENERATION, "RayGenerationKHR"),
    "rint": (Stage.INTERSECTION, "IntersectionKHR"),
    "rahit": (Stage.ANY_HIT, "AnyHitKHR"),
    "rchit": (Stage.CLOSEST_HIT, "ClosestHitKHR"),
    "rmiss": (Stage.MISS, "MissKHR"),
    "rcall": (Stage.CALLABLE, "CallableKHR"),
    "task": (Stage.TASK, "TaskEXT"),
    "mesh": (Stage.MESH, "MeshEXT"),
}


def _valid_everywhere(words: list[int], *options: str) -> None:
    """spirv-val, the system's and 2025.1, accept the module."""
    for validate in (spirv_val, newer_spirv_val):
        accepted, output = validate(words, "vulkan1.2", *options)
        assert accepted, output + disassemble(words)


@pytest.mark.parametrize("stage", sorted(BODIES))
@pytest.mark.parametrize("reach", ["set", "pushed_address"])
def test_every_check_family_in_the_stage(stage: str, reach: str) -> None:
    extension, body = BODIES[stage]
    source = COMMON.format(extension=extension) + body
    words = compile_glsl(source, stage, target_env="vulkan1.2", debug="g")
    options = {} if reach == "set" else {"context_address": PushConstantAddress(120)}
    result = instrument_module(
        read(words), shader_id=9, descriptor_set=5, descriptor_state=True, printf=True,
        **options,  # type: ignore[arg-type]
    )  # fmt: skip
    # The descriptor index, the buffer range, the texel, the local array, the device address,
    # printf (and the ray generation shader's output buffer, the task and hit payloads).
    buffers = 2 if stage == "rgen" else 1
    # The bindless index; unwritten buffers and texel buffers read as range 0, which their
    # range and texel checks cover.
    assert len(result.findings.accesses) == 1
    assert len(result.buffer_findings.accesses) == buffers
    assert len(result.texel_findings.accesses) == 1
    assert len(result.address_findings.accesses) == 1
    assert len(result.printf_sites) == 1
    assert len(result.local_findings.accesses) == (2 if stage in ("task", "rchit") else 1)
    out = write(result.module)
    _valid_everywhere(out)
    code, model = STAGES[stage]
    text = disassemble(out)
    builtins = ["WorkgroupId", "LocalInvocationIndex"] if model in ("TaskEXT", "MeshEXT") else []
    for name in builtins or ["LaunchIdKHR"]:
        assert f"BuiltIn {name}" in text
    filecheck(
        text,
        f"""
        CHECK: OpEntryPoint {model} %main
        CHECK: %uint_{int(code)} = OpConstant %uint {int(code)}
        CHECK: OpCompositeConstruct %v3uint %uint_{int(code)}
        CHECK-NEXT: OpStore %gpuav_stage_info
        """,
    )


# The closest-hit shader of a glTF path tracer (after nvpro-samples' vk_raytrace and Sascha
# Willems' glTF ray tracing example): instance and primitive data through buffer references,
# a material array, and a runtime texture array indexed by the material's texture ids.
GLTF_CLOSEST_HIT = """#version 460
#extension GL_EXT_ray_tracing : require
#extension GL_EXT_nonuniform_qualifier : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_scalar_block_layout : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

struct Vertex { vec3 position; vec3 normal; vec2 uv; };
struct Material {
    vec4 base_color_factor;
    int base_color_texture;
    int normal_texture;
    float metallic;
    float roughness;
};
struct Primitive { uint64_t vertex_address; uint64_t index_address; uint material; };
layout(buffer_reference, scalar) readonly buffer Vertices { Vertex v[]; };
layout(buffer_reference, scalar) readonly buffer Indices { uvec3 i[]; };
layout(set = 0, binding = 2, scalar) readonly buffer Primitives { Primitive primitives[]; };
layout(set = 0, binding = 3, scalar) readonly buffer Materials { Material materials[]; };
layout(set = 0, binding = 4) uniform sampler2D textures[];

struct HitPayload { vec3 radiance; vec3 throughput; uint seed; uint depth; };
layout(location = 0) rayPayloadInEXT HitPayload payload;
hitAttributeEXT vec2 attributes;

void main() {
    Primitive primitive = primitives[gl_InstanceCustomIndexEXT];
    Indices indices = Indices(primitive.index_address);
    Vertices vertices = Vertices(primitive.vertex_address);
    uvec3 triangle = indices.i[gl_PrimitiveID];
    Vertex a = vertices.v[triangle.x];
    Vertex b = vertices.v[triangle.y];
    Vertex c = vertices.v[triangle.z];
    vec3 weights = vec3(1.0 - attributes.x - attributes.y, attributes.x, attributes.y);
    vec2 uv = a.uv * weights.x + b.uv * weights.y + c.uv * weights.z;
    vec3 normal = normalize(a.normal * weights.x + b.normal * weights.y + c.normal * weights.z);
    Material material = materials[primitive.material];
    vec4 color = material.base_color_factor;
    if (material.base_color_texture >= 0)
        color *= texture(textures[nonuniformEXT(material.base_color_texture)], uv);
    if (material.normal_texture >= 0)
        normal += texture(textures[nonuniformEXT(material.normal_texture)], uv).xyz;
    payload.radiance += payload.throughput * color.rgb * max(dot(normal, vec3(0, 0, 1)), 0.0);
    payload.throughput *= color.rgb;
    payload.depth += 1u;
}
"""


def test_a_gltf_closest_hit_shader_is_checked_and_valid() -> None:
    # (-g: glslang's -gV debug information for buffer references is invalid, Id 0.)
    words = compile_glsl(GLTF_CLOSEST_HIT, "rchit", target_env="vulkan1.2", debug="g")
    result = instrument_module(
        read(words), shader_id=3, descriptor_set=7, descriptor_state=True, printf=True
    )
    # Both texture lookups index the runtime array: each checked against the allocated count.
    texture_lookups = [
        access for access in result.findings.accesses
        if any(lookup.runtime_sized for lookup in access.lookups)
    ]  # fmt: skip
    assert len(texture_lookups) == 2
    # The primitive and material records are read from their buffers' bound ranges...
    assert len(result.buffer_findings.accesses) >= 2
    # ...and the index and vertex fetches through device addresses.
    assert len(result.address_findings.accesses) == 4
    assert not result.buffer_findings.unchecked and not result.address_findings.unchecked
    _valid_everywhere(write(result.module), "--scalar-block-layout")
