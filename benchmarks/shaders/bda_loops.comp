#version 450
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
// Issue 14's device-address kernel: ssbo_loops.comp with both buffers reached through
// GL_EXT_buffer_reference pointers made from addresses read from a uniform block (as uvec2:
// a block member of reference type makes gpuav emit a call to a function it then drops,
// which spirv-val and drivers refuse; see RESULTS_buffer_ranges.md). Every invocation runs 64
// iterations of a hashed load through one pointer and a store through another; each access is
// an address the pass cannot prove inside a live buffer. The loop alternates between the two
// buffers. -DSTORE_AFTER_LOOP moves the store after the loop, so that the loop walks one buffer
// only (the sum is the same, the work is not). The sum is the same on every device, with or
// without a layer.
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Data { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Result { uint v[]; };
layout(set = 0, binding = 0) uniform Pointers { uvec2 data; uvec2 result; } pointers;
const uint MASK = (1u << 20) - 1u;
void main() {
    Data data = Data(pointers.data);
    Result result = Result(pointers.result);
    uint i = gl_GlobalInvocationID.x;
    uint acc = 0u;
    for (uint k = 0u; k < 64u; ++k) {
        acc += data.v[(i * 2654435761u + k) & MASK];
#ifndef STORE_AFTER_LOOP
        result.v[i] = acc;
#endif
    }
#ifdef STORE_AFTER_LOOP
    result.v[i] = acc;
#endif
}
