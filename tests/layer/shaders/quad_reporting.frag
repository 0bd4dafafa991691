#version 450
// quad.frag plus a hand-written error record (see region_reporting.comp): the fragment at
// pixel (x=1.5 inside the bad draw's stripe, y=2.5) reports index 9 of an array of length 8.
layout(location = 0) in vec4 color;
layout(location = 0) out vec4 result;
layout(set = 30, binding = 0) buffer GpuavOutput { uint written; uint words[]; } gpuav_out;
layout(push_constant) uniform Push { uint draw; uint draws; uint bad_draw; } push;

const uint SHADER_ID = 0x0BADC0DEu;

void main() {
    result = color * vec4(1.0, 0.5, 0.25, 1.0);
    uint stripe = 16u / push.draws;
    if (push.draw == push.bad_draw && uint(gl_FragCoord.x) == push.draw * stripe + 1u
            && uint(gl_FragCoord.y) == 2u) {
        uint at = atomicAdd(gpuav_out.written, 10u);
        if (at + 10u <= uint(gpuav_out.words.length())) {
            gpuav_out.words[at + 0u] = 10u;
            gpuav_out.words[at + 1u] = SHADER_ID;
            gpuav_out.words[at + 2u] = 77u;
            gpuav_out.words[at + 3u] = 4u;
            gpuav_out.words[at + 4u] = floatBitsToUint(gl_FragCoord.x);
            gpuav_out.words[at + 5u] = floatBitsToUint(gl_FragCoord.y);
            gpuav_out.words[at + 6u] = 0u;
            gpuav_out.words[at + 7u] = 9u;
            gpuav_out.words[at + 8u] = 8u;
            gpuav_out.words[at + 9u] = 0xFFFFFFFFu;  // no set and binding
        }
    }
}
