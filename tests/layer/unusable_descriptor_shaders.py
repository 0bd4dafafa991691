"""GLSL for ``descriptor_app.c``'s scenarios: each reads (or writes, or updates atomically) the
tested descriptor at set 0 binding 0 and stores what it got in the result buffer at binding 1
(``o.o[0]``). A fragment shader is drawn over one pixel, with ``VERTEX`` as its vertex shader."""

from __future__ import annotations

COMPUTE_HEADER = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 1) buffer Out { uint o[16]; } o;
"""
FRAGMENT_HEADER = """#version 450
layout(location = 0) out vec4 color;
layout(set = 0, binding = 1) buffer Out { uint o[16]; } o;
"""
VERTEX = """#version 450
void main() {
    vec2 corner = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
"""
# name -> (descriptor_app TYPE, COUNT, declarations, statement); the statement sets `value`.
BODIES: dict[str, tuple[str, int, str, str]] = {
    "storage_buffer": (
        "storage_buffer",
        1,
        "layout(set = 0, binding = 0) buffer Data { uint v[]; } data;",
        "value = data.v[1];",
    ),
    "uniform_buffer": (
        "uniform_buffer",
        1,
        "layout(set = 0, binding = 0) uniform Data { uvec4 v; } data;",
        "value = data.v.y;",
    ),
    "sampled_image": (
        "sampled_image",
        1,
        "layout(set = 0, binding = 0) uniform usampler2D image;",
        "value = texelFetch(image, ivec2(0), 0).x;",
    ),
    "storage_image": (
        "storage_image",
        1,
        "layout(set = 0, binding = 0, r32ui) uniform uimage2D image;",
        "value = imageLoad(image, ivec2(0)).x;",
    ),
    "image_atomic": (
        "storage_image",
        1,
        "layout(set = 0, binding = 0, r32ui) uniform uimage2D image;",
        "value = imageAtomicAdd(image, ivec2(0), 1u);",
    ),
    "uniform_texel": (
        "uniform_texel",
        1,
        "layout(set = 0, binding = 0) uniform usamplerBuffer texels;",
        "value = texelFetch(texels, 2).x;",
    ),
    "storage_texel": (
        "storage_texel",
        1,
        "layout(set = 0, binding = 0, r32ui) uniform uimageBuffer texels;",
        "value = imageAtomicAdd(texels, 2, 1u);",
    ),
    "separate_image": (
        "separate_image",
        1,
        "layout(set = 0, binding = 0) uniform utexture2D image;\n"
        "layout(set = 0, binding = 2) uniform sampler nearest;",
        "value = texelFetch(usampler2D(image, nearest), ivec2(0), 0).x;",
    ),
    "sampler": (
        "sampler",
        1,
        "layout(set = 0, binding = 0) uniform sampler nearest;\n"
        "layout(set = 0, binding = 2) uniform utexture2D image;",
        "value = textureLod(usampler2D(image, nearest), vec2(0.5), 0.0).x;",
    ),
    "constant_index": (
        "storage_buffer",
        2,
        "layout(set = 0, binding = 0) buffer Data { uint v[]; } data[2];",
        "value = data[1].v[3];",
    ),
    # The image comes first in OpSampledImage: the record must name the sampler array.
    "sampler_array": (
        "sampler",
        2,
        "layout(set = 0, binding = 0) uniform sampler nearest[2];\n"
        "layout(set = 0, binding = 2) uniform utexture2D image;",
        "value = textureLod(usampler2D(image, nearest[o.o[15] + 2u]), vec2(0.5), 0.0).x;",
    ),
}


def source(name: str, stage: str) -> str:
    """The GLSL of scenario ``name`` for stage ``comp`` or ``frag``."""
    _, _, declarations, statement = BODIES[name]
    header = COMPUTE_HEADER if stage == "comp" else FRAGMENT_HEADER
    tail = "" if stage == "comp" else "\n    color = vec4(1.0);"
    return (
        f"{header}{declarations}\nvoid main() {{\n    uint value = 0u;\n    {statement}\n"
        f"    o.o[0] = value;{tail}\n}}\n"
    )


def access_line(name: str, stage: str) -> int:
    """The source line of the scenario's statement."""
    lines = source(name, stage).splitlines()
    return lines.index(f"    {BODIES[name][3]}") + 1
