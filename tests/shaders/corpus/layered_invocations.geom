// Instanced geometry shader (invocations = 6) writing gl_Layer/gl_ViewportIndex, indexing a uniform-block array by gl_InvocationID.
#version 450
layout(triangles, invocations = 6) in;
layout(triangle_strip, max_vertices = 3) out;

layout(set = 0, binding = 0, std140) uniform Face { mat4 viewProjection; vec4 clipPlane; } faces[6];

layout(location = 0) in vec3 inWorld[];
layout(location = 0) out vec3 outWorld;

void main() {
    for (int v = 0; v < gl_in.length(); ++v) {
        outWorld = inWorld[v];
        gl_Layer = gl_InvocationID;
        gl_ViewportIndex = gl_InvocationID % 2;
        gl_Position = faces[gl_InvocationID].viewProjection * vec4(inWorld[v], 1.0);
        gl_ClipDistance[0] = dot(faces[gl_InvocationID].clipPlane, vec4(inWorld[v], 1.0));
        EmitVertex();
    }
    EndPrimitive();
}
