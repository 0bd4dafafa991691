// Projective sampling: textureProj, textureProjLod, textureProjGrad and their Offset forms, colour and shadow.
#version 450

layout(set = 0, binding = 0) uniform sampler2D maps[4];
layout(set = 0, binding = 1) uniform sampler2DShadow shadowMaps[4];
layout(set = 0, binding = 2) uniform sampler3D volumes[2];

layout(location = 0) in vec4 clipCoord;
layout(location = 1) flat in int mapIndex;
layout(location = 0) out vec4 color;

void main() {
    vec3 p3 = clipCoord.xyw;
    vec4 c = textureProj(maps[mapIndex], p3);
    c += textureProj(maps[mapIndex], clipCoord);
    c += textureProj(maps[mapIndex], p3, 1.0);
    c += textureProjLod(maps[mapIndex], clipCoord, 0.0);
    c += textureProjGrad(maps[mapIndex], p3, vec2(0.1), vec2(0.1));
    c += textureProjOffset(maps[mapIndex], clipCoord, ivec2(1, 1));
    c += textureProjLodOffset(maps[mapIndex], p3, 1.0, ivec2(0, -2));
    c += textureProjGradOffset(maps[mapIndex], clipCoord, dFdx(p3.xy), dFdy(p3.xy), ivec2(3, 0));
    c += textureProj(volumes[mapIndex & 1], clipCoord);

    float lit = textureProj(shadowMaps[mapIndex], clipCoord);
    lit += textureProjLod(shadowMaps[mapIndex], clipCoord, 0.0);
    lit += textureProjOffset(shadowMaps[mapIndex], clipCoord, ivec2(-1, 0));
    lit += textureProjGrad(shadowMaps[mapIndex], clipCoord, vec2(0.0), vec2(0.0));
    color = c * lit;
}
