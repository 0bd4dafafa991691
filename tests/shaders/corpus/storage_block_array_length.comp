// Arrays of storage blocks with runtime arrays (buffer B { vec4 v[]; } bufs[4]), .length(), push-constant and constant indices.
#version 450
layout(local_size_x = 64) in;

layout(set = 0, binding = 2, std430) buffer B { vec4 v[]; } bufs[4];
layout(set = 0, binding = 3, std430) readonly buffer Header { uint count; float scale; vec4 data[]; } headers[2];

layout(push_constant) uniform Push { int src; int dst; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= uint(bufs[pc.src].v.length()) || i >= headers[pc.dst & 1].count) {
        return;
    }
    vec4 value = bufs[pc.src].v[i] * headers[pc.dst & 1].scale + headers[0].data[i];
    bufs[pc.dst].v[i] = value;
    bufs[3].v[0] = vec4(float(bufs[pc.dst].v.length()));
}
