// Function-like and object-like macros, #ifdef/#ifndef/#undef, token pasting, several statements per line and a #line directive.
#version 450
layout(local_size_x = 64) in;

#define BUFFER_COUNT 4
#define DECLARE_BUFFER(name, binding_) layout(set = 0, binding = binding_, std430) buffer name##Block { float name[]; }
#ifndef WEIGHT
#define WEIGHT 0.25
#endif
#define LOAD(which, i) inputs[(which)].values[(i)]
#define ACCUMULATE(acc, v) acc += (v) * WEIGHT; acc = max(acc, 0.0)
#ifdef UNDEFINED_FEATURE
#error "UNDEFINED_FEATURE must not be defined"
#endif

layout(set = 0, binding = 0, std430) readonly buffer Inputs { float values[]; } inputs[BUFFER_COUNT];
DECLARE_BUFFER(outputs, 1);
layout(push_constant) uniform Push { int first; } pc;

#line 500
void main() {
    uint i = gl_GlobalInvocationID.x; float acc = 0.0; int b = pc.first;
    for (int k = 0; k < BUFFER_COUNT; ++k) { ACCUMULATE(acc, LOAD((b + k) % BUFFER_COUNT, i)); }
    outputs[i] = acc; outputs[0] = LOAD(b, 0u);
#undef WEIGHT
}
