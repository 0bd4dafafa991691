// Vulkan memory model (#pragma use_vulkan_memory_model, GL_KHR_memory_scope_semantics): scoped atomicLoad/Store, imageAtomicLoad/Store, barriers.
// gpuav: target-env=vulkan1.3
#version 460
#extension GL_KHR_memory_scope_semantics : require
#pragma use_vulkan_memory_model
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) buffer Flags { uint ready; uint payload[]; } flags[2];
layout(set = 0, binding = 1, r32ui) uniform uimage2D locks[2];

layout(push_constant) uniform Push { int which; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    atomicStore(flags[pc.which].payload[i], i * 3u, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsRelease);
    uint ready = atomicLoad(flags[pc.which].ready, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquire);
    uint lock = imageAtomicLoad(locks[pc.which], ivec2(i, 0), gl_ScopeDevice, gl_StorageSemanticsImage, gl_SemanticsAcquire);
    imageAtomicStore(locks[pc.which], ivec2(i, 1), lock + ready, gl_ScopeDevice, gl_StorageSemanticsImage, gl_SemanticsRelease);
    atomicAdd(flags[pc.which].ready, 1u, gl_ScopeQueueFamily, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);
    memoryBarrier(gl_ScopeWorkgroup, gl_StorageSemanticsBuffer | gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
    controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
}
