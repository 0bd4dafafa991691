"""One small shader per stage with a dynamically indexed descriptor array, for golden messages."""

from __future__ import annotations

VERTEX = """#version 450
layout(set = 0, binding = 0) uniform sampler2D heights[4];
layout(location = 0) in vec2 position;
void main() {
    float height = textureLod(heights[gl_InstanceIndex], position, 0.0).r;
    gl_Position = vec4(position, height, 1.0);
}
"""

TESS_CONTROL = """#version 450
layout(vertices = 3) out;
layout(set = 0, binding = 0) uniform sampler2D lod_maps[2];
void main() {
    float level = textureLod(lod_maps[gl_PrimitiveID], vec2(0.5), 0.0).r;
    gl_TessLevelOuter[gl_InvocationID] = level;
    gl_TessLevelInner[0] = level;
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
}
"""

TESS_EVALUATION = """#version 450
layout(triangles) in;
layout(set = 1, binding = 4) buffer Offsets { vec4 offset; } offsets[3];
void main() {
    vec4 at = gl_in[0].gl_Position * gl_TessCoord.x + gl_in[1].gl_Position * gl_TessCoord.y;
    gl_Position = at + offsets[gl_PrimitiveID].offset;
}
"""

GEOMETRY = """#version 450
layout(points) in;
layout(triangle_strip, max_vertices = 3) out;
layout(set = 0, binding = 2, r32f) uniform readonly image2D sizes[8];
void main() {
    float size = imageLoad(sizes[gl_PrimitiveID], ivec2(0)).r;
    for (int corner = 0; corner < 3; ++corner) {
        gl_Position = gl_in[0].gl_Position + vec4(size * corner, 0.0, 0.0, 0.0);
        EmitVertex();
    }
}
"""

FRAGMENT = """#version 450
layout(set = 0, binding = 1) uniform sampler2D tex[6];
layout(location = 0) in vec2 texcoord;
layout(location = 0) out vec4 uFragColor;
layout(push_constant) uniform Push { int tex_ind; vec4 light; } push;
void main() {
    uFragColor = push.light * texture(tex[push.tex_ind], texcoord.xy);
}
"""

COMPUTE = """#version 450
layout(local_size_x = 4, local_size_y = 2) in;
layout(set = 0, binding = 0) buffer Particles { vec4 position[]; } particles[3];
layout(set = 0, binding = 1) uniform usamplerBuffer lookup[2];
void main() {
    uint which = texelFetch(lookup[gl_WorkGroupID.x], int(gl_LocalInvocationIndex)).r;
    particles[which].position[gl_GlobalInvocationID.x] = vec4(gl_GlobalInvocationID, 1.0);
}
"""
