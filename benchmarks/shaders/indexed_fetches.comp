#version 450
#extension GL_EXT_nonuniform_qualifier : require
// Issue 17's compute kernel: every invocation makes 64 fetches from a runtime array of
// storage buffers, each by an index the pass cannot prove (read from a uniform buffer).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform Indices { uvec4 at[16]; } indices;
layout(set = 0, binding = 1) readonly buffer Source { uint v[]; } sources[];
layout(set = 0, binding = 2) writeonly buffer Result { uint sum[]; } result;
void main() {
    uint gid = gl_GlobalInvocationID.x;
    uint sum = 0u;
    for (uint i = 0u; i < 64u; ++i) {
        uint which = indices.at[i >> 2u][i & 3u];
        sum += sources[which].v[(gid + i * 977u) & 4095u];
    }
    result.sum[gid] = sum;
}
