// GL_EXT_samplerless_texture_functions: texelFetch, textureSize, textureQueryLevels and textureSamples on bare textures.
#version 450
#extension GL_EXT_samplerless_texture_functions : require

layout(set = 0, binding = 0) uniform texture2D frames[4];
layout(set = 0, binding = 1) uniform texture2DMS msFrames[2];
layout(set = 0, binding = 2) uniform textureBuffer texels[2];
layout(set = 0, binding = 3) uniform utexture3D volumes[2];

layout(push_constant) uniform Push { int frame; } pc;
layout(location = 0) out vec4 color;

void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    ivec2 size = textureSize(frames[pc.frame], 0);
    int levels = textureQueryLevels(frames[pc.frame]);
    vec4 c = texelFetch(frames[pc.frame], p % size, levels - 1);
    c += texelFetchOffset(frames[pc.frame], p % size, 0, ivec2(-1, 0));
    int samples = textureSamples(msFrames[pc.frame & 1]);
    c += texelFetch(msFrames[pc.frame & 1], p, samples - 1);
    c += texelFetch(texels[pc.frame & 1], p.x % textureSize(texels[pc.frame & 1]));
    c.x += float(texelFetch(volumes[pc.frame & 1], ivec3(p, 0), 0).x);
    c.y += float(textureSize(volumes[1], 0).z);
    color = c;
}
