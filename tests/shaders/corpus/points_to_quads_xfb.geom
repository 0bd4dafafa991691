// Geometry shader capturing a built-in output block and user outputs via transform feedback (xfb_buffer/xfb_stride on blocks).
#version 450
layout(points) in;
layout(triangle_strip, max_vertices = 4) out;

layout(set = 0, binding = 0, std140) uniform Billboard { vec4 halfExtent; } billboards[4];
layout(location = 0) in vec4 inColor[];
layout(location = 1) flat in int inBillboard[];

layout(xfb_buffer = 0, xfb_stride = 16) out gl_PerVertex {
    layout(xfb_offset = 0) vec4 gl_Position;
};
layout(location = 0, xfb_buffer = 1, xfb_stride = 32) out Captured {
    layout(xfb_offset = 0) vec4 color;
    layout(xfb_offset = 16) vec2 uv;
} captured;

void main() {
    vec4 e = billboards[inBillboard[0]].halfExtent;
    for (int i = 0; i < 4; ++i) {
        vec2 corner = vec2(float(i & 1), float(i >> 1));
        captured.color = inColor[0];
        captured.uv = corner;
        gl_Position = gl_in[0].gl_Position + vec4((corner * 2.0 - 1.0) * e.xy, 0.0, 0.0);
        EmitVertex();
    }
    EndPrimitive();
}
