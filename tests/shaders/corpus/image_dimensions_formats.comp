// Storage images of every dimension and many formats, with coherent/volatile/restrict/readonly/writeonly qualifiers.
#version 450
layout(local_size_x = 4, local_size_y = 4, local_size_z = 4) in;

layout(set = 0, binding = 0, r32f) uniform restrict readonly image1D lines[2];
layout(set = 0, binding = 1, rg16f) uniform coherent image2D flow[2];
layout(set = 0, binding = 2, rgba16) uniform writeonly image3D volumes[2];
layout(set = 0, binding = 3, r8) uniform readonly imageCube sky[2];
layout(set = 0, binding = 4, rgba8_snorm) uniform volatile image2DArray normals[2];
layout(set = 0, binding = 5, r32i) uniform readonly iimage1DArray ids[2];
layout(set = 0, binding = 6, rgba32ui) uniform uimageCubeArray masks[2];
layout(set = 0, binding = 7, rgb10_a2) uniform writeonly image2D packed_;
layout(set = 0, binding = 8, r11f_g11f_b10f) uniform image2D hdr;

layout(push_constant) uniform Push { int set; } pc;

void main() {
    ivec3 p = ivec3(gl_GlobalInvocationID);
    int s = pc.set;
    float line = imageLoad(lines[s], p.x).r + float(imageSize(lines[s]));
    vec2 velocity = imageLoad(flow[s], p.xy).rg;
    imageStore(flow[s], p.xy, vec4(velocity * 0.9, 0.0, 0.0));
    imageStore(volumes[s], p, vec4(line));
    float skyValue = imageLoad(sky[s], ivec3(p.xy, p.z % 6)).r;
    vec4 n = imageLoad(normals[s], p);
    imageStore(normals[s], p, -n);
    int id = imageLoad(ids[s], p.xy).r;
    uvec4 m = imageLoad(masks[s], ivec3(p.xy, p.z % 12));
    imageStore(masks[s], ivec3(p.xy, 0), m | uvec4(uint(id)));
    ivec3 cubeSize = imageSize(masks[s]);
    imageStore(packed_, p.xy, vec4(skyValue, n.xy, 1.0));
    imageStore(hdr, p.xy, imageLoad(hdr, p.xy) + vec4(vec3(cubeSize), 0.0));
}
