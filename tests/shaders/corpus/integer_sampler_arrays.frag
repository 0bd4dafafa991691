// Integer sampler arrays (isampler2D, usampler3D, usampler2DArray) with texture, texelFetch and gather.
#version 450

layout(set = 0, binding = 0) uniform isampler2D ids[4];
layout(set = 0, binding = 1) uniform usampler3D volumes[2];
layout(set = 0, binding = 2) uniform usampler2DArray masks[2];

layout(location = 0) in vec3 coord;
layout(location = 1) flat in int which;
layout(location = 0) out ivec4 outIds;
layout(location = 1) out uvec4 outBits;

void main() {
    ivec4 i = texture(ids[which], coord.xy);
    i += texelFetch(ids[which], ivec2(coord.xy * 64.0), 0);
    i += textureGather(ids[which], coord.xy, 1);
    uvec4 u = texture(volumes[which & 1], coord);
    u |= texelFetch(volumes[which & 1], ivec3(coord * 16.0), 1);
    u ^= textureLod(masks[which >> 1], vec3(coord.xy, 2.0), 0.0);
    outIds = i;
    outBits = u;
}
