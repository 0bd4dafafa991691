// Subgroup basic, vote, arithmetic and ballot operations feeding a storage-block array index.
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_vote : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_KHR_shader_subgroup_ballot : require
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) buffer Data { float values[]; } data[4];
layout(set = 0, binding = 1, std430) buffer Stats { float sum; float minimum; uint activeLanes; uint ballotBits[]; } stats;

void main() {
    uint i = gl_GlobalInvocationID.x;
    uint bucket = i % 4u;
    float v = data[bucket].values[i];
    float total = subgroupAdd(v);
    float inclusive = subgroupInclusiveMul(v);
    float exclusive = subgroupExclusiveAdd(v);
    float lowest = subgroupMin(v);
    uint anded = subgroupAnd(floatBitsToUint(v));
    bool all = subgroupAll(v > 0.0);
    bool anyNegative = subgroupAny(v < 0.0);
    uvec4 ballot = subgroupBallot(v > 0.5);
    uint rank = subgroupBallotExclusiveBitCount(ballot);
    if (subgroupElect()) {
        stats.sum += total;
        stats.minimum = min(stats.minimum, lowest);
        stats.activeLanes = subgroupBallotBitCount(ballot) + uint(all) + uint(anyNegative);
        stats.ballotBits[gl_SubgroupID] = ballot.x ^ anded;
    }
    uint leader = subgroupBroadcastFirst(bucket);
    data[leader].values[i] = inclusive + exclusive + float(rank) + float(subgroupBallotFindLSB(ballot));
    subgroupBarrier();
    subgroupMemoryBarrierBuffer();
}
