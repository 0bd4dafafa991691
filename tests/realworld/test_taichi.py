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


def test_taichi_out_of_bounds_ndarray_write_and_field_read_are_reported(
    run_program: RunProgram,
) -> None:
    """taichi on Vulkan has no bounds checks: an ndarray written one past its end and the last
    field read past the end of taichi's root buffer are reported with the buffer and bytes;
    the fixed twins are silent and compute the same as without gpuav."""
    buggy = run_program(python_program("taichi_bugs_app.py"), layered=True, timeout=TIMEOUT)
    assert buggy.returncode == 0, buggy.summary()
    errors = buggy.gpuav_errors()
    assert [e["message_id"] for e in errors] == ["VUID-vkCmdDispatch-storageBuffers-06936"] * 2
    write, read = sorted(errors, key=lambda e: "read" in e["text"])
    assert "storage buffer write: 4 bytes at offset 256" in write["text"]
    assert "of the 256 bytes bound" in write["text"]
    assert "Descriptor: ext_arr_buffer" in write["text"]
    assert "Recorded at taichi_bugs_app.py" in write["text"]
    assert "storage buffer read: 4 bytes at offset 512" in read["text"]
    assert "Descriptor: root_buffer" in read["text"]
    assert "buffer size 512" in read["text"]
    fixed = python_program("taichi_bugs_app.py", "--fixed")
    alone = run_program(fixed, layered=False, timeout=TIMEOUT)
    layered = run_program(fixed, layered=True, timeout=TIMEOUT)
    assert_layer_changes_nothing(alone, layered)
