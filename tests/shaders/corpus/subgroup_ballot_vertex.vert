// Subgroup operations in a vertex shader (basic, ballot, vote) picking a descriptor index uniformly.
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_vote : require

layout(set = 0, binding = 0) uniform sampler2D windMaps[4];
layout(location = 0) in vec3 position;
layout(location = 1) in int windMap;
layout(location = 0) out vec4 debugColor;

void main() {
    int first = subgroupBroadcastFirst(windMap);
    bool uniformMap = subgroupAllEqual(windMap);
    uvec4 ballot = subgroupBallot(windMap == first);
    uint lanes = subgroupBallotBitCount(ballot);
    vec4 wind = textureLod(windMaps[uniformMap ? first : windMap], position.xz, 0.0);
    debugColor = vec4(float(lanes) / float(gl_SubgroupSize), float(gl_SubgroupInvocationID), float(subgroupElect()), 1.0);
    gl_Position = vec4(position + wind.xyz, 1.0);
}
