// Sampled-image array (texture2D tex[8]) with a separate sampler, indexed by a push constant.
#version 450

layout(set = 0, binding = 0) uniform texture2D tex[8];
layout(set = 0, binding = 1) uniform sampler linearSampler;

layout(push_constant) uniform Push {
    int textureIndex;
    float lodBias;
} pc;

layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

void main() {
    vec4 sum = texture(sampler2D(tex[pc.textureIndex], linearSampler), uv);
    sum += texture(sampler2D(tex[pc.textureIndex], linearSampler), uv, pc.lodBias);
    sum += textureLod(sampler2D(tex[pc.textureIndex + 1], linearSampler), uv, 2.0);
    sum += textureGrad(sampler2D(tex[pc.textureIndex], linearSampler), uv, dFdx(uv), dFdy(uv));
    sum += textureOffset(sampler2D(tex[7 - pc.textureIndex], linearSampler), uv, ivec2(1, -1));
    sum += texture(sampler2D(tex[3], linearSampler), uv);
    color = sum / 6.0;
}
