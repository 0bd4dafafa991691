#version 450
// A model (see ssbo_loops_checked.comp): the load's index is at most MASK (a bitwise AND with
// a constant), so one check of MASK's span against the bound range before the loop covers
// every iteration; the loop runs unchecked when it passes, checked otherwise.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Result { uint v[]; } result;
const uint MASK = (1u << 20) - 1u;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint n = uint(data.v.length());
    bool store_ok = i < uint(result.v.length());
    uint acc = 0u;
    if (MASK < n && store_ok) {
        for (uint k = 0u; k < 64u; ++k) {
            acc += data.v[(i * 2654435761u + k) & MASK];
            result.v[i] = acc;
        }
    } else {
        if (!store_ok) atomicOr(result.v[0], 0x40000000u);
        for (uint k = 0u; k < 64u; ++k) {
            uint at = (i * 2654435761u + k) & MASK;
            if (at < n) acc += data.v[at]; else atomicOr(result.v[0], 0x80000000u);
            if (store_ok) result.v[i] = acc;
        }
    }
}
