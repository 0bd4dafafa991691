#version 450
// wild_app's tessellation evaluation shader: the patch's triangle, colours interpolated.
layout(triangles, equal_spacing, ccw) in;
layout(location = 0) in vec4 color_in[];
layout(location = 0) out vec4 color_out;

void main() {
    vec3 t = gl_TessCoord;
    gl_Position = t.x * gl_in[0].gl_Position + t.y * gl_in[1].gl_Position + t.z * gl_in[2].gl_Position;
    color_out = t.x * color_in[0] + t.y * color_in[1] + t.z * color_in[2];
}
