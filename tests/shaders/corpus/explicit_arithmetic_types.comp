// 8/16-bit types (GL_EXT_shader_explicit_arithmetic_types) with 16-bit and 8-bit storage in storage-block arrays.
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) readonly buffer Halves { f16vec4 values[]; } halves[2];
layout(set = 0, binding = 1, std430) buffer Bytes { uint8_t bytes[]; } bytes;
layout(set = 0, binding = 2, std430) buffer Shorts { u16vec2 pairs[4]; int16_t shorts[]; } shorts;

layout(push_constant) uniform Push { uint16_t which; uint8_t mask; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    f16vec4 h = halves[uint(pc.which)].values[i];
    float16_t s = h.x * h.y + h.z - h.w;
    int16_t q = int16_t(s * float16_t(100.0));
    uint8_t b = uint8_t(q) & pc.mask;
    int8_t signedByte = int8_t(b) - int8_t(1);
    uint16_t widened = uint16_t(b) << 4;
    bytes.bytes[i] = b;
    shorts.shorts[i] = q + int16_t(signedByte);
    shorts.pairs[i & 3u] = u16vec2(widened, uint16_t(i));
    float64_t d = float64_t(s);
    int64_t wide = int64_t(q) * 3l;
    shorts.shorts[0] = int16_t(wide + int64_t(d));
}
