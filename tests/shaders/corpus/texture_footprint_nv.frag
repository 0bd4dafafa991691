// textureFootprintNV (GL_NV_shader_texture_footprint): footprint queries on an indexed sampler array.
#version 450
#extension GL_NV_shader_texture_footprint : require

layout(set = 0, binding = 0) uniform sampler2D streamed[4];
layout(set = 0, binding = 1) buffer Feedback { uvec4 tiles[]; } feedback;

layout(location = 0) in vec2 uv;
layout(location = 1) flat in int index;
layout(location = 0) out vec4 color;

void main() {
    gl_TextureFootprint2DNV fp;
    bool single = textureFootprintNV(streamed[index], uv, 4, false, fp);
    single = textureFootprintLodNV(streamed[index], uv, 1.0, 4, true, fp) && single;
    feedback.tiles[index] = uvec4(fp.anchor, fp.offset.x, fp.mask.x);
    color = texture(streamed[index], uv) * float(single);
}
