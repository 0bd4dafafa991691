// Geometry shader writing storage-image and storage-buffer arrays (imageStore, imageAtomicAdd, atomicAdd) indexed by gl_PrimitiveIDIn.
#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;

layout(set = 0, binding = 0, r32ui) uniform uimage2D coverage[4];
layout(set = 0, binding = 1, rgba16f) uniform writeonly image2D primitiveNormals[4];
layout(set = 0, binding = 2, std430) buffer Counters { uint emitted; uint perLayer[]; } counters;
layout(push_constant) uniform Push { int target; } pc;

void main() {
    vec3 a = gl_in[1].gl_Position.xyz - gl_in[0].gl_Position.xyz;
    vec3 b = gl_in[2].gl_Position.xyz - gl_in[0].gl_Position.xyz;
    vec3 n = normalize(cross(a, b));
    ivec2 cell = ivec2(gl_PrimitiveIDIn % 256, gl_PrimitiveIDIn / 256);
    imageStore(primitiveNormals[pc.target], cell, vec4(n, 1.0));
    imageAtomicAdd(coverage[pc.target], cell, 1u);
    atomicAdd(counters.perLayer[pc.target], 3u);
    for (int i = 0; i < 3; ++i) {
        gl_Position = gl_in[i].gl_Position;
        gl_PrimitiveID = gl_PrimitiveIDIn;
        EmitVertex();
    }
    EndPrimitive();
    atomicAdd(counters.emitted, 1u);
}
