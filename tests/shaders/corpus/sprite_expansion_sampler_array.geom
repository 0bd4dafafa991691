// Point-to-quad sprite expansion sampling a sampler array indexed by a flat per-vertex input array (textureLod, textureSize).
#version 450
layout(points) in;
layout(triangle_strip, max_vertices = 4) out;

layout(set = 0, binding = 0) uniform sampler2D sprites[8];
layout(set = 0, binding = 1, std140) uniform Camera { mat4 projection; vec2 viewport; } camera;

layout(location = 0) flat in int inSprite[];
layout(location = 1) in float inSize[];
layout(location = 0) out vec2 uv;
layout(location = 1) flat out vec4 spriteTint;

const vec2 kCorners[4] = vec2[](vec2(-1.0, -1.0), vec2(1.0, -1.0), vec2(-1.0, 1.0), vec2(1.0, 1.0));

void main() {
    int sprite = inSprite[0];
    ivec2 size = textureSize(sprites[sprite], 0);
    vec2 aspect = vec2(size) / float(max(size.x, size.y));
    vec4 tint = textureLod(sprites[sprite], vec2(0.5), 8.0);
    for (int i = 0; i < 4; ++i) {
        uv = kCorners[i] * 0.5 + 0.5;
        spriteTint = tint;
        vec2 offset = kCorners[i] * aspect * inSize[0] / camera.viewport;
        gl_Position = camera.projection * gl_in[0].gl_Position + vec4(offset, 0.0, 0.0);
        EmitVertex();
    }
    EndPrimitive();
}
