// Subgroup shuffle, shuffle_relative, clustered and quad operations with a sampler array indexed by their results.
#version 450
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_KHR_shader_subgroup_shuffle_relative : require
#extension GL_KHR_shader_subgroup_clustered : require
#extension GL_KHR_shader_subgroup_quad : require
layout(local_size_x = 32, local_size_y = 2) in;

layout(set = 0, binding = 0) uniform sampler2D lookup[4];
layout(set = 0, binding = 1, std430) buffer Out { vec4 results[]; } outputs;

void main() {
    uint lane = gl_SubgroupInvocationID;
    float x = float(gl_GlobalInvocationID.x);
    float swapped = subgroupShuffle(x, lane ^ 1u);
    float xored = subgroupShuffleXor(x, 2u);
    float up = subgroupShuffleUp(x, 1u);
    float down = subgroupShuffleDown(x, 1u);
    float clusterSum = subgroupClusteredAdd(x, 4u);
    float clusterMax = subgroupClusteredMax(x, 8u);
    float quadFirst = subgroupQuadBroadcast(x, 0u);
    float quadX = subgroupQuadSwapHorizontal(x);
    float quadY = subgroupQuadSwapVertical(x);
    float quadD = subgroupQuadSwapDiagonal(x);
    int index = int(clusterMax) & 3;
    vec4 t = textureLod(lookup[index], vec2(quadFirst, quadX) / 64.0, 0.0);
    outputs.results[gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * 32u] =
        t + vec4(swapped + xored, up + down, clusterSum, quadY + quadD);
}
