#version 450
// gpuav's own validation dispatch: checks the parameters of draws and dispatches that live in
// GPU memory (indirect commands, draw counts, index values) and writes error records, in the
// layout of gpuav.instrument.record, into each action's output block. The layer records it in
// a command buffer of its own that runs right after the app's (gpuav.layer.action_checks).
// One dispatch checks many actions (those of one group, which binds what they read, whose
// blocks lie in one output chunk): workgroup row y checks the action of row first_row + y of
// the row table, and its workgroups x < the row's P_GROUPS share that action's index scan.
// tools/generate_action_checks.py builds it, passing the ERROR_*, KIND_*, FLAG_* and P_*
// values of gpuav.instrument.record and gpuav.layer.action_check_parameters as -D options.
layout(local_size_x = 64) in;

// What each row's words mean: gpuav.layer.action_check_parameters.
layout(set = 0, binding = 0) readonly buffer Rows { uint words[]; } rows;
// What the group's actions read: their indirect, count and index buffers. A row names the
// slots of its own; window_word reads a slot at a constant index, which needs no
// descriptor-indexing feature.
layout(set = 1, binding = 0) readonly buffer Window { uint words[]; } windows[WINDOW_SLOTS];
// The output chunk holding their blocks ({uint written; uint data[];} at P_BLOCK_WORD).
layout(set = 2, binding = 0) buffer Output { uint words[]; } output_chunk;
// window_word's switch names every slot: an array of another size fails to compile here.
const uint SWITCH_NAMES_EVERY_SLOT[WINDOW_SLOTS == 15u ? 1 : 0] = {1u};

layout(push_constant) uniform Dispatch {
    uint first_row;
    uint block_data_words;  // the data words of an output block
} dispatch;

// The row of this workgroup.
uint p_word[PARAMETER_WORDS];

const uint RECORD_WORDS = 13u;  // the seven common words and six validation words
const uint UNLIMITED = 0xFFFFFFFFu;

shared uint bad_count;
shared uint first_bad;

uint window_word(uint slot, uint at) {
    switch (slot) {
    case 0u: return windows[0].words[at];
    case 1u: return windows[1].words[at];
    case 2u: return windows[2].words[at];
    case 3u: return windows[3].words[at];
    case 4u: return windows[4].words[at];
    case 5u: return windows[5].words[at];
    case 6u: return windows[6].words[at];
    case 7u: return windows[7].words[at];
    case 8u: return windows[8].words[at];
    case 9u: return windows[9].words[at];
    case 10u: return windows[10].words[at];
    case 11u: return windows[11].words[at];
    case 12u: return windows[12].words[at];
    case 13u: return windows[13].words[at];
    default: return windows[14].words[at];
    }
}

void write_record(uint code, uint w0, uint w1, uint w2, uint w3, uint w4, uint w5) {
    uint whole = dispatch.block_data_words;
    uint capacity = whole >= RESERVED_TAIL_WORDS ? whole - RESERVED_TAIL_WORDS : 0u;
    uint block = p_word[P_BLOCK_WORD];
    uint start = atomicAdd(output_chunk.words[block], RECORD_WORDS);
    if (start > capacity || RECORD_WORDS > capacity - start) {
        return;
    }
    uint at = block + 1u + start;
    output_chunk.words[at] = RECORD_WORDS;
    output_chunk.words[at + 1u] = VALIDATION_SHADER_ID;
    output_chunk.words[at + 2u] = 0u;
    output_chunk.words[at + 3u] = STAGE_COMPUTE;
    output_chunk.words[at + 4u] = 0u;
    output_chunk.words[at + 5u] = 0u;
    output_chunk.words[at + 6u] = code;
    output_chunk.words[at + 7u] = w0;
    output_chunk.words[at + 8u] = w1;
    output_chunk.words[at + 9u] = w2;
    output_chunk.words[at + 10u] = w3;
    output_chunk.words[at + 11u] = w4;
    output_chunk.words[at + 12u] = w5;
}

uint command_word(uint draw, uint member) {
    return window_word(p_word[P_COMMANDS_SLOT],
                       p_word[P_FIRST_WORD] + draw * p_word[P_STRIDE_WORDS] + member);
}

// An index of 4, 2 or 1 bytes: 2 to the power ``width_log2`` of them share a word.
uint index_width_log2() {
    uint flags = p_word[P_FLAGS];
    return (flags & FLAG_INDEX16) != 0u ? 1u : (flags & FLAG_INDEX8) != 0u ? 2u : 0u;
}

