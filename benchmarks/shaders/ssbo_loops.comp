#version 450
// Issue 14's storage-buffer kernel: every invocation runs 64 iterations of an indexed load
// from one plain storage buffer and a store to another, both checked against the bound range
// (the index is a hash the pass cannot prove in range; the store's index does not change in
// the loop). The sum is the same on every device, with or without a layer.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Result { uint v[]; } result;
const uint MASK = (1u << 20) - 1u;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint acc = 0u;
    for (uint k = 0u; k < 64u; ++k) {
        acc += data.v[(i * 2654435761u + k) & MASK];
        result.v[i] = acc;
    }
}
