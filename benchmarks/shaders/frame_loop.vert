#version 450
// frame_loop_app.c: a triangle covering the target (shrunk a little per draw).

layout(push_constant) uniform Draw {
    uint index;
    uint count;
} draw;

layout(location = 0) out vec2 uv;

void main() {
    vec2 corner = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
    uv = corner;
    float shrink = 1.0 - float(draw.index % 8u) * 0.02;
    gl_Position = vec4((corner * 2.0 - 1.0) * shrink, 0.0, 1.0);
}
