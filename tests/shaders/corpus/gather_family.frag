// textureGather, textureGatherOffset, textureGatherOffsets and their depth-compare forms on descriptor arrays.
#version 450

layout(set = 0, binding = 0) uniform sampler2D albedo[4];
layout(set = 0, binding = 1) uniform sampler2DShadow depth[4];
layout(set = 0, binding = 2) uniform texture2DArray layers[2];
layout(set = 0, binding = 3) uniform sampler pointSampler;
layout(set = 0, binding = 4) uniform samplerCube cubes[2];

layout(location = 0) in vec2 uv;
layout(location = 1) flat in ivec2 which;
layout(location = 0) out vec4 color;

const ivec2 kOffsets[4] = ivec2[](ivec2(0, 0), ivec2(1, 0), ivec2(0, 1), ivec2(1, 1));

void main() {
    vec4 g = textureGather(albedo[which.x], uv);
    g += textureGather(albedo[which.x], uv, 2);
    g += textureGatherOffset(albedo[which.x], uv, ivec2(-1, 0), 1);
    g += textureGatherOffsets(albedo[which.x], uv, kOffsets, 3);
    g += textureGather(depth[which.y], uv, 0.5);
    g += textureGatherOffset(depth[which.y], uv, 0.5, ivec2(1, -1));
    g += textureGatherOffsets(depth[which.y], uv, 0.5, kOffsets);
    g += textureGather(sampler2DArray(layers[which.x & 1], pointSampler), vec3(uv, 1.0));
    g += textureGather(cubes[which.y & 1], vec3(uv, 1.0), 1);
    color = g;
}
