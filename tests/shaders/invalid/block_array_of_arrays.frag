// Arrays of arrays of uniform and storage blocks: glslang 12 warns and compiles, but Vulkan allows one array level.
// gpuav: expect-error=VUID-StandaloneSpirv-Uniform-06807
#version 450

layout(set = 0, binding = 0) uniform U { vec4 v; } ubos[2][3];
layout(set = 0, binding = 1) buffer B { vec4 w[]; } bufs[3][2];
layout(push_constant) uniform Push { int a; int b; } pc;
layout(location = 0) out vec4 color;

void main() {
    color = ubos[pc.a][pc.b].v + bufs[pc.b][pc.a].w[pc.a];
}
