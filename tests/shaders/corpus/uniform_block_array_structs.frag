// Array of uniform blocks holding nested structs and arrays of structs, indexed by a flat varying.
#version 450

struct Texture {
    vec4 scaleOffset;
    int layer;
};

struct Material {
    vec4 baseColor;
    Texture textures[3];
    float roughness;
};

layout(set = 0, binding = 0, std140) uniform MaterialBlock {
    Material material;
    mat3 colorTransform;
} materials[8];

layout(set = 0, binding = 1) uniform sampler2DArray atlas;

layout(location = 0) in vec2 uv;
layout(location = 1) flat in int materialIndex;
layout(location = 0) out vec4 color;

vec4 sampleLayer(Texture t, vec2 coord) {
    return texture(atlas, vec3(coord * t.scaleOffset.xy + t.scaleOffset.zw, float(t.layer)));
}

void main() {
    Material m = materials[materialIndex].material;
    vec4 c = m.baseColor;
    for (int i = 0; i < 3; ++i) {
        c *= sampleLayer(materials[materialIndex].material.textures[i], uv);
    }
    c.rgb = materials[materialIndex].colorTransform * c.rgb;
    color = vec4(c.rgb, m.roughness + materials[2].material.roughness);
}
