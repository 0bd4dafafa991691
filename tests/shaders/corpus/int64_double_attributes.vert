// 64-bit integers (GL_ARB_gpu_shader_int64) and double-precision vertex attributes used in vertex math.
#version 450
#extension GL_ARB_gpu_shader_int64 : require

layout(location = 0) in dvec3 precisePosition;
layout(location = 2) in uint idLow;
layout(location = 3) in uint idHigh;

layout(set = 0, binding = 0, std140) uniform Origin { dvec4 origin; mat4 viewProjection; } world;
layout(set = 0, binding = 1, std430) readonly buffer Ids { uint64_t pickIds[]; } ids;

layout(location = 0) flat out uvec2 pickId;

void main() {
    uint64_t id = (uint64_t(idHigh) << 32) | uint64_t(idLow);
    int64_t delta = int64_t(id) - int64_t(ids.pickIds[gl_VertexIndex]);
    uint64_t packed = packUint2x32(uvec2(idLow, idHigh)) ^ uint64_t(delta);
    pickId = unpackUint2x32(packed + 1ul);
    dvec3 local = precisePosition - world.origin.xyz;
    gl_Position = world.viewProjection * vec4(vec3(local), 1.0);
}
