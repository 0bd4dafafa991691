// Image atomics on arrays of r32ui/r32i 2D and 3D images: imageAtomicAdd/Min/Max/And/Or/Xor/Exchange/CompSwap.
#version 450
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, r32ui) uniform uimage2D histograms[4];
layout(set = 0, binding = 1, r32i) uniform iimage3D bounds[2];
layout(set = 0, binding = 2, std430) readonly buffer Samples { uvec4 samples[]; } input_;

layout(push_constant) uniform Push { uint histogram; int volume; } pc;

void main() {
    uvec4 s = input_.samples[gl_GlobalInvocationID.x];
    ivec2 bin = ivec2(s.xy & 255u);
    uint count = imageAtomicAdd(histograms[pc.histogram], bin, 1u);
    imageAtomicMax(histograms[pc.histogram], ivec2(0, 0), count);
    imageAtomicMin(histograms[pc.histogram], ivec2(1, 0), s.z);
    imageAtomicAnd(histograms[pc.histogram], ivec2(2, 0), s.w);
    imageAtomicOr(histograms[pc.histogram], ivec2(3, 0), s.w);
    imageAtomicXor(histograms[pc.histogram], ivec2(4, 0), s.w);
    uint old = imageAtomicExchange(histograms[pc.histogram], ivec2(5, 0), s.x);
    imageAtomicCompSwap(histograms[pc.histogram], ivec2(6, 0), old, s.y);
    ivec3 cell = ivec3(s.xyz % 16u);
    imageAtomicMin(bounds[pc.volume], cell, int(s.w));
    imageAtomicMax(bounds[pc.volume], cell + ivec3(1), -int(s.w));
    imageAtomicAdd(bounds[1], ivec3(0), 1);
}
