"""GLSL shaders of every stage lavapipe runs, each calling debugPrintfEXT with every conversion.

Every stage includes the same ``print_all(stage, x)``: ``SHARED`` lines use only what the
Khronos layer 1.4.309 formats too (it refuses the ``+ - #`` and space flags, ``%c`` and
``%s``, and prints only ``s5`` of a line with ``%lf``: it warns that a double wants ``%lf``
but formats it right only with ``%f``), ``GPUAV_ONLY`` lines the rest. Each line starts with
``s<stage> `` so the lines of different stages can be told apart. The fragment shader prints
from two fragments only.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

SHARED = [
    ('"s%u int %d %i %5d %05d %.3d %3i %d"', "i, i, i, i, i, i, -2147483647 - 1"),
    ('"s%u uint %u %x %X %o %08x %3u %.4x %lu"', "u, u, u, u, u, u, u, big"),
    ('"s%u float %f %F %e %E %g %G %a %A"', "f, f, f, f, f, f, f, f"),
    ('"s%u precision %.2f %10.3e %.3g %08.2f %.0e %.1a %.1f"', "f, f, f, -f, f * 1e6, f, f"),
    ('"s%u vectors %v2f %v3d %v4u %v2x %.1v4f %v3i"',
     "vec2(f, -f), ivec3(i, 2, 3), uvec4(u, 1u, 2u, 3u), uvec2(255u, u), vec4(0.25, 0.5, f, 2.0), "
     "ivec3(-i, i, 0)"),
    ('"s%u 64-bit %lu %ld %lx %lX %v2lu"', "big, wide, big, big, u64vec2(big, 7ul)"),
    ('"s%u double %f %e %g"', "d, d, d"),
    ('"s%u specials %f %e %f %g"', "1.0 / zero, -1.0 / zero, -0.0 * f, 1e-20 * f"),
    ('"s%u no arguments but the stage"', ""),
]  # fmt: skip
GPUAV_ONLY = [
    ('"s%u flags %+d % d %+.2i %-5d| %#x %#o %-6u| %#.3g %-8.2f| %+.1f"',
     "i, i, i, i, u, u + 8u, u, f, f, f"),
    ('"s%u char %c%c and 100%%"', "71u + u % 3u, 80u"),
    ('"s%u l-double %lf %le %lg"', "d, d, d"),
]  # fmt: skip


def print_all_function() -> str:
    lines = []
    for format_text, arguments in [*SHARED, *GPUAV_ONLY]:
        rest = f", {arguments}" if arguments else ""
        lines.append(f"    debugPrintfEXT({format_text}, stage{rest});")
    body = "\n".join(lines)
    return f"""
void print_all(uint stage, uint u) {{
    int i = int(u) - 5;
    float f = 1.5 + float(u);
    float zero = float(u) * 0.0;
    double d = 2.25lf + double(u);
    uint64_t big = 0x123456789ABCDEF0ul + uint64_t(u);
    int64_t wide = -1234567890123l - int64_t(u);
{body}
}}
"""


HEADER = """#version 450
#extension GL_EXT_debug_printf : require
#extension GL_ARB_gpu_shader_int64 : require
"""

MAINS = {
    "comp": """layout(local_size_x = 2) in;
void main() { print_all(5u, gl_GlobalInvocationID.x); }
""",
    "vert": """void main() {
    print_all(0u, uint(gl_VertexIndex));
    vec2 corner = vec2(gl_VertexIndex == 1 ? 3.0 : -1.0, gl_VertexIndex == 2 ? 3.0 : -1.0);
    gl_Position = vec4(corner, 0.0, 1.0);
}
""",
    "tesc": """layout(vertices = 3) out;
void main() {
    print_all(1u, uint(gl_InvocationID));
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    gl_TessLevelOuter[0] = 1.0; gl_TessLevelOuter[1] = 1.0; gl_TessLevelOuter[2] = 1.0;
    gl_TessLevelInner[0] = 1.0;
}
""",
    "tese": """layout(triangles, equal_spacing, ccw) in;
void main() {
    if (gl_TessCoord.x == 1.0) print_all(2u, uint(gl_PrimitiveID));
    gl_Position = gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position
        + gl_TessCoord.z * gl_in[2].gl_Position;
}
""",
    "geom": """layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
void main() {
    print_all(3u, uint(gl_PrimitiveIDIn));
    for (int k = 0; k < 3; ++k) { gl_Position = gl_in[k].gl_Position; EmitVertex(); }
    EndPrimitive();
}
""",
    "frag": """layout(location = 0) out vec4 color;
void main() {
    if (gl_FragCoord.y < 1.0 && gl_FragCoord.x < 2.0) print_all(4u, uint(gl_FragCoord.x));
    color = vec4(1.0);
}
""",
}


def source(stage: str) -> str:
    return HEADER + print_all_function() + MAINS[stage]


def compile_stage(stage: str, folder: Path, debug: bool = True) -> Path:
    """Compile the stage's shader (with -g: source lines in the messages) into ``folder``."""
    glsl = folder / f"printf.{stage}"
    glsl.write_text(source(stage), encoding="utf-8")
    output = folder / f"printf_{stage}.spv"
    command = ["glslangValidator", "--target-env", "vulkan1.3", "-o", str(output), str(glsl)]
    if debug:
        command.insert(1, "-g")
    subprocess.run(command, check=True, capture_output=True, text=True)
    return output
