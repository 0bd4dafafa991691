// Tessellation control: per-patch outputs (patch out), gl_TessLevelOuter/Inner, gl_InvocationID and barrier().
#version 450
layout(vertices = 3) out;

layout(set = 0, binding = 0, std140) uniform Tessellation { float outer; float inner; vec4 cameraPosition; } tess;

layout(location = 0) in vec3 inNormal[];
layout(location = 0) out vec3 outNormal[];
layout(location = 1) patch out vec4 patchCenter;
layout(location = 2) patch out float patchLod;

void main() {
    outNormal[gl_InvocationID] = inNormal[gl_InvocationID];
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    barrier();
    if (gl_InvocationID == 0) {
        vec4 center = (gl_out[0].gl_Position + gl_out[1].gl_Position + gl_out[2].gl_Position) / 3.0;
        float distanceToCamera = length(center.xyz - tess.cameraPosition.xyz);
        patchCenter = center;
        patchLod = clamp(tess.outer / max(distanceToCamera, 1.0), 1.0, 64.0);
        gl_TessLevelOuter[0] = patchLod;
        gl_TessLevelOuter[1] = patchLod;
        gl_TessLevelOuter[2] = patchLod;
        gl_TessLevelInner[0] = tess.inner;
    }
}
