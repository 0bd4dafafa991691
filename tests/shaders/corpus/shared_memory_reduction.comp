// Shared memory reduction with barrier(), memoryBarrierShared() and groupMemoryBarrier(), reading a storage-block array.
#version 450
layout(local_size_x = 128) in;

layout(set = 0, binding = 0, std430) readonly buffer Values { float values[]; } inputs[2];
layout(set = 0, binding = 1, std430) writeonly buffer Sums { float sums[]; } outputs;

layout(push_constant) uniform Push { uint inputIndex; } pc;

shared float partial[128];
shared uint nonZero;

void main() {
    uint local = gl_LocalInvocationID.x;
    if (local == 0u) {
        nonZero = 0u;
    }
    float v = inputs[pc.inputIndex].values[gl_GlobalInvocationID.x];
    partial[local] = v;
    memoryBarrierShared();
    barrier();
    if (v != 0.0) {
        atomicAdd(nonZero, 1u);
    }
    for (uint stride = gl_WorkGroupSize.x / 2u; stride > 0u; stride >>= 1) {
        if (local < stride) {
            partial[local] += partial[local + stride];
        }
        groupMemoryBarrier();
        barrier();
    }
    if (local == 0u) {
        outputs.sums[gl_WorkGroupID.x] = partial[0] / float(max(nonZero, 1u));
    }
}
