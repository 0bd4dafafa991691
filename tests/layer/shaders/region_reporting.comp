#version 450
// region.comp plus a hand-written error record, as instrumentation would write one: the
// invocation whose index equals push.bad_index reports "index 6 out of bounds of array of
// length 4". Set 30 and the shader id 0x0BADC0DE are placeholders that
// tests/layer/fake_instrument.py replaces with the layer's set index and shader id.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; } data;
layout(set = 30, binding = 0) buffer GpuavOutput { uint written; uint words[]; } gpuav_out;
layout(push_constant) uniform Push { uint base; uint bad_index; } push;

const uint SHADER_ID = 0x0BADC0DEu;

void main() {
    uint i = push.base + gl_GlobalInvocationID.x;
    data.values[i] = data.values[i] * 3u + i;
    if (gl_GlobalInvocationID.x == push.bad_index) {
        uint at = atomicAdd(gpuav_out.written, 10u);
        if (at + 10u <= uint(gpuav_out.words.length())) {
            gpuav_out.words[at + 0u] = 10u;
            gpuav_out.words[at + 1u] = SHADER_ID;
            gpuav_out.words[at + 2u] = 42u;
            gpuav_out.words[at + 3u] = 5u;
            gpuav_out.words[at + 4u] = gl_GlobalInvocationID.x;
            gpuav_out.words[at + 5u] = 0u;
            gpuav_out.words[at + 6u] = 0u;
            gpuav_out.words[at + 7u] = 6u;
            gpuav_out.words[at + 8u] = 4u;
            gpuav_out.words[at + 9u] = 0xFFFFFFFFu;  // no set and binding
        }
    }
}
