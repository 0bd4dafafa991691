#version 450
layout(location = 0) in vec4 color;
layout(location = 0) out vec4 result;

void main() {
    result = color * vec4(1.0, 0.5, 0.25, 1.0);
}
