// Transform feedback decorations on vertex outputs: xfb_buffer, xfb_offset, xfb_stride on variables and a block.
#version 450

layout(set = 0, binding = 0, std140) uniform Simulation { mat4 step; float dt; } sim;

layout(location = 0) in vec4 position;
layout(location = 1) in vec4 velocity;

layout(location = 0, xfb_buffer = 0, xfb_offset = 0, xfb_stride = 32) out vec4 outPosition;
layout(location = 1, xfb_buffer = 0, xfb_offset = 16) out vec4 outVelocity;
layout(location = 2, xfb_buffer = 1, xfb_stride = 8) out Extra {
    layout(xfb_offset = 0) float age;
    layout(xfb_offset = 4) float energy;
} extra;

layout(xfb_buffer = 2, xfb_stride = 16) out gl_PerVertex {
    layout(xfb_offset = 0) vec4 gl_Position;
};

void main() {
    outVelocity = sim.step * velocity;
    outPosition = position + outVelocity * sim.dt;
    extra.age = position.w + sim.dt;
    extra.energy = dot(outVelocity.xyz, outVelocity.xyz);
    gl_Position = outPosition;
}
