// Geometry shader with multiple vertex streams (EmitStreamVertex/EndStreamPrimitive) captured by transform feedback.
#version 450
layout(points) in;
layout(points, max_vertices = 8) out;

layout(set = 0, binding = 0, std430) readonly buffer Particles { vec4 velocity[]; } particleSets[2];
layout(push_constant) uniform Push { int particleSet; float dt; } pc;

layout(location = 0) in vec4 inState[];

layout(stream = 0, location = 0, xfb_buffer = 0, xfb_offset = 0, xfb_stride = 16) out vec4 aliveState;
layout(stream = 1, location = 1, xfb_buffer = 1, xfb_offset = 0, xfb_stride = 16) out vec4 deadState;
layout(stream = 2, location = 2, xfb_buffer = 2, xfb_offset = 0, xfb_stride = 4) out float spawnCount;

void main() {
    vec4 state = inState[0];
    vec4 v = particleSets[pc.particleSet].velocity[gl_PrimitiveIDIn];
    state.xyz += v.xyz * pc.dt;
    state.w -= pc.dt;
    if (state.w > 0.0) {
        aliveState = state;
        EmitStreamVertex(0);
        EndStreamPrimitive(0);
    } else {
        deadState = state;
        EmitStreamVertex(1);
        EndStreamPrimitive(1);
        for (int i = 0; i < 2; ++i) {
            spawnCount = float(i);
            EmitStreamVertex(2);
        }
        EndStreamPrimitive(2);
    }
}
