#version 450
// wild_app's compute shader: region push.base of buffer push.which of a buffer array
// (push.which = 2 is the app's out-of-bounds bug), scaled by a specialization constant. The
// array's length is a specialization constant too: 1 by default, 2 as the app specializes it.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MULTIPLIER = 3u;
layout(constant_id = 1) const uint COUNT = 1u;
layout(set = 0, binding = 0) buffer Data { uint values[]; } data[COUNT];
layout(push_constant) uniform Push { uint base; uint which; } push;

void main() {
    uint i = push.base + gl_GlobalInvocationID.x;
    data[push.which].values[i] = data[push.which].values[i] * MULTIPLIER + i;
}
