// Loop counters indexing sampler and uniform-texel-buffer arrays from compute (textureLod, texelFetch), including a nested loop.
#version 450
layout(local_size_x = 16, local_size_y = 16) in;

layout(set = 0, binding = 0) uniform sampler2D mips[5];
layout(set = 0, binding = 1) uniform samplerBuffer weights[3];
layout(set = 0, binding = 2, rgba8) uniform writeonly image2D result;
layout(set = 0, binding = 3, std140) uniform Params { int mipCount; int weightSets; } params;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    vec2 uv = (vec2(p) + 0.5) / vec2(imageSize(result));
    vec4 sum = vec4(0.0);
    for (int mip = 0; mip < params.mipCount; ++mip) {
        float w = 0.0;
        for (int set = 0; set < params.weightSets; set++) {
            w += texelFetch(weights[set], mip).r;
        }
        sum += textureLod(mips[mip], uv, float(mip)) * w;
    }
    int k = 0;
    while (k < 5) {
        sum += textureLod(mips[k], uv, 0.0) * 0.01;
        k += 2;
    }
    do {
        sum *= 0.5;
        --k;
    } while (k > params.mipCount);
    imageStore(result, p, sum);
}
