"""pygfx rendering offscreen (rendercanvas) on wgpu's Vulkan backend: the same pixels."""

from __future__ import annotations

import pytest

from tests.realworld.conftest import RunProgram, assert_layer_changes_nothing, python_program

pytestmark = [pytest.mark.realworld, pytest.mark.vulkan]


def test_pygfx_frame_unchanged_under_gpuav(run_program: RunProgram) -> None:
    command = python_program("pygfx_app.py")
    alone = run_program(command, layered=False)
    assert sorted(alone.outputs) == ["frame.bin"]
    layered = run_program(command, layered=True)
    assert_layer_changes_nothing(alone, layered)
