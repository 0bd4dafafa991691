// 64-bit integers and doubles in compute: int64 arithmetic and atomics (GL_EXT_shader_atomic_int64), dvec/dmat math.
#version 450
#extension GL_ARB_gpu_shader_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
layout(local_size_x = 64) in;

layout(set = 0, binding = 0, std430) buffer Accumulators { uint64_t sum; int64_t minimum; double energy; dvec4 moments[]; } acc[2];
layout(set = 0, binding = 1, std430) readonly buffer Samples { double samples[]; } samples;

layout(push_constant) uniform Push { int64_t offset; int which; } pc;

double polynomial(double x) {
    return fma(fma(x, 0.5lf, -1.0lf), x, 2.0lf);
}

void main() {
    uint i = gl_GlobalInvocationID.x;
    double x = samples.samples[i];
    dmat2 rotation = dmat2(cos(float(x)), -sin(float(x)), sin(float(x)), cos(float(x)));
    dvec2 r = rotation * dvec2(x, 1.0lf);
    int64_t fixedPoint = int64_t(x * 1048576.0lf) + pc.offset;
    uint64_t bits = doubleBitsToUint64(x);
    atomicAdd(acc[pc.which].sum, uint64_t(fixedPoint) ^ (bits >> 52));
    atomicMin(acc[pc.which].minimum, fixedPoint);
    acc[pc.which].moments[i] = dvec4(x, x * x, polynomial(x), r.x + r.y);
    uvec2 halves = unpackDouble2x32(x);
    acc[pc.which].energy = packDouble2x32(halves.yx);
}
