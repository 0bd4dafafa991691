// Tessellation control reading storage-block arrays in a loop over gl_PatchVerticesIn and writing per-patch counters.
#version 450
layout(vertices = 3) out;

layout(set = 0, binding = 0, std430) readonly buffer Weights { float weights[]; } weightSets[4];
layout(set = 0, binding = 1, std430) buffer Stats { uint patches; uint vertices; } stats;
layout(push_constant) uniform Push { int weightSet; } pc;

layout(location = 0) in float inWeight[];
layout(location = 0) out float outWeight[];

void main() {
    float level = 0.0;
    for (int v = 0; v < gl_PatchVerticesIn; ++v) {
        level += weightSets[pc.weightSet].weights[gl_PrimitiveID * gl_PatchVerticesIn + v] * inWeight[v];
    }
    outWeight[gl_InvocationID] = level;
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    if (gl_InvocationID == 0) {
        atomicAdd(stats.patches, 1u);
        atomicAdd(stats.vertices, uint(gl_PatchVerticesIn));
        gl_TessLevelOuter[0] = level;
        gl_TessLevelOuter[1] = level;
        gl_TessLevelOuter[2] = level;
        gl_TessLevelInner[0] = level;
    }
}
