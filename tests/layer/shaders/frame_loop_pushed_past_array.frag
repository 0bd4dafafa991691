#version 450
// benchmarks/shaders/frame_loop_pushed.frag with one bug: the first fetch's pushed index
// (draw.index >> 3) reaches past the array of 8 in draws 64 to 99. The layer decides each draw
// from the value pushed for it: only those draws run their checks, and report.

layout(set = 0, binding = 0) uniform sampler2D textures[8];
layout(set = 0, binding = 1) readonly buffer Weights {
    vec4 weights[];
};
layout(push_constant) uniform Draw {
    uint index;
    uint count;
} draw;

layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

void main() {
    uvec2 pixel = uvec2(gl_FragCoord.xy);
    uint slot = (pixel.x * 7u + pixel.y * 13u + draw.index) % uint(weights.length());
    vec4 weight = weights[slot];
    vec4 texel = texture(textures[draw.index >> 3u], uv);
    vec4 other = texture(textures[(draw.index + 3u) % 8u], uv.yx);
    color = texel * weight + other * 0.25 + vec4(float(draw.index) / float(draw.count)) * 0.01;
}
