// Storage image arrays (rgba8/rgba32f, readonly/writeonly) indexed by gl_GlobalInvocationID: imageLoad, imageStore, imageSize.
#version 450
layout(local_size_x = 8, local_size_y = 8, local_size_z = 1) in;

layout(set = 0, binding = 0, rgba8) uniform readonly image2D sources[4];
layout(set = 0, binding = 1, rgba32f) uniform writeonly image2D destinations[4];
layout(set = 0, binding = 2, r32f) uniform image2D scratch[2];

void main() {
    uint layer = gl_GlobalInvocationID.z;
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    ivec2 size = imageSize(sources[layer]);
    if (any(greaterThanEqual(p, size))) {
        return;
    }
    vec4 texel = imageLoad(sources[layer], p);
    float previous = imageLoad(scratch[layer & 1u], p).r;
    imageStore(scratch[layer & 1u], p, vec4(previous + texel.a));
    imageStore(destinations[layer], p, texel * 2.0);
    imageStore(destinations[3], ivec2(0), vec4(float(imageSize(destinations[layer]).x)));
}
