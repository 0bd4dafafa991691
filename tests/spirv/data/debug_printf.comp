// debugPrintfEXT: spirv-dis 2023.1 prints the NonSemantic.DebugPrintf instruction as a number.
#version 450
#extension GL_EXT_debug_printf : require
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) buffer Data { float values[]; } data;
void main() {
    uint i = gl_GlobalInvocationID.x;
    debugPrintfEXT("value %u = %f\n", i, data.values[i]);
}
