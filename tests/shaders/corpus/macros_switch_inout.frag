// Preprocessor macros (function-like, conditional), switch over a descriptor index, and functions with in/out/inout params.
#version 450

#define LIGHT_COUNT 4
#define SATURATE(x) clamp((x), 0.0, 1.0)
#define SQUARE(x) ((x) * (x))
#if defined(LIGHT_COUNT) && LIGHT_COUNT > 2
#define USE_RAMP 1
#else
#define USE_RAMP 0
#endif

layout(set = 0, binding = 0) uniform sampler2D ramps[LIGHT_COUNT];
layout(set = 0, binding = 1) uniform sampler2D fallbackRamp;

layout(location = 0) in vec3 normal;
layout(location = 1) flat in int mode;
layout(location = 0) out vec4 color;

void shade(in vec3 n, in int light, out float diffuse, inout vec3 tint) {
    vec3 dir = normalize(vec3(float(light) - 1.5, 1.0, 0.5));
    diffuse = SATURATE(dot(n, dir));
#if USE_RAMP
    tint *= texture(ramps[light], vec2(diffuse, 0.5)).rgb;
#endif
}

vec3 tonemap(vec3 c) { return c / (1.0 + c); }

void main() {
    vec3 tint = vec3(1.0);
    float total = 0.0;
    for (int light = 0; light < LIGHT_COUNT; ++light) {
        float d;
        shade(normalize(normal), light, d, tint);
        total += SQUARE(d);
    }
    vec3 c;
    switch (mode) {
    case 0:
        c = tint * total;
        break;
    case 1:
    case 2:
        c = texture(ramps[mode], vec2(total, 0.5)).rgb;
        break;
    case 3:
        c = texture(ramps[LIGHT_COUNT - 1], vec2(total)).rgb;
        // fall through
    default:
        c = texture(fallbackRamp, vec2(total)).rgb;
        break;
    }
    color = vec4(tonemap(c), 1.0);
}
