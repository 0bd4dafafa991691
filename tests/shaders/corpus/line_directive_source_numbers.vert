// #line directives with source-string numbers shifting reported lines around a push-constant indexed texture fetch.
#version 450
layout(set = 0, binding = 0) uniform sampler2D offsets[4];
layout(push_constant) uniform Push { int which; } pc;
layout(location = 0) in vec2 position;
#line 10 2
vec2 displaced(vec2 p) {
    return p + textureLod(offsets[pc.which], p, 0.0).xy;
}
#line 40 3
void main() { vec2 p = displaced(position); p = p * 2.0 - 1.0; gl_Position = vec4(p, 0.0, 1.0); }
