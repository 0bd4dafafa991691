// demote (GL_EXT_demote_to_helper_invocation, core in Vulkan 1.3) before derivative-using texture reads of an array.
// gpuav: target-env=vulkan1.3
#version 460
#extension GL_EXT_demote_to_helper_invocation : require

layout(set = 0, binding = 0) uniform sampler2D alphaMasks[4];
layout(set = 0, binding = 1) uniform sampler2D colors[4];

layout(location = 0) in vec2 uv;
layout(location = 1) flat in int layer;
layout(location = 0) out vec4 color;

void main() {
    float alpha = texture(alphaMasks[layer], uv).a;
    if (alpha < 0.5) {
        demote;
    }
    vec2 du = dFdx(uv);
    vec2 dv = dFdy(uv);
    vec4 c = textureGrad(colors[layer], uv, du, dv);
    if (helperInvocationEXT()) {
        c = vec4(0.0);
    }
    color = c * fwidth(alpha);
}
