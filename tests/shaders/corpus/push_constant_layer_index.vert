// Push-constant indexed sampler2DArray array and a uniform texel buffer, read with explicit LOD from a vertex shader.
#version 450

layout(set = 0, binding = 0) uniform sampler2DArray displacement[2];
layout(set = 0, binding = 1) uniform samplerBuffer boneTexels[3];

layout(push_constant) uniform Push {
    mat4 mvp;
    int layerSet;
    int boneSet;
    float layer;
} pc;

layout(location = 0) in vec3 position;
layout(location = 1) in vec2 uv;
layout(location = 2) in ivec4 bones;
layout(location = 0) out vec2 outUv;

void main() {
    vec3 p = position;
    p.y += textureLod(displacement[pc.layerSet], vec3(uv, pc.layer), 0.0).r;
    vec4 skin = vec4(0.0);
    for (int b = 0; b < 4; ++b) {
        skin += texelFetch(boneTexels[pc.boneSet], bones[b]);
    }
    p += skin.xyz * skin.w;
    outUv = uv;
    gl_Position = pc.mvp * vec4(p, 1.0);
}
