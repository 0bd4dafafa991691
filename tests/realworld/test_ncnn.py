"""ncnn with ``use_vulkan_compute``: a small network built in code, alone and under gpuav. Its
Vulkan device is released after the interpreter finalized (issue 13, item 3)."""

from __future__ import annotations

import pytest

from tests.realworld.conftest import RunProgram, assert_layer_changes_nothing, python_program

pytestmark = [pytest.mark.realworld, pytest.mark.vulkan]


def test_ncnn_network_gives_the_same_output_under_gpuav(run_program: RunProgram) -> None:
    command = python_program("ncnn_app.py")
    alone = run_program(command, layered=False)
    assert {"pool1.bin", "prob.bin"} <= alone.outputs.keys()
    assert "llvmpipe" in alone.stderr  # ncnn names the Vulkan device it runs on
    layered = run_program(command, layered=True)
    assert_layer_changes_nothing(alone, layered)
