// Specialization constants for the workgroup size (local_size_x_id) and for a shared array and storage-image array size.
// gpuav: spirv-val-fails=gV
// (glslang 12 -gV describes a spec-constant-sized array with a DebugTypeArray whose count is the spec constant; spirv-val 2023.1 rejects that.)
#version 450
layout(local_size_x_id = 0, local_size_y_id = 1) in;

layout(constant_id = 0) const uint GROUP_X = 16u;
layout(constant_id = 1) const uint GROUP_Y = 4u;
layout(constant_id = 2) const int IMAGE_COUNT = 3;
layout(constant_id = 7) const float GAIN = 1.5;

layout(set = 0, binding = 0, rgba16f) uniform image2D layers[IMAGE_COUNT];
layout(set = 0, binding = 1, std430) readonly buffer Select { int layer[]; } select_;

shared vec4 tile[GROUP_X * GROUP_Y];

void main() {
    uint flat_ = gl_LocalInvocationIndex;
    int layer = clamp(select_.layer[gl_WorkGroupID.x], 0, IMAGE_COUNT - 1);
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    tile[flat_] = imageLoad(layers[layer], p);
    barrier();
    vec4 neighbour = tile[(flat_ + 1u) % (GROUP_X * GROUP_Y)];
    imageStore(layers[layer], p, (tile[flat_] + neighbour) * GAIN);
    imageStore(layers[IMAGE_COUNT - 1], p, vec4(float(gl_WorkGroupSize.x * gl_WorkGroupSize.y)));
}
