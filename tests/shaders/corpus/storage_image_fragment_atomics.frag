// Storage images written from a fragment shader: image2D arrays with formats, imageStore and imageAtomicAdd.
#version 450

layout(set = 0, binding = 0, rgba16f) uniform writeonly image2D accumulation[2];
layout(set = 0, binding = 1, r32ui) uniform coherent uimage2D overdraw[2];
layout(set = 0, binding = 2, rgba8) uniform readonly image2D decals[4];

layout(location = 0) flat in int layerIndex;
layout(location = 1) flat in int decalIndex;
layout(location = 0) out vec4 color;

void main() {
    ivec2 pixel = ivec2(gl_FragCoord.xy);
    ivec2 decalSize = imageSize(decals[decalIndex]);
    vec4 decal = imageLoad(decals[decalIndex], pixel % decalSize);
    imageStore(accumulation[layerIndex], pixel, decal);
    uint previous = imageAtomicAdd(overdraw[layerIndex], pixel, 1u);
    color = vec4(decal.rgb, float(previous));
}
