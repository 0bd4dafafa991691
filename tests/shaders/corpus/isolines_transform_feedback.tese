// Tessellation evaluation (isolines, equal_spacing) with transform feedback outputs and gl_TessLevelOuter reads.
#version 450
layout(isolines, equal_spacing) in;

layout(set = 0, binding = 0) uniform sampler2D windFields[2];
layout(push_constant) uniform Push { int field; float time; } pc;

layout(location = 0, xfb_buffer = 0, xfb_offset = 0, xfb_stride = 20) out vec4 strandPoint;
layout(location = 1, xfb_buffer = 0, xfb_offset = 16) out float strandParameter;

void main() {
    float u = gl_TessCoord.x;
    float line = gl_TessCoord.y * gl_TessLevelOuter[0];
    vec4 root = mix(gl_in[0].gl_Position, gl_in[1].gl_Position, line / max(gl_TessLevelOuter[0], 1.0));
    vec2 wind = textureLod(windFields[pc.field], root.xz * 0.01 + pc.time, 0.0).xy;
    strandPoint = root + vec4(wind * u * u, u, 0.0);
    strandParameter = u;
    gl_Position = strandPoint;
}
