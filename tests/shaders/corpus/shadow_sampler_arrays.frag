// Shadow sampler arrays (2D, cube, 2D array, cube array) with depth-compare texture, lod, grad and offset.
#version 450

layout(set = 0, binding = 0) uniform sampler2DShadow cascades[4];
layout(set = 0, binding = 1) uniform samplerCubeShadow pointShadows[3];
layout(set = 0, binding = 2) uniform sampler2DArrayShadow layeredShadows[2];
layout(set = 0, binding = 3) uniform samplerCubeArrayShadow cubeArrayShadows[2];

layout(push_constant) uniform Push { int cascade; int light; } pc;

layout(location = 0) in vec4 shadowCoord;
layout(location = 1) in vec3 lightDir;
layout(location = 0) out vec4 color;

void main() {
    float s = texture(cascades[pc.cascade], shadowCoord.xyz);
    s += texture(cascades[pc.cascade], shadowCoord.xyz, 0.25);
    s += textureLod(cascades[pc.cascade], shadowCoord.xyz, 0.0);
    s += textureGrad(cascades[pc.cascade], shadowCoord.xyz, vec2(0.0), vec2(0.0));
    s += textureOffset(cascades[pc.cascade], shadowCoord.xyz, ivec2(1, 0));
    s += textureLodOffset(cascades[pc.cascade], shadowCoord.xyz, 0.0, ivec2(0, 1));
    s += texture(pointShadows[pc.light], vec4(lightDir, shadowCoord.z));
    s += texture(layeredShadows[pc.light & 1], vec4(shadowCoord.xy, float(pc.cascade), shadowCoord.z));
    s += texture(cubeArrayShadows[pc.light & 1], vec4(lightDir, 1.0), shadowCoord.w);
    color = vec4(s / 9.0);
}
