// Tessellation evaluation in point_mode with uniform and storage texel-buffer arrays (texelFetch, imageStore) and gl_PointSize.
#version 450
layout(quads, equal_spacing, point_mode) in;

layout(set = 0, binding = 0) uniform samplerBuffer sizes[2];
layout(set = 0, binding = 1, rgba32f) uniform writeonly imageBuffer scatter[2];
layout(push_constant) uniform Push { int table; int resolution; } pc;

void main() {
    ivec2 cell = ivec2(gl_TessCoord.xy * float(pc.resolution));
    int index = cell.y * pc.resolution + cell.x;
    vec4 p = mix(mix(gl_in[0].gl_Position, gl_in[1].gl_Position, gl_TessCoord.x),
                 mix(gl_in[3].gl_Position, gl_in[2].gl_Position, gl_TessCoord.x), gl_TessCoord.y);
    imageStore(scatter[pc.table], index, p);
    gl_PointSize = texelFetch(sizes[pc.table], index).r;
    gl_Position = p;
}
