// GL_ARB_sparse_texture_clamp: textureClampARB, textureGradClampARB, textureOffsetClampARB and sparse clamp forms (MinLod).
#version 450
#extension GL_ARB_sparse_texture_clamp : require

layout(set = 0, binding = 0) uniform sampler2D streamed[4];
layout(set = 0, binding = 1) uniform sampler2DShadow streamedShadow[2];

layout(push_constant) uniform Push { int index; float minLod; } pc;
layout(location = 0) in vec3 coord;
layout(location = 0) out vec4 color;

void main() {
    vec4 c = textureClampARB(streamed[pc.index], coord.xy, pc.minLod);
    c += textureClampARB(streamed[pc.index], coord.xy, pc.minLod, 0.5);
    c += textureOffsetClampARB(streamed[pc.index], coord.xy, ivec2(1, 1), pc.minLod);
    c += textureGradClampARB(streamed[pc.index], coord.xy, dFdx(coord.xy), dFdy(coord.xy), pc.minLod);
    vec4 texel;
    int code = sparseTextureClampARB(streamed[pc.index], coord.xy, pc.minLod, texel);
    if (sparseTexelsResidentARB(code)) { c += texel; }
    float s = textureClampARB(streamedShadow[pc.index & 1], coord, pc.minLod);
    color = c * s;
}
