// Tessellation control with struct and block patch outputs, per-vertex output blocks and a uniform-block array.
#version 450
layout(vertices = 4) out;

struct Bezier { vec4 controls[4]; float sharpness; };

layout(set = 0, binding = 0, std140) uniform Curves { Bezier curves[4]; } curveSets[3];
layout(push_constant) uniform Push { int curveSet; int curve; } pc;

layout(location = 0) in VertexIn { vec3 normal; vec2 uv; } vin[];
layout(location = 0) out VertexOut { vec3 normal; vec2 uv; float weight; } vout[];
layout(location = 4) patch out PatchData { vec4 corner; float sharpness; } patchData;

void main() {
    Bezier b = curveSets[pc.curveSet].curves[pc.curve];
    vout[gl_InvocationID].normal = vin[gl_InvocationID].normal;
    vout[gl_InvocationID].uv = vin[gl_InvocationID].uv;
    vout[gl_InvocationID].weight = b.controls[gl_InvocationID].w;
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position + b.controls[gl_InvocationID];
    patchData.corner = b.controls[0];
    patchData.sharpness = b.sharpness;
    gl_TessLevelOuter = float[4](4.0, 4.0, 4.0, 4.0);
    gl_TessLevelInner = float[2](b.sharpness, b.sharpness);
}
