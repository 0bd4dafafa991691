"""taichi (``ti.vulkan``): fields, ndarrays, atomics and a stencil, alone and under gpuav."""

from __future__ import annotations

import pytest

from tests.realworld.conftest import RunProgram, assert_layer_changes_nothing, python_program

pytestmark = [pytest.mark.realworld, pytest.mark.vulkan]

# Alone it takes about a second; under gpuav its start used to hang (issue 13, item 1).
TIMEOUT = 90


def test_taichi_kernels_compute_the_same_under_gpuav(run_program: RunProgram) -> None:
    command = python_program("taichi_app.py")
    alone = run_program(command, layered=False, timeout=TIMEOUT)
    assert sorted(alone.outputs) == ["histogram.bin", "matrix.bin", "squares.bin", "stencil.bin"]
    layered = run_program(command, layered=True, timeout=TIMEOUT)
    assert_layer_changes_nothing(alone, layered)
