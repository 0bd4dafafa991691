// Storage texel buffers: arrays of imageBuffer/uimageBuffer with imageLoad, imageStore, imageSize and imageAtomicAdd.
#version 450
layout(local_size_x = 32) in;

layout(set = 0, binding = 0, rgba32f) uniform readonly imageBuffer particlesIn[3];
layout(set = 0, binding = 1, rgba32f) uniform writeonly imageBuffer particlesOut[3];
layout(set = 0, binding = 2, r32ui) uniform uimageBuffer counters[2];
layout(set = 0, binding = 3, rgba16i) uniform iimageBuffer cells;

layout(push_constant) uniform Push { int pool; float dt; } pc;

void main() {
    int i = int(gl_GlobalInvocationID.x);
    if (i >= imageSize(particlesIn[pc.pool])) {
        return;
    }
    vec4 p = imageLoad(particlesIn[pc.pool], i);
    p.xyz += vec3(0.0, -9.8, 0.0) * pc.dt;
    imageStore(particlesOut[pc.pool], i, p);
    uint slot = imageAtomicAdd(counters[pc.pool & 1], 0, 1u);
    imageStore(cells, int(slot), ivec4(p));
}
