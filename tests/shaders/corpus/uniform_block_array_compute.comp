// Arrays of std140 uniform blocks with nested structs, indexed by a uniform-block value and by the workgroup id.
#version 450
layout(local_size_x = 32) in;

struct Curve { vec4 keys[4]; };
struct Channel { Curve curve; float weight; int enabled; };

layout(set = 0, binding = 0, std140) uniform Animation { Channel channels[3]; float time; } animations[6];
layout(set = 0, binding = 1, std140) uniform Dispatch { int animation; int channel; } dispatchInfo;
layout(set = 0, binding = 2, std430) writeonly buffer Poses { vec4 poses[]; } poses;

vec4 evaluate(Curve c, float t) {
    int k = clamp(int(t), 0, 2);
    return mix(c.keys[k], c.keys[k + 1], fract(t));
}

void main() {
    int a = dispatchInfo.animation;
    Channel ch = animations[a].channels[dispatchInfo.channel];
    vec4 pose = ch.enabled != 0 ? evaluate(ch.curve, animations[a].time) * ch.weight : vec4(0.0);
    pose += animations[gl_WorkGroupID.x % 6u].channels[0].curve.keys[0];
    poses.poses[gl_GlobalInvocationID.x] = pose;
}