// The all-ones index of the width: primitive restart.
uint restart_value(uint width_log2) {
    return 0xFFFFFFFFu >> (32u - (32u >> width_log2));
}

uint index_at(uint element, uint width_log2) {
    uint word = window_word(p_word[P_INDICES_SLOT], element >> width_log2);
    uint shift = (element & ((1u << width_log2) - 1u)) * (32u >> width_log2);
    return (word >> shift) & restart_value(width_log2);
}

// first + count > capacity, without wrapping.
bool past(uint first, uint count, uint capacity) {
    return count > capacity || first > capacity - count;
}

// Every index of one draw, spread over the workgroups: index + vertexOffset must name a vertex
// the bound vertex buffers hold. One record per workgroup that found any. Called in uniform
// control flow (it has barriers).
void scan_indices(uint draw, uint first_index, uint index_count, int vertex_offset) {
    uint vertex_capacity = p_word[P_VERTEX_CAPACITY];
    uint index_capacity = p_word[P_INDEX_CAPACITY];
    uint readable = first_index < index_capacity ? index_capacity - first_index : 0u;
    uint count = min(index_count, readable);
    // A workgroup past the draw's indices has nothing to do (the same for all its invocations,
    // so its barriers are skipped together).
    if (gl_WorkGroupID.x * gl_WorkGroupSize.x >= count) {
        return;
    }
    if (gl_LocalInvocationIndex == 0u) {
        bad_count = 0u;
        first_bad = UNLIMITED;
    }
    barrier();
    bool restart = (p_word[P_FLAGS] & FLAG_RESTART) != 0u;
    uint width_log2 = index_width_log2();
    uint threads = p_word[P_GROUPS] * gl_WorkGroupSize.x;
    // This invocation's first bad index and its value (its indices ascend).
    uint own_first = UNLIMITED;
    uint own_value = 0u;
    for (uint k = gl_GlobalInvocationID.x; k < count; k += threads) {
        uint value = index_at(p_word[P_INDEX_FIRST_ELEMENT] + first_index + k, width_log2);
        if (restart && value == restart_value(width_log2)) {
            continue;
        }
        int vertex = int(value) + vertex_offset;
        if (vertex < 0 || uint(vertex) >= vertex_capacity) {
            atomicAdd(bad_count, 1u);
            atomicMin(first_bad, k);
            if (own_first == UNLIMITED) {
                own_first = k;
                own_value = value;
            }
        }
    }
    barrier();
    // The workgroup's first bad index is one invocation's own: that one writes the record.
    if (own_first != UNLIMITED && own_first == first_bad) {
        write_record(ERROR_VERTEX_INDEX_RANGE, draw, first_index + first_bad, own_value,
                     uint(vertex_offset), vertex_capacity, bad_count);
    }
    barrier();
}

void check_groups(uint draw, uint x, uint y, uint z) {
    uint counts[3] = uint[3](x, y, z);
    uint limits[3] = uint[3](p_word[P_LIMIT_X], p_word[P_LIMIT_Y], p_word[P_LIMIT_Z]);
    for (uint axis = 0u; axis < 3u; ++axis) {
        if (counts[axis] > limits[axis]) {
            write_record(ERROR_GROUP_COUNT, draw, axis, counts[axis], limits[axis], 0u, 0u);
        }
    }
    uint high;
    uint low;
    umulExtended(x, y, high, low);
    uint high_z;
    uint total;
    umulExtended(low, z, high_z, total);
    bool wrapped = high != 0u && z != 0u || high_z != 0u;
    if (wrapped || total > p_word[P_LIMIT_TOTAL]) {
        write_record(ERROR_GROUP_COUNT, draw, 3u, wrapped ? UNLIMITED : total,
                     p_word[P_LIMIT_TOTAL], 0u, 0u);
    }
}

void check_first_instance(uint draw, uint first_instance) {
    if ((p_word[P_FLAGS] & FLAG_FIRST_INSTANCE) != 0u && first_instance != 0u) {
        write_record(ERROR_FIRST_INSTANCE, draw, first_instance, 0u, 0u, 0u, 0u);
    }
}

void check_instances(uint draw, uint first_instance, uint instance_count) {
    uint capacity = p_word[P_INSTANCE_CAPACITY];
    if (instance_count != 0u && past(first_instance, instance_count, capacity)) {
        write_record(ERROR_VERTEX_RANGE, draw, first_instance, instance_count, capacity, 1u, 0u);
    }
}

