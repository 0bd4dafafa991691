#version 450
// quad.vert plus a hand-written error record from vertex 4 of the bad draw (see
// region_reporting.comp): index 3 of an array of length 2.
layout(push_constant) uniform Push { uint draw; uint draws; uint bad_draw; } push;
layout(location = 0) out vec4 color;
layout(set = 30, binding = 0) buffer GpuavOutput { uint written; uint words[]; } gpuav_out;

const uint SHADER_ID = 0x0BADC0DEu;

void main() {
    vec2 corners[6] = vec2[](vec2(0, 0), vec2(1, 0), vec2(0, 1), vec2(1, 0), vec2(1, 1), vec2(0, 1));
    vec2 corner = corners[gl_VertexIndex % 6];
    float left = float(push.draw) / float(push.draws);
    float right = float(push.draw + 1u) / float(push.draws);
    vec2 position = vec2(mix(left, right, corner.x), corner.y) * 2.0 - 1.0;
    gl_Position = vec4(position, 0.0, 1.0);
    color = vec4(float(push.draw + 1u) / float(push.draws + 1u), corner, 1.0);
    if (push.draw == push.bad_draw && gl_VertexIndex == 4) {
        uint at = atomicAdd(gpuav_out.written, 10u);
        if (at + 10u <= uint(gpuav_out.words.length())) {
            gpuav_out.words[at + 0u] = 10u;
            gpuav_out.words[at + 1u] = SHADER_ID;
            gpuav_out.words[at + 2u] = 55u;
            gpuav_out.words[at + 3u] = 0u;
            gpuav_out.words[at + 4u] = uint(gl_VertexIndex);
            gpuav_out.words[at + 5u] = uint(gl_InstanceIndex);
            gpuav_out.words[at + 6u] = 0u;
            gpuav_out.words[at + 7u] = 3u;
            gpuav_out.words[at + 8u] = 2u;
            gpuav_out.words[at + 9u] = 0xFFFFFFFFu;  // no set and binding
        }
    }
}
