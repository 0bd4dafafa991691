// texelFetch/texelFetchOffset, textureSize, textureQueryLevels, textureQueryLod and textureSamples on arrays.
#version 450

layout(set = 0, binding = 0) uniform sampler2D images[4];
layout(set = 0, binding = 1) uniform sampler2DMS msImages[2];
layout(set = 0, binding = 2) uniform sampler2DArray arrays[2];
layout(set = 0, binding = 3) uniform samplerCube cubes[2];

layout(location = 0) in vec2 uv;
layout(location = 1) flat in int index;
layout(location = 0) out vec4 color;

void main() {
    ivec2 size = textureSize(images[index], 0);
    int levels = textureQueryLevels(images[index]);
    vec2 lod = textureQueryLod(images[index], uv);
    ivec2 texel = ivec2(uv * vec2(size));
    vec4 c = texelFetch(images[index], texel, levels - 1);
    c += texelFetchOffset(images[index], texel, 0, ivec2(1, 1));
    int samples = textureSamples(msImages[index & 1]);
    for (int s = 0; s < samples; ++s) {
        c += texelFetch(msImages[index & 1], texel, s) / float(samples);
    }
    ivec3 layerSize = textureSize(arrays[index & 1], 1);
    c += texelFetch(arrays[index & 1], ivec3(texel % layerSize.xy, layerSize.z - 1), 0);
    ivec2 cubeSize = textureSize(cubes[index & 1], 0);
    c.xy += lod + vec2(cubeSize) + textureQueryLod(cubes[index & 1], vec3(uv, 1.0));
    c.w += float(textureQueryLevels(cubes[1]));
    color = c;
}
