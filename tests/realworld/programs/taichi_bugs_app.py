"""taichi kernels that go past the end of their data, which taichi on Vulkan does not check:
an ndarray written one element past its end, and the last field read three past its end
(past the end of taichi's root buffer). ``--fixed`` runs the corrected twins.

usage: taichi_bugs_app.py OUTPUT_FOLDER [--fixed]
"""

# No "from __future__ import annotations": taichi reads the kernels' annotations as objects.
import sys

import numpy as np
import taichi as ti
from results import save

N = 64
FIXED = "--fixed" in sys.argv

ti.init(arch=ti.vulkan, offline_cache=False, random_seed=7)
assert ti.lang.impl.current_cfg().arch == ti.vulkan, "taichi fell back from Vulkan"

weights = ti.field(ti.f32, shape=N)
biases = ti.field(ti.f32, shape=N)  # the last field: its end is the root buffer's


@ti.kernel
def shift_right(values: ti.types.ndarray(dtype=ti.f32, ndim=1), n: ti.i32):
    for i in range(n):
        values[i + 1] = ti.cast(i, ti.f32)


@ti.kernel
def fill():
    for i in range(N):
        weights[i] = 1.0
        biases[i] = 2.0


@ti.kernel
def windowed_sum(n: ti.i32) -> ti.f32:
    total = 0.0
    for i in range(n):
        total += biases[i + 3]
    return total


values = np.zeros(N, dtype=np.float32)
shift_right(values, N - 1 if FIXED else N)
fill()
total = windowed_sum(N - 3 if FIXED else N)
ti.sync()
save("values", values.tobytes())
save("total", np.float32(total).tobytes())
