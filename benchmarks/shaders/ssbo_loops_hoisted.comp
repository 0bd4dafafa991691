#version 450
// A model (see ssbo_loops_checked.comp): the store's check, whose operands do not change in
// the loop, is made once before it; the load's check stays per access.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Result { uint v[]; } result;
const uint MASK = (1u << 20) - 1u;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint n = uint(data.v.length());
    bool store_ok = i < uint(result.v.length());
    if (!store_ok) atomicOr(result.v[0], 0x40000000u);
    uint acc = 0u;
    for (uint k = 0u; k < 64u; ++k) {
        uint at = (i * 2654435761u + k) & MASK;
        if (at < n) acc += data.v[at]; else atomicOr(result.v[0], 0x80000000u);
        if (store_ok) result.v[i] = acc;
    }
}
