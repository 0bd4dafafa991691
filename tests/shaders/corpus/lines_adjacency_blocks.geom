// lines_adjacency input to line_strip output with input/output interface blocks, structs and a push-constant indexed texel buffer.
#version 450
layout(lines_adjacency) in;
layout(line_strip, max_vertices = 8) out;

struct Segment { vec4 start; vec4 end; };

layout(set = 0, binding = 0) uniform samplerBuffer widths[3];
layout(push_constant) uniform Push { int widthTable; int subdivisions; } pc;

layout(location = 0) in VertexData { vec4 color; float arcLength; } gin[];
layout(location = 0) out FragmentData { vec4 color; float arcLength; float width; } gout;

vec4 catmullRom(vec4 p0, vec4 p1, vec4 p2, vec4 p3, float t) {
    float t2 = t * t;
    float t3 = t2 * t;
    return 0.5 * ((2.0 * p1) + (-p0 + p2) * t + (2.0 * p0 - 5.0 * p1 + 4.0 * p2 - p3) * t2 + (-p0 + 3.0 * p1 - 3.0 * p2 + p3) * t3);
}

void main() {
    Segment s = Segment(gl_in[1].gl_Position, gl_in[2].gl_Position);
    int steps = clamp(pc.subdivisions, 1, 7);
    for (int i = 0; i <= steps; ++i) {
        float t = float(i) / float(steps);
        gout.color = mix(gin[1].color, gin[2].color, t);
        gout.arcLength = mix(gin[1].arcLength, gin[2].arcLength, t);
        gout.width = texelFetch(widths[pc.widthTable], gl_PrimitiveIDIn * 8 + i).r;
        gl_Position = i == 0 ? s.start : (i == steps ? s.end
            : catmullRom(gl_in[0].gl_Position, s.start, s.end, gl_in[3].gl_Position, t));
        EmitVertex();
    }
    EndPrimitive();
}
