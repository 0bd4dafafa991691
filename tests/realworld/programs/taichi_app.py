"""taichi on its Vulkan backend: a field, an ndarray, integer atomics and a 2-D stencil.

usage: taichi_app.py OUTPUT_FOLDER. Integer atomics only, so the results do not depend on the
order in which invocations run.
"""

# No "from __future__ import annotations": taichi reads the kernels' annotations as objects.
import numpy as np
import taichi as ti
from results import save

SIZE = 64
BINS = 16
STEPS = 20

ti.init(arch=ti.vulkan, offline_cache=False, random_seed=7)
assert ti.lang.impl.current_cfg().arch == ti.vulkan, "taichi fell back from Vulkan"

squares = ti.field(ti.f32, shape=SIZE * SIZE)
histogram = ti.field(ti.i32, shape=BINS)
grid = ti.field(ti.f32, shape=(SIZE, SIZE))
next_grid = ti.field(ti.f32, shape=(SIZE, SIZE))


@ti.kernel
def fill_squares():
    for i in squares:
        squares[i] = ti.sqrt(ti.cast(i, ti.f32)) * 0.5 + ti.sin(ti.cast(i, ti.f32))


@ti.kernel
def count_into_bins(values: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    for i in values:
        ti.atomic_add(histogram[values[i] % BINS], 1)
        ti.atomic_max(histogram[BINS - 1], values[i] // 64)


@ti.kernel
def scale_ndarray(values: ti.types.ndarray(dtype=ti.f32, ndim=2), factor: ti.f32):
    for i, j in values:
        values[i, j] = values[i, j] * factor + ti.cast(i - j, ti.f32)


@ti.kernel
def init_grid():
    for i, j in grid:
        grid[i, j] = 0.0
        if i == SIZE // 2 and j == SIZE // 3:
            grid[i, j] = 1000.0


@ti.kernel
def relax():
    for i, j in grid:
        if 0 < i < SIZE - 1 and 0 < j < SIZE - 1:
            next_grid[i, j] = 0.25 * (
                grid[i - 1, j] + grid[i + 1, j] + grid[i, j - 1] + grid[i, j + 1]
            )
        else:
            next_grid[i, j] = 0.0
    for i, j in grid:
        grid[i, j] = next_grid[i, j]


fill_squares()
values = ti.ndarray(ti.i32, shape=4096)
values.from_numpy((np.arange(4096, dtype=np.int64) * 2654435761 % 100003).astype(np.int32))
count_into_bins(values)
matrix = ti.ndarray(ti.f32, shape=(32, 48))
matrix.from_numpy(np.linspace(-3.0, 5.0, 32 * 48, dtype=np.float32).reshape(32, 48))
scale_ndarray(matrix, 1.5)
init_grid()
for _ in range(STEPS):
    relax()
ti.sync()

save("squares", squares.to_numpy().tobytes())
save("histogram", histogram.to_numpy().tobytes())
save("matrix", matrix.to_numpy().tobytes())
save("stencil", grid.to_numpy().tobytes())
assert histogram.to_numpy()[: BINS - 1].sum() > 0 and grid.to_numpy().sum() > 0
