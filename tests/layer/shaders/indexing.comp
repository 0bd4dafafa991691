#version 450
// indexing_reporting.comp without the checks: element push.index of a runtime array of
// storage buffers, copied into result.words[push.slot * 32 + 31].
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Result { uint words[]; } result;
layout(set = 0, binding = 1) buffer Item { uint value; } items[];
layout(push_constant) uniform Push { uint index; uint slot; } push;

void main() {
    result.words[push.slot * 32u + 31u] = items[nonuniformEXT(push.index)].value;
}
