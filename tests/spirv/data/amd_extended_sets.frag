// Extended instruction sets of the AMD GLSL extensions (SPV_AMD_*), named from their grammars.
#version 450
#extension GL_AMD_shader_trinary_minmax : require
#extension GL_AMD_gcn_shader : require
#extension GL_AMD_shader_ballot : require
#extension GL_AMD_shader_explicit_vertex_parameter : require
layout(location=0) in vec3 v;
layout(location=1) __explicitInterpAMD in vec4 e;
layout(location=0) out vec4 o;
void main() { o = vec4(min3(v.x, v.y, v.z), cubeFaceIndexAMD(v), float(timeAMD()), interpolateAtVertexAMD(e, 1).x) + vec4(minInvocationsAMD(v.x)); }
