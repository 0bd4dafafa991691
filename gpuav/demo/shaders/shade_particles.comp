#version 450
// Shades particles: every particle samples the texture of its material.
layout(local_size_x = 8) in;

layout(set = 0, binding = 0) uniform sampler2D materials[6];
layout(set = 0, binding = 1) readonly buffer Particles { int material_of[]; };
layout(set = 0, binding = 2) writeonly buffer Colors { vec4 color_of[]; };

void main() {
    uint particle = gl_GlobalInvocationID.x;
    int material = material_of[particle];
    color_of[particle] = textureLod(materials[material], vec2(0.5), 0.0);
}
