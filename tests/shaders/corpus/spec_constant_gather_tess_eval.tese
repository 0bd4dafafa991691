// Tessellation evaluation with specialization constants and textureGather/textureGatherOffset on a sampler array.
#version 450
layout(triangles, equal_spacing, cw) in;

layout(constant_id = 0) const int LAYER_COUNT = 4;
layout(constant_id = 1) const bool SMOOTH = true;
layout(constant_id = 2) const float HEIGHT_SCALE = 0.5;

layout(set = 0, binding = 0) uniform sampler2D heightLayers[4];
layout(set = 0, binding = 1, std140) uniform Blend { int primaryLayer; } blend;

layout(location = 0) in vec2 inUv[];

void main() {
    vec2 uv = gl_TessCoord.x * inUv[0] + gl_TessCoord.y * inUv[1] + gl_TessCoord.z * inUv[2];
    vec4 corners = textureGather(heightLayers[blend.primaryLayer % LAYER_COUNT], uv);
    if (SMOOTH) {
        corners += textureGatherOffset(heightLayers[LAYER_COUNT - 1], uv, ivec2(1, 1), 0);
    }
    float h = dot(corners, vec4(0.25)) * HEIGHT_SCALE;
    vec4 p = gl_TessCoord.x * gl_in[0].gl_Position + gl_TessCoord.y * gl_in[1].gl_Position + gl_TessCoord.z * gl_in[2].gl_Position;
    gl_Position = p + vec4(0.0, h, 0.0, 0.0);
}
