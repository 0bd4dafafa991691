// gl_ClipDistance/gl_CullDistance/gl_PointSize with a loop counter indexing an array of uniform blocks.
#version 450

layout(set = 0, binding = 0, std140) uniform ClipPlane { vec4 plane; } clipPlanes[6];
layout(set = 0, binding = 1, std140) uniform Params { int planeCount; mat4 mvp; } params;

layout(location = 0) in vec4 position;

out gl_PerVertex {
    vec4 gl_Position;
    float gl_PointSize;
    float gl_ClipDistance[4];
    float gl_CullDistance[2];
};

void main() {
    vec4 world = position;
    for (int i = 0; i < 4; ++i) {
        gl_ClipDistance[i] = i < params.planeCount ? dot(clipPlanes[i].plane, world) : 1.0;
    }
    for (int i = 4; i < params.planeCount && i < 6; i++) {
        gl_CullDistance[i - 4] = dot(clipPlanes[i].plane, world);
    }
    gl_PointSize = 2.0;
    gl_Position = params.mvp * world;
}
