#version 450
// A model, not instrumented by anyone: ssbo_loops.comp with the checks written by hand as
// the physical limit of a range check would have them, one compare and one branch per access
// against the bound range (the buffer's length), a failure reported by an atomic. Both checks
// stay in the loop, as a pass that hoists nothing but the range would leave them.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Result { uint v[]; } result;
const uint MASK = (1u << 20) - 1u;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint n = uint(data.v.length());
    uint m = uint(result.v.length());
    uint acc = 0u;
    for (uint k = 0u; k < 64u; ++k) {
        uint at = (i * 2654435761u + k) & MASK;
        if (at < n) acc += data.v[at]; else atomicOr(result.v[0], 0x80000000u);
        if (i < m) result.v[i] = acc; else atomicOr(result.v[0], 0x40000000u);
    }
}
