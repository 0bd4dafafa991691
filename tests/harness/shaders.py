"""Small shaders that several harness tests draw or dispatch with, compiled for Vulkan 1.2."""

from __future__ import annotations

from tests.shaders.glsl import compile_glsl


def glsl(source: str, stage: str) -> list[int]:
    return compile_glsl(source, stage, target_env="vulkan1.2")


FULLSCREEN_TRIANGLE_VERT = """#version 450
void main() {
    // One triangle covering the top-left half of the framebuffer (Vulkan's y points down).
    vec2 corners[3] = vec2[](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(-1.0, 1.0));
    gl_Position = vec4(corners[gl_VertexIndex], 0.0, 1.0);
}
"""

SOLID_FRAG = """#version 450
layout(location = 0) out vec4 color;
void main() { color = vec4(1.0, 0.0, 0.0, 1.0); }
"""
