// atomicAdd/Min/Max/And/Or/Xor/Exchange/CompSwap on storage-block arrays and shared variables.
#version 450
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) buffer Counters { uint total; int minimum; int maximum; uint bits; uint slots[]; } counters[3];

layout(push_constant) uniform Push { int which; } pc;
shared uint localBits;
shared int localMax;

void main() {
    int v = int(gl_GlobalInvocationID.x) - 32;
    if (gl_LocalInvocationIndex == 0u) { localBits = 0u; localMax = -1000000; }
    barrier();
    atomicOr(localBits, 1u << (gl_LocalInvocationIndex & 31u));
    atomicMax(localMax, v);
    barrier();
    uint before = atomicAdd(counters[pc.which].total, 1u);
    atomicMin(counters[pc.which].minimum, v);
    atomicMax(counters[pc.which].maximum, localMax);
    atomicAnd(counters[pc.which].bits, ~(1u << (before & 31u)));
    atomicXor(counters[pc.which].bits, localBits);
    atomicExchange(counters[pc.which].slots[before % 16u], uint(v));
    atomicCompSwap(counters[2].slots[0], 0u, before);
}
