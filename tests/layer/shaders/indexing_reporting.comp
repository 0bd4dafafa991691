#version 450
// A runtime array of storage buffers (set 0, binding 1: variable count, PARTIALLY_BOUND)
// indexed by push.index, checked the way the instrumentation checks it against the layer's
// descriptor state (gpuav/instrument/descriptor_state.py): our set (placeholder 30, filled in
// by tests/layer/fake_instrument.py) has the action's bound-sets area at binding 1 (a uniform
// block of uvec4: word s is quads[s / 4][s % 4]) and the state buffer at binding 2. The
// dispatch also copies what it read of the state into result.words[push.slot * 32 ...] so
// that the tests can compare it word for word.
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Result { uint words[]; } result;
layout(set = 0, binding = 1) buffer Item { uint value; } items[];
layout(set = 30, binding = 0) buffer GpuavOutput { uint written; uint words[]; } gpuav_out;
layout(set = 30, binding = 1) uniform GpuavBound { uvec4 quads[40]; } gpuav_bound;
layout(set = 30, binding = 2) readonly buffer GpuavState { uint words[]; } gpuav_state;
layout(push_constant) uniform Push { uint index; uint slot; } push;

const uint SHADER_ID = 0x0BADC0DEu;
const uint NO_STATE = 0xFFFFFFFFu;
const uint TABLE_WORD = 3u;  // binding_table_word(1)
const uint SIZE_WORD = 4u;   // binding_size_word(1)
const uint DUMPED = 16u;

void report(uint code, uint index, uint length) {
    uint size = 10u;  // index, length, set and binding (record.DESCRIPTOR_ERRORS)
    uint at = atomicAdd(gpuav_out.written, size);
    if (at + size <= uint(gpuav_out.words.length())) {
        gpuav_out.words[at + 0u] = size;
        gpuav_out.words[at + 1u] = SHADER_ID;
        gpuav_out.words[at + 2u] = 77u;
        gpuav_out.words[at + 3u] = 5u;
        gpuav_out.words[at + 4u] = gl_GlobalInvocationID.x;
        gpuav_out.words[at + 5u] = 0u;
        gpuav_out.words[at + 6u] = code;
        gpuav_out.words[at + 7u] = index;
        gpuav_out.words[at + 8u] = length;
        gpuav_out.words[at + 9u] = 1u;  // set 0, binding 1
    }
}

void main() {
    uint base = push.slot * 32u;
    uint region = gpuav_bound.quads[0].x;
    result.words[base + 0u] = region == NO_STATE ? 0u : 1u;
    result.words[base + 1u] = gpuav_bound.quads[0].y;
    bool ok = true;
    if (region != NO_STATE) {
        uint size = gpuav_state.words[region + SIZE_WORD];
        uint table = gpuav_state.words[region + TABLE_WORD];
        result.words[base + 2u] = gpuav_state.words[region];
        result.words[base + 3u] = size;
        for (uint i = 0u; i < DUMPED; i++) {
            result.words[base + 4u + i] = i < size ? gpuav_state.words[region + table + i] : 7u;
        }
        if (push.index >= size) {
            report(0u, push.index, size);
            ok = false;
        } else if (gpuav_state.words[region + table + push.index] == 0u) {
            report(1u, push.index, 0u);
            ok = false;
        }
    }
    if (ok) {
        result.words[base + 31u] = items[nonuniformEXT(push.index)].value;
    }
}
