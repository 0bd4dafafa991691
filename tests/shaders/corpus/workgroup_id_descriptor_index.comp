// gl_WorkGroupID and gl_LocalInvocationIndex indexing sampled-image, storage-image and block arrays; shared arrays of structs.
#version 450
layout(local_size_x = 8, local_size_y = 8) in;

struct Sample { vec4 color; uint weight; };

layout(set = 0, binding = 0) uniform texture2D tiles[16];
layout(set = 0, binding = 1) uniform sampler tileSampler;
layout(set = 0, binding = 2, rgba8) uniform writeonly image2D tileOutputs[16];
layout(set = 0, binding = 3, std140) uniform TileInfo { vec4 scaleBias; } tileInfo[16];

shared Sample samples[64];

void main() {
    uint tile = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint local = gl_LocalInvocationIndex;
    vec2 uv = (vec2(gl_LocalInvocationID.xy) + 0.5) / 8.0;
    uv = uv * tileInfo[tile].scaleBias.xy + tileInfo[tile].scaleBias.zw;
    samples[local].color = textureLod(sampler2D(tiles[tile], tileSampler), uv, 0.0);
    samples[local].weight = local + 1u;
    barrier();
    Sample mirror = samples[63u - local];
    vec4 c = samples[local].color * float(samples[local].weight) + mirror.color * float(mirror.weight);
    imageStore(tileOutputs[tile], ivec2(gl_LocalInvocationID.xy), c / 65.0);
    imageStore(tileOutputs[local % 16u], ivec2(0), c);
}
