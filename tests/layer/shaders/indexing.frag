#version 450
// indexing.comp in a fragment shader: every fragment copies element push.index of a runtime
// array of storage buffers into result.words[push.slot * 32 + 31].
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) buffer Result { uint words[]; } result;
layout(set = 0, binding = 1) buffer Item { uint value; } items[];
layout(push_constant) uniform Push { uint index; uint slot; } push;
layout(location = 0) out vec4 color;

void main() {
    result.words[push.slot * 32u + 31u] = items[nonuniformEXT(push.index)].value;
    color = vec4(1.0);
}
