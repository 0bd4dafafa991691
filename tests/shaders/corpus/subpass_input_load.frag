// subpassLoad from input attachments: single-sampled, multisampled and an array of subpass inputs.
#version 450

layout(input_attachment_index = 0, set = 0, binding = 0) uniform subpassInput gbufferAlbedo;
layout(input_attachment_index = 1, set = 0, binding = 1) uniform subpassInputMS gbufferNormal;
layout(input_attachment_index = 2, set = 0, binding = 2) uniform isubpassInput materialIds;
layout(input_attachment_index = 3, set = 0, binding = 3) uniform subpassInput extra[2];

layout(push_constant) uniform Push { int sampleCount; int extraIndex; } pc;
layout(location = 0) out vec4 color;

void main() {
    vec4 albedo = subpassLoad(gbufferAlbedo);
    vec4 normal = vec4(0.0);
    for (int s = 0; s < pc.sampleCount; s++) {
        normal += subpassLoad(gbufferNormal, s);
    }
    int material = subpassLoad(materialIds).x;
    vec4 e = subpassLoad(extra[1]) + subpassLoad(extra[pc.extraIndex]);
    color = albedo * normal * float(material) + e;
}
