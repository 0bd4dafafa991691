#version 450
// wild.geom tinted like wild_index.tese (index 3 of 2 for the bad draw).
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
layout(set = 0, binding = 0) uniform Tint { vec4 value; } tints[2];
layout(push_constant) uniform Push { uint draw; uint draws; uint bad_draw; } push;
layout(location = 0) in vec4 color_in[];
layout(location = 0) out vec4 color_out;

void main() {
    uint index = push.draw == push.bad_draw ? 3u : 1u;
    for (int i = 0; i < 3; ++i) {
        gl_Position = gl_in[i].gl_Position;
        color_out = color_in[i] * vec4(1.0, 0.5, 1.0, 1.0) * tints[index].value;
        EmitVertex();
    }
    EndPrimitive();
}
