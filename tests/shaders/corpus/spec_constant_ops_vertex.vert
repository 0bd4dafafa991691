// Specialization constants and spec-constant expressions selecting a branch and indexing a block array.
#version 450

layout(constant_id = 0) const int MORPH_TARGETS = 3;
layout(constant_id = 1) const bool FLIP_Y = false;
layout(constant_id = 2) const uint MASK = 0xFFu;
const int LAST_TARGET = MORPH_TARGETS - 1;
const uint HALF_MASK = MASK >> 1;

layout(set = 0, binding = 0, std430) readonly buffer Morph { vec4 offsets[]; } morphTargets[3];
layout(set = 0, binding = 1, std140) uniform Weights { vec4 weights; mat4 mvp; } w;

layout(location = 0) in vec3 position;
layout(location = 0) flat out uint maskedId;

void main() {
    vec3 p = position;
    for (int t = 0; t < MORPH_TARGETS && t < 3; ++t) {
        p += morphTargets[t].offsets[gl_VertexIndex].xyz * w.weights[t];
    }
    p += morphTargets[LAST_TARGET].offsets[0].xyz;
    if (FLIP_Y) {
        p.y = -p.y;
    }
    maskedId = uint(gl_VertexIndex) & HALF_MASK;
    gl_Position = w.mvp * vec4(p, 1.0);
}
