// Subgroup vote/ballot/arithmetic in tessellation control, and push-constant selection of a uniform texel buffer.
#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_vote : require
layout(vertices = 2) out;

layout(set = 0, binding = 0) uniform samplerBuffer levels[4];
layout(push_constant) uniform Push { int table; } pc;

layout(location = 0) out vec4 outColor[];

void main() {
    float level = texelFetch(levels[pc.table], gl_PrimitiveID).r;
    float maxLevel = subgroupMax(level);
    bool agreed = subgroupAllEqual(level);
    outColor[gl_InvocationID] = vec4(level, maxLevel, float(agreed), 1.0);
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    gl_TessLevelOuter[0] = 1.0;
    gl_TessLevelOuter[1] = agreed ? level : maxLevel;
}
