// GL_ARB_sparse_texture2 residency queries: sparse texture, lod, offset, grad, fetch, gather and shadow forms.
#version 450
#extension GL_ARB_sparse_texture2 : require

layout(set = 0, binding = 0) uniform sampler2D sparseMaps[4];
layout(set = 0, binding = 1) uniform sampler2DShadow sparseShadow[2];
layout(set = 0, binding = 2) uniform sampler2DArray sparseLayers[2];

layout(location = 0) in vec3 coord;
layout(location = 1) flat in int index;
layout(location = 0) out vec4 color;

void main() {
    vec4 texel = vec4(0.0);
    vec4 acc = vec4(0.0);
    int resident = 0;
    int code = sparseTextureARB(sparseMaps[index], coord.xy, texel);
    if (sparseTexelsResidentARB(code)) { acc += texel; resident++; }
    code = sparseTextureLodARB(sparseMaps[index], coord.xy, 1.0, texel);
    if (sparseTexelsResidentARB(code)) { acc += texel; resident++; }
    code = sparseTextureOffsetARB(sparseMaps[index], coord.xy, ivec2(1, 0), texel);
    if (sparseTexelsResidentARB(code)) { acc += texel; resident++; }
    code = sparseTextureGradARB(sparseMaps[index], coord.xy, vec2(0.01), vec2(0.01), texel);
    if (sparseTexelsResidentARB(code)) { acc += texel; resident++; }
    code = sparseTexelFetchARB(sparseMaps[index], ivec2(coord.xy * 256.0), 0, texel);
    if (sparseTexelsResidentARB(code)) { acc += texel; resident++; }
    code = sparseTextureGatherARB(sparseMaps[index], coord.xy, texel, 1);
    if (sparseTexelsResidentARB(code)) { acc += texel; resident++; }
    code = sparseTextureGatherOffsetARB(sparseMaps[index], coord.xy, ivec2(0, 1), texel);
    if (sparseTexelsResidentARB(code)) { acc += texel; resident++; }
    float depth = 0.0;
    code = sparseTextureARB(sparseShadow[index & 1], coord, depth);
    if (sparseTexelsResidentARB(code)) { acc.x += depth; resident++; }
    code = sparseTextureLodARB(sparseShadow[index & 1], coord, 0.0, depth);
    if (sparseTexelsResidentARB(code)) { acc.y += depth; resident++; }
    vec4 shadowGather = vec4(0.0);
    code = sparseTextureGatherARB(sparseShadow[index & 1], coord.xy, coord.z, shadowGather);
    if (sparseTexelsResidentARB(code)) { acc += shadowGather; resident++; }
    code = sparseTextureARB(sparseLayers[index & 1], coord, texel);
    if (sparseTexelsResidentARB(code)) { acc += texel; resident++; }
    color = acc / float(max(resident, 1));
}
