#version 450
// Each dispatch updates its own region of the buffer (push.base), so no barriers are needed.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; } data;
layout(push_constant) uniform Push { uint base; uint bad_index; } push;

void main() {
    uint i = push.base + gl_GlobalInvocationID.x;
    data.values[i] = data.values[i] * 3u + i;
}
