#version 450
// Draw k of n covers the k-th vertical stripe of the target with two triangles.
layout(push_constant) uniform Push { uint draw; uint draws; uint bad_draw; } push;
layout(location = 0) out vec4 color;

void main() {
    vec2 corners[6] = vec2[](vec2(0, 0), vec2(1, 0), vec2(0, 1), vec2(1, 0), vec2(1, 1), vec2(0, 1));
    vec2 corner = corners[gl_VertexIndex % 6];
    float left = float(push.draw) / float(push.draws);
    float right = float(push.draw + 1u) / float(push.draws);
    vec2 position = vec2(mix(left, right, corner.x), corner.y) * 2.0 - 1.0;
    gl_Position = vec4(position, 0.0, 1.0);
    color = vec4(float(push.draw + 1u) / float(push.draws + 1u), corner, 1.0);
}
