// gl_DrawID/gl_BaseInstance/gl_BaseVertex (draw parameters, core in SPIR-V 1.3+) indexing storage-block arrays.
// gpuav: target-env=vulkan1.3
#version 460

struct DrawData { mat4 model; uint materialIndex; };
layout(set = 0, binding = 0, std430) readonly buffer Draws { DrawData draws[]; } drawBuffers[2];
layout(set = 0, binding = 1) uniform sampler2D materialTextures[8];
layout(push_constant) uniform Push { mat4 viewProjection; int drawBuffer; } pc;

layout(location = 0) in vec3 position;
layout(location = 1) in vec2 uv;
layout(location = 0) out vec4 albedo;

void main() {
    DrawData d = drawBuffers[pc.drawBuffer].draws[gl_DrawID];
    albedo = textureLod(materialTextures[d.materialIndex], uv, 0.0);
    albedo.a = float(gl_BaseInstance + gl_BaseVertex);
    gl_Position = pc.viewProjection * d.model * vec4(position, 1.0);
}
