// Transform feedback of struct-typed outputs holding dvec3 (two locations) and dmat3x4 (eight locations) members.
#version 450

struct Frame {
    dvec3 origin;
    dmat3x4 basis;
    float weight;
};

layout(set = 0, binding = 0, std430) readonly buffer Frames { dvec4 origins[]; } frameSets[2];
layout(push_constant) uniform Push { int frameSet; } pc;

layout(location = 0) in vec4 position;

layout(location = 0, xfb_buffer = 0, xfb_stride = 136) out Captured {
    layout(xfb_offset = 0) Frame frame;
    layout(xfb_offset = 128) float id;
} captured;
layout(location = 14, xfb_buffer = 1, xfb_offset = 0) out dvec2 preciseXy;

void main() {
    dvec4 o = frameSets[pc.frameSet].origins[gl_VertexIndex];
    captured.frame.origin = o.xyz;
    captured.frame.basis = dmat3x4(1.0lf);
    captured.frame.weight = float(o.w);
    captured.id = float(gl_VertexIndex);
    preciseXy = o.xy * 2.0lf;
    gl_Position = position + vec4(o);
}
