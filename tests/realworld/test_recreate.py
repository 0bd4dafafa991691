"""Instance and device created, used and destroyed three times in one process, from Python and
from C: the second instance used to crash at its first dispatch (issue 13, item 2)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.realworld.conftest import (
    RunProgram,
    assert_layer_changes_nothing,
    python_program,
)

pytestmark = [pytest.mark.realworld, pytest.mark.vulkan]


def test_python_app_recreates_instances_under_gpuav(
    run_program: RunProgram, spirv: Callable[[str], Path]
) -> None:
    command = python_program("recreate_app.py", str(spirv("region_array.comp")))
    alone = run_program(command, layered=False)
    assert sorted(alone.outputs) == ["round0.bin", "round1.bin", "round2.bin"]
    assert len(set(alone.outputs.values())) == 1
    layered = run_program(command, layered=True)
    assert_layer_changes_nothing(alone, layered)


def test_c_app_recreates_instances_under_gpuav(
    run_program: RunProgram, spirv: Callable[[str], Path], lifecycle_app: Path
) -> None:
    command = [str(lifecycle_app), str(spirv("region_array.comp")), "--rounds", "3"]
    alone = run_program(command, layered=False)
    assert [line.split()[:2] for line in alone.result_lines()] == [
        ["round", "0"], ["round", "1"], ["round", "2"]
    ]  # fmt: skip
    layered = run_program(command, layered=True)
    assert_layer_changes_nothing(alone, layered, compare_stdout=True)
