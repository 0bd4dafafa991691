// Tessellation evaluation reading storage-block arrays indexed by gl_PrimitiveID and a push constant, with patch inputs.
#version 450
layout(triangles, fractional_even_spacing, ccw) in;

layout(set = 0, binding = 0, std430) readonly buffer Offsets { vec4 offsets[]; } offsetSets[4];
layout(set = 0, binding = 1, std430) writeonly buffer Debug { vec4 positions[]; } debugOut;
layout(push_constant) uniform Push { int offsetSet; } pc;

layout(location = 0) in float inWeight[];
layout(location = 1) patch in vec4 patchCenter;
layout(location = 2) patch in float patchLod;

void main() {
    vec3 b = gl_TessCoord;
    vec4 p = b.x * gl_in[0].gl_Position + b.y * gl_in[1].gl_Position + b.z * gl_in[2].gl_Position;
    float w = b.x * inWeight[0] + b.y * inWeight[1] + b.z * inWeight[2];
    p += offsetSets[pc.offsetSet].offsets[gl_PrimitiveID] * w;
    p = mix(p, patchCenter, 1.0 / patchLod);
    debugOut.positions[gl_PrimitiveID] = p;
    gl_Position = p;
}
