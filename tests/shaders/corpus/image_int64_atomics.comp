// 64-bit image atomics (GL_EXT_shader_image_int64): arrays of u64image2D/i64imageBuffer with imageAtomicAdd/Max/CompSwap.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_EXT_shader_image_int64 : require
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, r64ui) uniform u64image2D visibility[2];
layout(set = 0, binding = 1, r64i) uniform i64imageBuffer ledger[2];
layout(set = 0, binding = 2, std430) readonly buffer Fragments { uvec4 fragments[]; } frags;

layout(push_constant) uniform Push { int target; } pc;

void main() {
    uvec4 f = frags.fragments[gl_GlobalInvocationID.x];
    uint64_t packedDepthId = (uint64_t(f.z) << 32) | uint64_t(f.w);
    imageAtomicMax(visibility[pc.target], ivec2(f.xy), packedDepthId);
    uint64_t old = imageAtomicAdd(visibility[pc.target], ivec2(0), 1ul);
    imageAtomicCompSwap(visibility[pc.target], ivec2(1, 0), old, packedDepthId);
    int64_t balance = imageAtomicAdd(ledger[pc.target], int(f.x), int64_t(f.y) - 100l);
    imageStore(ledger[pc.target], int(f.y), i64vec4(balance));
}
