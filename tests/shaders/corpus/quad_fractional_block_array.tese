// Tessellation evaluation (quads, fractional_odd_spacing, ccw) with patch input blocks and a uniform-block array indexed by gl_PrimitiveID.
#version 450
layout(quads, fractional_odd_spacing, ccw) in;

layout(set = 0, binding = 0, std140) uniform PatchTransform { mat4 model; vec4 bend; } transforms[32];
layout(set = 0, binding = 1, std140) uniform View { mat4 viewProjection; } view;

layout(location = 4) patch in PatchData { vec4 corner; float sharpness; } patchData;
layout(location = 0) in VertexOut { vec3 normal; vec2 uv; float weight; } vin[];
layout(location = 0) out vec3 normal;

vec4 bilinear(vec4 a, vec4 b, vec4 c, vec4 d, vec2 t) {
    return mix(mix(a, b, t.x), mix(d, c, t.x), t.y);
}

void main() {
    vec2 t = gl_TessCoord.xy;
    vec4 p = bilinear(gl_in[0].gl_Position, gl_in[1].gl_Position, gl_in[2].gl_Position, gl_in[3].gl_Position, t);
    int transformIndex = gl_PrimitiveID;
    p += transforms[transformIndex].bend * sin(t.x * 3.14159) * patchData.sharpness;
    normal = normalize(mix(vin[0].normal, vin[2].normal, t.y));
    gl_Position = view.viewProjection * transforms[transformIndex].model * (p + patchData.corner * vin[1].weight);
}
