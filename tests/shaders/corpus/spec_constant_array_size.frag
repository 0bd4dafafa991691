// Specialization constants sizing a sampler array and a loop bound, plus spec-constant arithmetic.
// gpuav: spirv-val-fails=gV
// (glslang 12 -gV describes a spec-constant-sized array with a DebugTypeArray whose count is the spec constant; spirv-val 2023.1 rejects that.)
#version 450

layout(constant_id = 3) const int N = 4;
layout(constant_id = 4) const bool USE_DETAIL = true;
layout(constant_id = 5) const float DETAIL_SCALE = 8.0;
const int LAST = N - 1;

layout(set = 0, binding = 0) uniform sampler2D cascade[N];
layout(set = 0, binding = 1) uniform sampler2D detail;

layout(location = 0) in vec2 uv;
layout(location = 1) in float viewDepth;
layout(location = 0) out vec4 color;

void main() {
    int level = clamp(int(viewDepth), 0, LAST);
    vec4 c = texture(cascade[level], uv);
    for (int i = 0; i < N; ++i) {
        c += textureLod(cascade[i], uv, float(i)) / float(N);
    }
    c += texture(cascade[LAST], uv);
    if (USE_DETAIL) {
        c *= texture(detail, uv * DETAIL_SCALE);
    }
    color = c;
}
