#version 450
// wild_app's compute shader: region push.base of buffer push.which of a two-buffer array
// (push.which = 2 is the app's out-of-bounds bug), scaled by a specialization constant.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MULTIPLIER = 3u;
layout(set = 0, binding = 0) buffer Data { uint values[]; } data[2];
layout(push_constant) uniform Push { uint base; uint which; } push;

void main() {
    uint i = push.base + gl_GlobalInvocationID.x;
    data[push.which].values[i] = data[push.which].values[i] * MULTIPLIER + i;
}
