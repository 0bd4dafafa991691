// Tessellation evaluation (triangles, equal_spacing, cw) displacing by a sampler array indexed by a patch input.
#version 450
layout(triangles, equal_spacing, cw) in;

layout(set = 0, binding = 0) uniform sampler2D displacementMaps[8];
layout(set = 0, binding = 1, std140) uniform Camera { mat4 viewProjection; float displacementScale; } camera;

layout(location = 0) in vec2 inUv[];
layout(location = 1) patch in int patchTile;
layout(location = 0) out vec2 outUv;

void main() {
    vec3 b = gl_TessCoord;
    vec2 uv = b.x * inUv[0] + b.y * inUv[1] + b.z * inUv[2];
    vec4 p = b.x * gl_in[0].gl_Position + b.y * gl_in[1].gl_Position + b.z * gl_in[2].gl_Position;
    float h = textureLod(displacementMaps[patchTile], uv, 0.0).r;
    h += textureGrad(displacementMaps[patchTile], uv, vec2(0.001, 0.0), vec2(0.0, 0.001)).g;
    p.y += h * camera.displacementScale;
    outUv = uv;
    gl_Position = camera.viewProjection * p;
}
