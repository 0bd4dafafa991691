// Vendor image instructions: textureGatherLodAMD/bias gather (GL_AMD_texture_gather_bias_lod) and fragmentFetchAMD (GL_AMD_shader_fragment_mask).
#version 450
#extension GL_AMD_texture_gather_bias_lod : require
#extension GL_AMD_shader_fragment_mask : require

layout(set = 0, binding = 0) uniform sampler2D maps[4];
layout(set = 0, binding = 1) uniform sampler2DMS msColor[2];
layout(input_attachment_index = 0, set = 0, binding = 2) uniform subpassInputMS msInput;

layout(location = 0) in vec2 uv;
layout(location = 1) flat in int index;
layout(location = 0) out vec4 color;

void main() {
    vec4 g = textureGatherLodAMD(maps[index], uv, 2.0);
    g += textureGatherLodOffsetAMD(maps[index], uv, 1.0, ivec2(1, 0), 1);
    g += textureGather(maps[index], uv, 0, 0.5);
    ivec2 p = ivec2(gl_FragCoord.xy);
    uint mask = fragmentMaskFetchAMD(msColor[index & 1], p);
    vec4 f = fragmentFetchAMD(msColor[index & 1], p, mask & 0xFu);
    f += fragmentFetchAMD(msInput, (mask >> 4) & 0xFu);
    color = g + f;
}
