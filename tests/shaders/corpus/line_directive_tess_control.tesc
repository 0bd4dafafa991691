// Tessellation control with #line directives, a macro, several statements per line and a loop-indexed sampler array.
#version 450
layout(vertices = 3) out;
#define EDGE_LEVEL(i) (1.0 + 7.0 * textureLod(densities[(i)], vec2(0.5), 0.0).r)
layout(set = 0, binding = 0) uniform sampler2D densities[3];
#line 1000 7
void main() {
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position; float inner = 0.0;
    for (int i = 0; i < 3; ++i) { gl_TessLevelOuter[i] = EDGE_LEVEL(i); inner += gl_TessLevelOuter[i]; }
    gl_TessLevelInner[0] = inner / 3.0;
}
