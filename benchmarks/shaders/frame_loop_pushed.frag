#version 450
// frame_loop.frag with its first texture picked as a bindless renderer picks a material: by
// a pushed index the shader does not bound (draw.index >> 4, 0 to 6 over 100 draws), so the
// layer decides each draw from the value pushed for it.
// frame_loop_app.c: each fragment samples one texture of an array by a dynamic (uniform)
// index and reads the weights buffer at an index computed from its position; every access is
// in bounds.

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
    vec4 texel = texture(textures[draw.index >> 4u], uv);
    vec4 other = texture(textures[(draw.index + 3u) % 8u], uv.yx);
    color = texel * weight + other * 0.25 + vec4(float(draw.index) / float(draw.count)) * 0.01;
}
