// Uniform texel buffers: arrays of samplerBuffer and isamplerBuffer, texelFetch and textureSize.
#version 450

layout(set = 0, binding = 0) uniform samplerBuffer palettes[4];
layout(set = 0, binding = 1) uniform isamplerBuffer lookup[2];
layout(set = 0, binding = 2) uniform textureBuffer rawTexels;
layout(set = 0, binding = 3) uniform sampler nearest;

layout(location = 0) flat in int palette;
layout(location = 1) flat in int entry;
layout(location = 0) out vec4 color;

void main() {
    int count = textureSize(palettes[palette]);
    int slot = texelFetch(lookup[palette & 1], entry % textureSize(lookup[palette & 1])).x;
    vec4 c = texelFetch(palettes[palette], slot % count);
    c += texelFetch(samplerBuffer(rawTexels, nearest), entry);
    color = c;
}
