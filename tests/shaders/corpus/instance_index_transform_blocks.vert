// Array of uniform blocks indexed by gl_InstanceIndex; instanced transforms with matrices and row_major layout.
#version 450

layout(set = 0, binding = 0, std140) uniform Instance {
    mat4 model;
    layout(row_major) mat3x4 normalMatrix;
    vec4 tint;
} instances[16];

layout(set = 0, binding = 1, std140) uniform Frame { mat4 viewProjection; int instanceBase; } frame;

layout(location = 0) in vec3 position;
layout(location = 1) in vec3 normal;
layout(location = 0) out vec3 worldNormal;
layout(location = 1) out vec4 tint;

void main() {
    int i = gl_InstanceIndex - frame.instanceBase;
    vec4 world = instances[i].model * vec4(position, 1.0);
    worldNormal = (instances[i].normalMatrix * normal).xyz;
    tint = instances[gl_InstanceIndex % 16].tint;
    gl_Position = frame.viewProjection * world;
}