void main() {
    uint base = (dispatch.first_row + gl_WorkGroupID.y) * PARAMETER_WORDS;
    // Whole workgroups leave here, so the scan's barriers stay in uniform control flow.
    if (gl_WorkGroupID.x >= rows.words[base + P_GROUPS]) {
        return;
    }
    for (uint k = 0u; k < PARAMETER_WORDS; ++k) {
        p_word[k] = rows.words[base + k];
    }
    uint kind = p_word[P_KIND];
    bool first_thread = gl_GlobalInvocationID.x == 0u;
    if (kind == KIND_REPORT) {
        if (first_thread) {
            write_record(p_word[P_REPORT_CODE], p_word[P_REPORT_WORDS], p_word[P_REPORT_WORDS + 1],
                         p_word[P_REPORT_WORDS + 2], p_word[P_REPORT_WORDS + 3],
                         p_word[P_REPORT_WORDS + 4], p_word[P_REPORT_WORDS + 5]);
        }
        return;
    }
    bool direct = kind == KIND_DIRECT_INDEXED;
    uint draws = direct ? 1u : p_word[P_DRAW_COUNT];
    if ((p_word[P_FLAGS] & FLAG_COUNT_BUFFER) != 0u) {
        uint count = window_word(p_word[P_COUNT_SLOT], p_word[P_COUNT_WORD]);
        if (first_thread && count > p_word[P_MAX_DRAW_INDIRECT_COUNT]) {
            write_record(ERROR_DRAW_COUNT_LIMIT, 0u, count, p_word[P_MAX_DRAW_INDIRECT_COUNT], 0u,
                         0u, 0u);
        }
        if (first_thread && count > p_word[P_DRAWS_IN_BUFFER]) {
            write_record(ERROR_DRAW_COUNT_PAST_BUFFER, 0u, count, p_word[P_DRAW_COUNT],
                         p_word[P_DRAWS_IN_BUFFER], 0u, 0u);
        }
        draws = min(count, draws);
    }
    if (!direct) {
        draws = min(draws, p_word[P_DRAWS_IN_BUFFER]);
    }
    // The words of each command the row reads, read in one place: each place that reads a
    // window is a switch over its slots, which the driver compiles once for each.
    uint members = kind == KIND_GROUPS ? 3u
                 : kind == KIND_DRAW ? 4u
                 : kind == KIND_DRAW_INDEXED ? 5u
                 : 0u;
    for (uint draw = 0u; draw < draws; ++draw) {
        uint command[5];
        for (uint member = 0u; member < members; ++member) {
            command[member] = command_word(draw, member);
        }
        // An indexed draw's indices to scan (the same for the whole workgroup).
        bool scan = direct;
        uint first_index = p_word[P_DIRECT_FIRST_INDEX];
        uint index_count = p_word[P_DIRECT_INDEX_COUNT];
        int vertex_offset = int(p_word[P_DIRECT_VERTEX_OFFSET]);
        if (kind == KIND_GROUPS) {
            if (first_thread) {
                check_groups(draw, command[0], command[1], command[2]);
            }
        } else if (kind == KIND_DRAW) {
            uint vertex_count = command[0];
            uint instance_count = command[1];
            uint first_vertex = command[2];
            uint first_instance = command[3];
            uint capacity = p_word[P_VERTEX_CAPACITY];
            if (first_thread) {
                check_first_instance(draw, first_instance);
                if (instance_count != 0u && vertex_count != 0u &&
                    past(first_vertex, vertex_count, capacity)) {
                    write_record(ERROR_VERTEX_RANGE, draw, first_vertex, vertex_count, capacity,
                                 0u, 0u);
                }
                if (vertex_count != 0u) {
                    check_instances(draw, first_instance, instance_count);
                }
            }
        } else if (kind == KIND_DRAW_INDEXED) {
            index_count = command[0];
            uint instance_count = command[1];
            first_index = command[2];
            vertex_offset = int(command[3]);
            uint first_instance = command[4];
            uint capacity = p_word[P_INDEX_CAPACITY];
            if (first_thread) {
                check_first_instance(draw, first_instance);
                if (index_count != 0u && past(first_index, index_count, capacity)) {
                    write_record(ERROR_INDEX_RANGE, draw, first_index, index_count, capacity,
                                 0u, 0u);
                }
                if (index_count != 0u) {
                    check_instances(draw, first_instance, instance_count);
                }
            }
            scan = instance_count != 0u && (p_word[P_FLAGS] & FLAG_SCAN_INDICES) != 0u;
        }
        if (scan) {
            scan_indices(draw, first_index, index_count, vertex_offset);
        }
    }
}
