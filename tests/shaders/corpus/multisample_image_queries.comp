// Multisampled storage and sampled images in compute: imageSamples, imageSize, imageLoad with a sample index, textureSamples.
#version 450
layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0, rgba8) uniform readonly image2DMS msTargets[2];
layout(set = 0, binding = 1, rgba8) uniform readonly image2DMSArray msLayers[2];
layout(set = 0, binding = 2) uniform sampler2DMS msTextures[2];
layout(set = 0, binding = 3, rgba8) uniform writeonly image2D resolved;

layout(push_constant) uniform Push { int target; int layer; } pc;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    int samples = imageSamples(msTargets[pc.target]);
    ivec2 size = imageSize(msTargets[pc.target]);
    vec4 sum = vec4(0.0);
    for (int s = 0; s < samples; ++s) {
        sum += imageLoad(msTargets[pc.target], p % size, s);
    }
    int layerSamples = imageSamples(msLayers[pc.target]);
    ivec3 layerSize = imageSize(msLayers[pc.target]);
    sum += imageLoad(msLayers[pc.target], ivec3(p, pc.layer % layerSize.z), layerSamples - 1);
    int textureSampleCount = textureSamples(msTextures[pc.target]);
    sum += texelFetch(msTextures[pc.target], p, textureSampleCount - 1);
    imageStore(resolved, p, sum / float(samples + 2));
}
