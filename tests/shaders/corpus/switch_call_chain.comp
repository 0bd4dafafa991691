// Switch-selected descriptor indices and a recursion-free call chain with in/out/inout params and struct returns.
#version 450
layout(local_size_x = 64) in;

struct Ray { vec3 origin; vec3 direction; };
struct Hit { float t; int material; vec3 normal; };

layout(set = 0, binding = 0, std430) readonly buffer Spheres { vec4 spheres[]; } sceneBuffers[3];
layout(set = 0, binding = 1, std430) writeonly buffer Results { vec4 colors[]; } results;
layout(set = 0, binding = 2) uniform sampler2D materialMaps[4];

Ray makeRay(uint index) {
    Ray r;
    r.origin = vec3(0.0);
    r.direction = normalize(vec3(float(index % 8u) - 4.0, float(index / 8u) - 4.0, 1.0));
    return r;
}

bool intersect(in Ray ray, in vec4 sphere, inout Hit hit) {
    vec3 oc = ray.origin - sphere.xyz;
    float b = dot(oc, ray.direction);
    float c = dot(oc, oc) - sphere.w * sphere.w;
    float h = b * b - c;
    if (h < 0.0) return false;
    float t = -b - sqrt(h);
    if (t <= 0.0 || t >= hit.t) return false;
    hit.t = t;
    hit.normal = normalize(ray.origin + t * ray.direction - sphere.xyz);
    return true;
}

void trace(in Ray ray, in int sceneIndex, out Hit hit) {
    hit = Hit(1e30, -1, vec3(0.0));
    int count = sceneBuffers[sceneIndex].spheres.length();
    for (int i = 0; i < count; ++i) {
        if (intersect(ray, sceneBuffers[sceneIndex].spheres[i], hit)) {
            hit.material = i % 4;
        }
    }
}

vec4 shade(Hit hit) {
    vec2 uv = hit.normal.xy * 0.5 + 0.5;
    switch (hit.material) {
    case -1:
        return vec4(0.1, 0.2, 0.4, 1.0);
    case 0:
        return textureLod(materialMaps[0], uv, 0.0);
    default:
        return textureLod(materialMaps[hit.material], uv, 0.0) * max(hit.normal.z, 0.0);
    }
}

void main() {
    uint id = gl_GlobalInvocationID.x;
    int sceneIndex;
    switch (id % 5u) {
    case 0u: case 1u: sceneIndex = 0; break;
    case 2u: sceneIndex = 1; break;
    default: sceneIndex = 2; break;
    }
    Hit hit;
    trace(makeRay(id), sceneIndex, hit);
    results.colors[id] = shade(hit);
}
