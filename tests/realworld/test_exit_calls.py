"""Vulkan calls at the end of a process under gpuav (issue 13, item 3): from a Python
``atexit`` handler while the interpreter finalizes, from a libc ``atexit`` handler after it
has finalized, and from a C program's ``atexit`` handler registered before its first instance
(so it runs after any handler the layer registers)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.realworld.conftest import (
    RunProgram,
    assert_layer_changes_nothing,
    compile_c,
    python_program,
)

pytestmark = [pytest.mark.realworld, pytest.mark.vulkan]


@pytest.fixture(scope="module")
def late_teardown(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_c(tmp_path_factory, "late_teardown.c", shared=True)


@pytest.mark.parametrize("mode", ["python-atexit", "python-atexit-first"])
def test_python_atexit_handler_runs_compute_and_destroys(
    run_program: RunProgram, spirv: Callable[[str], Path], mode: str
) -> None:
    """Registered after the first Vulkan call, the handler runs before gpuav's own (which
    reads back and retires the Python side); registered before it, after: its new command
    buffer then binds an instrumented pipeline through the C front end alone."""
    command = python_program("exit_calls_app.py", str(spirv("region_array.comp")), mode)
    alone = run_program(command, layered=False)
    assert alone.outputs["at_exit.bin"] == alone.outputs["compute.bin"]
    layered = run_program(command, layered=True)
    assert_layer_changes_nothing(alone, layered)


def test_destroy_after_python_finalized(
    run_program: RunProgram, spirv: Callable[[str], Path], late_teardown: Path
) -> None:
    command = python_program(
        "exit_calls_app.py", str(spirv("region_array.comp")), "after-finalize", str(late_teardown)
    )
    alone = run_program(command, layered=False)
    assert alone.outputs["after_finalize.bin"] == b"done 0"
    layered = run_program(command, layered=True)
    assert_layer_changes_nothing(alone, layered)


def test_c_atexit_handler_runs_compute_and_destroys(
    run_program: RunProgram, spirv: Callable[[str], Path], lifecycle_app: Path
) -> None:
    command = [str(lifecycle_app), str(spirv("region_array.comp")), "--at-exit"]
    alone = run_program(command, layered=False)
    assert alone.result_lines()[-1] == "at-exit closed"
    layered = run_program(command, layered=True)
    assert_layer_changes_nothing(alone, layered, compare_stdout=True)
