// 16-bit types in a vertex shader: float16/int16 arithmetic and 16-bit storage in uniform and storage blocks.
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_16bit_storage : require

layout(set = 0, binding = 0, std140) uniform Quantization { f16vec4 scale; f16vec4 bias; mat4 mvp; } q;
layout(set = 0, binding = 1, std430) readonly buffer Packed { i16vec4 positions[]; } packed;

layout(location = 0) out f16vec2 halfUv;

void main() {
    i16vec4 raw = packed.positions[gl_VertexIndex];
    f16vec4 p = f16vec4(raw) * q.scale + q.bias;
    int16_t sum = raw.x + raw.y;
    float16_t lengthSquared = dot(p.xyz, p.xyz);
    halfUv = p.xy * float16_t(0.5) + float16_t(sum & int16_t(1));
    gl_Position = q.mvp * vec4(vec3(p.xyz), float(lengthSquared));
}
