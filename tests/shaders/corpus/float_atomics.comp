// Float atomics (GL_EXT_shader_atomic_float): atomicAdd/atomicExchange on float buffers and imageAtomicAdd on r32f image arrays.
#version 450
#extension GL_EXT_shader_atomic_float : require
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) buffer Accum { float total; float last; float bins[]; } accum[2];
layout(set = 0, binding = 1, r32f) uniform image2D splats[2];
layout(set = 0, binding = 2, std430) readonly buffer Points { vec4 points[]; } points;

layout(push_constant) uniform Push { int target; } pc;

void main() {
    vec4 p = points.points[gl_GlobalInvocationID.x];
    atomicAdd(accum[pc.target].total, p.w);
    atomicExchange(accum[pc.target].last, p.x);
    atomicAdd(accum[pc.target].bins[uint(p.z) % 64u], 1.0);
    imageAtomicAdd(splats[pc.target], ivec2(p.xy), p.w);
    float previous = imageAtomicExchange(splats[pc.target], ivec2(0), p.z);
    accum[1].last = previous;
}
