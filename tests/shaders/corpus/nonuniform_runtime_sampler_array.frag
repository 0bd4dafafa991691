// Runtime descriptor arrays (sampler2D tex[], texture2D[] + sampler) indexed with nonuniformEXT from a varying.
// gpuav: target-env=vulkan1.2
#version 460
#extension GL_EXT_nonuniform_qualifier : require

layout(set = 0, binding = 0) uniform sampler2D materials[];
layout(set = 1, binding = 0) uniform texture2D bindlessTextures[];
layout(set = 1, binding = 1) uniform sampler bindlessSampler;

layout(location = 0) in vec2 uv;
layout(location = 1) flat in uint materialId;
layout(location = 2) flat in uint textureId;
layout(location = 0) out vec4 color;

void main() {
    vec4 base = texture(materials[nonuniformEXT(materialId)], uv);
    vec4 detail = texture(sampler2D(bindlessTextures[nonuniformEXT(textureId)], bindlessSampler), uv * 8.0);
    uint uniformIndex = 0u;
    vec4 fallback = texture(materials[uniformIndex], uv);
    ivec2 size = textureSize(materials[nonuniformEXT(materialId + 1u)], 0);
    color = base * detail + fallback * float(size.x);
}
