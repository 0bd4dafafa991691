// Vertex pulling from an array of storage blocks with runtime arrays, indexed by gl_VertexIndex and a push constant.
#version 450

struct Vertex {
    vec4 position;
    vec4 normalAndU;
    vec4 colorAndV;
};

layout(set = 0, binding = 0, std430) readonly buffer VertexStream { Vertex vertices[]; } streams[4];
layout(set = 0, binding = 1, std430) readonly buffer IndexStream { uint indices[]; } indexBuffers[4];

layout(push_constant) uniform Push { mat4 viewProjection; int stream; uint firstIndex; } pc;

layout(location = 0) out vec3 normal;
layout(location = 1) out vec2 uv;
layout(location = 2) out vec4 color;

void main() {
    uint index = indexBuffers[pc.stream].indices[pc.firstIndex + uint(gl_VertexIndex)];
    uint count = uint(streams[pc.stream].vertices.length());
    Vertex v = streams[pc.stream].vertices[index % count];
    normal = v.normalAndU.xyz;
    uv = vec2(v.normalAndU.w, v.colorAndV.w);
    color = vec4(v.colorAndV.xyz, 1.0);
    gl_Position = pc.viewProjection * v.position;
}
