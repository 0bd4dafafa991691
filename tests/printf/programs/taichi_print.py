"""taichi's ``print`` inside a Vulkan kernel (taichi prints what the Khronos layer's debug
printf, or gpuav's, reports). usage: taichi_print.py; the kernel's result is the last line."""

# No "from __future__ import annotations": taichi reads the kernels' annotations as objects.
import taichi as ti

# debug=True: taichi enables VK_LAYER_KHRONOS_validation with debug printf and
# VK_KHR_shader_non_semantic_info, and only then compiles print() to DebugPrintf.
ti.init(arch=ti.vulkan, debug=True, offline_cache=False)
assert ti.lang.impl.current_cfg().arch == ti.vulkan, "taichi fell back from Vulkan"

squares = ti.field(ti.i32, shape=4)


@ti.kernel
def fill():
    for i in range(4):
        squares[i] = i * i
        print("taichi i =", i, "square", squares[i], "half", i * 0.5)


fill()
ti.sync()
print("result", squares.to_numpy().tolist(), flush=True)
