// Storage images without a format qualifier (StorageImageWriteWithoutFormat, GL_EXT_shader_image_load_formatted reads) in arrays.
#version 450
#extension GL_EXT_shader_image_load_formatted : require
layout(local_size_x = 8, local_size_y = 8) in;

layout(set = 0, binding = 0) uniform readonly image2D formatlessInputs[4];
layout(set = 0, binding = 1) uniform writeonly image2D formatlessOutputs[4];
layout(set = 0, binding = 2) uniform writeonly uimageBuffer formatlessTexels[2];

layout(push_constant) uniform Push { int input_; int output_; } pc;

void main() {
    ivec2 p = ivec2(gl_GlobalInvocationID.xy);
    vec4 texel = imageLoad(formatlessInputs[pc.input_], p);
    imageStore(formatlessOutputs[pc.output_], p, texel.bgra);
    imageStore(formatlessTexels[pc.output_ & 1], p.x + p.y * 8, uvec4(texel * 255.0));
}
