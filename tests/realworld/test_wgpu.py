"""wgpu-py on its Vulkan backend (wgpu-native): a compute shader and an offscreen render."""

from __future__ import annotations

import pytest

from tests.realworld.conftest import RunProgram, assert_layer_changes_nothing, python_program

pytestmark = [pytest.mark.realworld, pytest.mark.vulkan]


def test_wgpu_compute_and_render_unchanged_under_gpuav(run_program: RunProgram) -> None:
    command = python_program("wgpu_app.py")
    alone = run_program(command, layered=False)
    assert sorted(alone.outputs) == ["compute.bin", "render.bin"]
    layered = run_program(command, layered=True)
    assert_layer_changes_nothing(alone, layered)
