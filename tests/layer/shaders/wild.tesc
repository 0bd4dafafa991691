#version 450
// wild_app's pass-through tessellation control shader (one triangle per patch of 3).
layout(vertices = 3) out;
layout(location = 0) in vec4 color_in[];
layout(location = 0) out vec4 color_out[];

void main() {
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    color_out[gl_InvocationID] = color_in[gl_InvocationID];
    if (gl_InvocationID == 0) {
        gl_TessLevelOuter[0] = 1.0;
        gl_TessLevelOuter[1] = 1.0;
        gl_TessLevelOuter[2] = 1.0;
        gl_TessLevelInner[0] = 1.0;
    }
}
