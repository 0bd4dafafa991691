#version 450
// indexing_reporting.comp for a pipeline layout that uses every set index: the output block,
// bound-sets words and state buffer are reached through the context of three device
// addresses (gpuav/instrument/descriptor_state.py) whose own address the layer pushes as a
// push constant. The member's offset 4088 is a placeholder that
// tests/layer/fake_context_instrument.py replaces with the layer's offset.
#extension GL_EXT_nonuniform_qualifier : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Result { uint words[]; } result;
layout(set = 0, binding = 1) buffer Item { uint value; } items[];
layout(buffer_reference, std430, buffer_reference_align = 4) buffer GpuavOutput {
    uint written;
    uint words[];
};
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer GpuavBound {
    uint region[32];
};
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer GpuavState {
    uint words[];
};
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer GpuavContext {
    GpuavOutput output_block;
    GpuavBound bound;
    GpuavState state;
};
layout(push_constant) uniform Push {
    uint index;
    uint slot;
    layout(offset = 4088) GpuavContext context;
} push;

const uint SHADER_ID = 0x0BADC0DEu;
const uint NO_STATE = 0xFFFFFFFFu;
const uint TABLE_WORD = 3u;  // binding_table_word(1)
const uint SIZE_WORD = 4u;   // binding_size_word(1)
const uint DUMPED = 16u;
const uint OUTPUT_CAPACITY = 160u;  // 16 records of 10 words fit in any output block

void report(uint code, uint index, uint length) {
    uint size = 10u;  // index, length, set and binding (record.DESCRIPTOR_ERRORS)
    uint at = atomicAdd(push.context.output_block.written, size);
    if (at + size <= OUTPUT_CAPACITY) {
        push.context.output_block.words[at + 0u] = size;
        push.context.output_block.words[at + 1u] = SHADER_ID;
        push.context.output_block.words[at + 2u] = 77u;
        push.context.output_block.words[at + 3u] = 5u;
        push.context.output_block.words[at + 4u] = gl_GlobalInvocationID.x;
        push.context.output_block.words[at + 5u] = 0u;
        push.context.output_block.words[at + 6u] = code;
        push.context.output_block.words[at + 7u] = index;
        push.context.output_block.words[at + 8u] = length;
        push.context.output_block.words[at + 9u] = 1u;  // set 0, binding 1
    }
}

void main() {
    uint base = push.slot * 32u;
    uint region = push.context.bound.region[0];
    result.words[base + 0u] = region == NO_STATE ? 0u : 1u;
    result.words[base + 1u] = push.context.bound.region[1];
    bool ok = true;
    if (region != NO_STATE) {
        uint size = push.context.state.words[region + SIZE_WORD];
        uint table = push.context.state.words[region + TABLE_WORD];
        result.words[base + 2u] = push.context.state.words[region];
        result.words[base + 3u] = size;
        for (uint i = 0u; i < DUMPED; i++) {
            result.words[base + 4u + i] = i < size ? push.context.state.words[region + table + i] : 7u;
        }
        if (push.index >= size) {
            report(0u, push.index, size);
            ok = false;
        } else if (push.context.state.words[region + table + push.index] == 0u) {
            report(1u, push.index, 0u);
            ok = false;
        }
    }
    if (ok) {
        result.words[base + 31u] = items[nonuniformEXT(push.index)].value;
    }
}
