// Tessellation control sampling a heightmap array indexed by gl_PrimitiveID (textureLod, textureSize) to pick levels.
#version 450
layout(vertices = 4) out;

layout(set = 0, binding = 0) uniform sampler2D heightmaps[8];
layout(set = 0, binding = 1, std140) uniform Terrain { int tileCount; float maxLevel; } terrain;

layout(location = 0) in vec2 inUv[];
layout(location = 0) out vec2 outUv[];
layout(location = 1) patch out int patchTile;

float roughness(int tile, vec2 uv) {
    ivec2 size = textureSize(heightmaps[tile], 0);
    float lodBias = log2(float(max(size.x, 1)));
    return textureLod(heightmaps[tile], uv, lodBias - 4.0).g;
}

void main() {
    int tile = gl_PrimitiveID % terrain.tileCount;
    outUv[gl_InvocationID] = inUv[gl_InvocationID];
    gl_out[gl_InvocationID].gl_Position = gl_in[gl_InvocationID].gl_Position;
    if (gl_InvocationID == 0) {
        patchTile = tile;
        for (int edge = 0; edge < 4; ++edge) {
            vec2 mid = 0.5 * (inUv[edge] + inUv[(edge + 1) % 4]);
            gl_TessLevelOuter[edge] = 1.0 + roughness(tile, mid) * terrain.maxLevel;
        }
        gl_TessLevelInner[0] = 1.0 + roughness(tile, 0.25 * (inUv[0] + inUv[1] + inUv[2] + inUv[3])) * terrain.maxLevel;
        gl_TessLevelInner[1] = gl_TessLevelInner[0];
    }
}
