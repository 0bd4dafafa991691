// Sparse storage-image loads and sparse texel fetches in compute (GL_ARB_sparse_texture2 sparseImageLoadARB, sparseTexelFetchARB).
#version 450
#extension GL_ARB_sparse_texture2 : require
layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0, rgba8) uniform readonly image2D sparseImages[4];
layout(set = 0, binding = 1, rgba8) uniform readonly image2DMS sparseMs;
layout(set = 0, binding = 2) uniform sampler3D sparseVolumes[2];
layout(set = 0, binding = 3, std430) buffer Residency { uint missing; vec4 values[]; } residency;

layout(push_constant) uniform Push { int image; } pc;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    vec4 texel;
    int code = sparseImageLoadARB(sparseImages[pc.image], p, texel);
    if (!sparseTexelsResidentARB(code)) {
        atomicAdd(residency.missing, 1u);
        texel = vec4(0.0);
    }
    vec4 msTexel;
    code = sparseImageLoadARB(sparseMs, p, 0, msTexel);
    if (sparseTexelsResidentARB(code)) {
        texel += msTexel;
    }
    vec4 voxel;
    code = sparseTexelFetchARB(sparseVolumes[pc.image & 1], ivec3(p, 0), 0, voxel);
    code = sparseTexelFetchOffsetARB(sparseVolumes[pc.image & 1], ivec3(p, 0), 0, ivec3(1), voxel);
    if (sparseTexelsResidentARB(code)) {
        texel += voxel;
    }
    residency.values[gl_LocalInvocationIndex] = texel;
}
