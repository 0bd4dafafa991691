// Bindless compute: runtime arrays of storage blocks, storage images and samplers indexed with nonuniformEXT.
// gpuav: target-env=vulkan1.2
#version 460
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) buffer Objects { vec4 data[]; } objects[];
layout(set = 1, binding = 0, rgba8) uniform image2D targets[];
layout(set = 2, binding = 0) uniform sampler2D textures[];
layout(set = 3, binding = 0, std430) readonly buffer Work { uvec4 items[]; } work;

void main() {
    uvec4 item = work.items[gl_GlobalInvocationID.x];
    uint object = item.x;
    uint target = item.y;
    uint textureId = item.z;
    vec4 v = objects[nonuniformEXT(object)].data[item.w];
    v += textureLod(textures[nonuniformEXT(textureId)], vec2(v.xy), 0.0);
    ivec2 size = imageSize(targets[nonuniformEXT(target)]);
    imageStore(targets[nonuniformEXT(target)], ivec2(item.w) % size, v);
    objects[nonuniformEXT(object)].data[0] += v;
    uint length = uint(objects[nonuniformEXT(object)].data.length());
    objects[0].data[1] = vec4(float(length));
}
