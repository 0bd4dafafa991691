// Structs, nested structs, arrays of structs in a uniform block, and an output interface block with arrays.
#version 450

struct Light { vec4 position; vec4 color; };
struct Bone { mat4 transform; float weightScale; };
struct Skeleton { Bone bones[8]; int boneCount; };

layout(set = 0, binding = 0, std140) uniform Scene {
    Light lights[4];
    Skeleton skeleton;
    mat4 viewProjection;
} scene;

layout(location = 0) in vec3 position;
layout(location = 1) in uvec4 boneIds;
layout(location = 2) in vec4 weights;

layout(location = 0) out VertexData {
    vec3 worldPosition;
    vec3 toLight[4];
    flat int dominantBone;
} vout;

mat4 skinMatrix(uvec4 ids, vec4 w, out int dominant) {
    mat4 m = mat4(0.0);
    dominant = 0;
    float best = -1.0;
    for (int i = 0; i < 4; ++i) {
        Bone bone = scene.skeleton.bones[ids[i] % uint(scene.skeleton.boneCount)];
        m += bone.transform * (w[i] * bone.weightScale);
        if (w[i] > best) { best = w[i]; dominant = int(ids[i]); }
    }
    return m;
}

void main() {
    vec4 world = skinMatrix(boneIds, weights, vout.dominantBone) * vec4(position, 1.0);
    vout.worldPosition = world.xyz;
    for (int i = 0; i < 4; ++i) {
        vout.toLight[i] = scene.lights[i].position.xyz - world.xyz;
    }
    gl_Position = scene.viewProjection * world;
}
