// Vertex shader indexing a sampler array by an integer vertex attribute (textureLod, textureSize) and passing it on flat.
#version 450

layout(set = 0, binding = 0) uniform sampler2D heightmaps[4];
layout(set = 0, binding = 1, std140) uniform Camera { mat4 viewProjection; vec4 terrainScale; } camera;

layout(location = 0) in vec2 gridPosition;
layout(location = 1) in int tileIndex;
layout(location = 2) in uvec2 tileCoord;

layout(location = 0) out vec2 uv;
layout(location = 1) flat out int outTile;

void main() {
    ivec2 size = textureSize(heightmaps[tileIndex], 0);
    uv = (gridPosition + vec2(tileCoord)) / vec2(size);
    float height = textureLod(heightmaps[tileIndex], uv, 0.0).r;
    height += texelFetch(heightmaps[tileIndex], ivec2(tileCoord), 0).g;
    height += textureLod(heightmaps[0], uv, 1.0).b;
    outTile = tileIndex;
    gl_Position = camera.viewProjection * vec4(gridPosition.x, height * camera.terrainScale.y, gridPosition.y, 1.0);
}
