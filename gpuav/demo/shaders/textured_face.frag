#version 450
// Draws a cube face with the texture the push constant selects, as in cube.frag.
layout(set = 0, binding = 0) uniform sampler2D tex[6];
layout(push_constant) uniform Face { int tex_ind; };

layout(location = 0) in vec2 texcoord;
layout(location = 0) out vec4 uFragColor;

void main() {
    vec4 light = vec4(0.9, 0.9, 0.9, 1.0);
    uFragColor = light * texture(tex[tex_ind], texcoord.xy);
}
