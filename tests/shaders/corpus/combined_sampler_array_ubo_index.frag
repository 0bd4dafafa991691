// Combined image sampler array (sampler2D tex[6]) indexed by a uniform-buffer value; lod, grad and offset variants.
#version 450

layout(set = 0, binding = 0) uniform sampler2D tex[6];
layout(set = 0, binding = 1, std140) uniform Selection {
    int index;
    int second;
    vec2 scale;
} sel;

layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;

void main() {
    vec2 p = uv * sel.scale;
    color = texture(tex[sel.index], p);
    color += texture(tex[sel.index], p, 0.5);
    color += textureLod(tex[sel.second], p, 1.0);
    color += textureGrad(tex[sel.index], p, vec2(0.01, 0.0), vec2(0.0, 0.01));
    color += textureOffset(tex[sel.index], p, ivec2(2, 0));
    color += textureLodOffset(tex[sel.second], p, 0.0, ivec2(-1, 1));
    color += textureGradOffset(tex[sel.second], p, dFdx(p), dFdy(p), ivec2(0, 3));
    color += texture(tex[5], p);
}
