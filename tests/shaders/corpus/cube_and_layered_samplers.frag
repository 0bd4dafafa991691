// Arrays of samplerCube, sampler2DArray, samplerCubeArray and sampler1DArray indexed by a flat varying.
#version 450

layout(set = 0, binding = 0) uniform samplerCube environment[3];
layout(set = 0, binding = 1) uniform sampler2DArray atlases[4];
layout(set = 0, binding = 2) uniform samplerCubeArray probes[2];
layout(set = 0, binding = 3) uniform sampler1DArray ramps[2];

layout(location = 0) in vec3 normal;
layout(location = 1) in vec3 atlasCoord;
layout(location = 2) flat in int probe;
layout(location = 0) out vec4 color;

void main() {
    vec3 n = normalize(normal);
    vec4 c = texture(environment[probe % 3], n);
    c += textureLod(environment[probe % 3], n, 4.0);
    c += textureGrad(environment[probe % 3], n, vec3(0.01), vec3(0.01));
    c += texture(atlases[probe], atlasCoord);
    c += textureOffset(atlases[probe], atlasCoord, ivec2(1, 0));
    c += texture(probes[probe & 1], vec4(n, float(probe)));
    c += textureLod(probes[probe & 1], vec4(n, 0.0), 2.0);
    c += texture(ramps[probe & 1], vec2(atlasCoord.x, 0.0));
    color = c;
}
