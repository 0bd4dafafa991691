#version 450
// wild_app's multiview fragment shader: the view index shows in the blue channel.
#extension GL_EXT_multiview : require
layout(location = 0) in vec4 color;
layout(location = 0) out vec4 result;

void main() {
    result = color * vec4(1.0, 0.5, 0.25, 1.0) + vec4(0.0, 0.0, 0.5 * float(gl_ViewIndex), 0.0);
}
