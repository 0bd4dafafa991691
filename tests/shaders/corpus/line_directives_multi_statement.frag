// #line directives (with and without a source-string number) and several statements on one line around descriptor accesses.
#version 450
layout(set = 0, binding = 0) uniform sampler2D layers[4];
layout(set = 0, binding = 1, std140) uniform Params { int first; int count; } params;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;
#line 100
vec4 blend(vec4 a, vec4 b, float t) { vec4 r = mix(a, b, t); r.a = max(a.a, b.a); return r; }
#line 200 1
void main() {
    vec4 acc = vec4(0.0); int last = params.first + params.count;
    for (int i = params.first; i < last; ++i) { vec4 s = texture(layers[i], uv); acc = blend(acc, s, 0.5); }
#line 300
    color = acc; color.rgb *= texture(layers[params.first], uv * 2.0).a; if (color.a < 0.01) discard;
}
