#version 450
// The fragment pass of issue 17's table (frame_loop_app.c with --fragment): each fragment makes
// 64 samples of an array of 8 textures, each by a dynamic (uniform) index that changes from
// sample to sample; every access is in bounds.

layout(set = 0, binding = 0) uniform sampler2D textures[8];
layout(push_constant) uniform Draw {
    uint index;
    uint count;
} draw;

layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

void main() {
    vec4 sum = vec4(0.0);
    for (uint i = 0u; i < 64u; ++i) {
        sum += texture(textures[(draw.index + i) % 8u], uv + vec2(float(i) / 256.0));
    }
    color = sum / 64.0;
}
