#version 450
// region.comp through a one-buffer array indexed by a run-time value (always 0 here), so that
// the real instrumentation pass has an access to check.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; } data[1];
layout(push_constant) uniform Push { uint base; uint bad_index; } push;

void main() {
    uint i = push.base + gl_GlobalInvocationID.x;
    uint buffer_index = push.base >> 31;
    data[buffer_index].values[i] = data[buffer_index].values[i] * 3u + i;
}
