// Array of arrays of combined image samplers: glslang 12 compiles it, but Vulkan allows one array level for opaque handles.
// gpuav: expect-error=VUID-StandaloneSpirv-UniformConstant-04655
#version 450

layout(set = 0, binding = 0) uniform sampler2D grid[2][3];
layout(push_constant) uniform Push { int row; int column; } pc;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

void main() {
    color = texture(grid[pc.row][pc.column], uv) + texture(grid[1][pc.column], uv);
}
