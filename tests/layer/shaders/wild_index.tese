#version 450
// wild.tese tinted by element push.bad_draw == push.draw ? 2 : 0 of a two-buffer array (1 is
// the app's out-of-bounds bug in tessellation evaluation; the tints are all 1).
layout(triangles, equal_spacing, ccw) in;
layout(set = 0, binding = 0) uniform Tint { vec4 value; } tints[2];
layout(push_constant) uniform Push { uint draw; uint draws; uint bad_draw; } push;
layout(location = 0) in vec4 color_in[];
layout(location = 0) out vec4 color_out;

void main() {
    vec3 t = gl_TessCoord;
    uint index = push.draw == push.bad_draw ? 2u : 0u;
    gl_Position = t.x * gl_in[0].gl_Position + t.y * gl_in[1].gl_Position + t.z * gl_in[2].gl_Position;
    color_out = (t.x * color_in[0] + t.y * color_in[1] + t.z * color_in[2]) * tints[index].value;
}
