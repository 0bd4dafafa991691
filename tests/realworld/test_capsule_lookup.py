"""A capsule attribute lookup before the first Vulkan call, then a compute app under gpuav:
on Python 3.11 this hung in cffi's embedding start-up (issue 13, item 1)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.realworld.conftest import RunProgram, assert_layer_changes_nothing, python_program

pytestmark = [pytest.mark.realworld, pytest.mark.vulkan]


def test_capsule_lookup_before_first_call_does_not_hang(
    run_program: RunProgram, spirv: Callable[[str], Path]
) -> None:
    command = python_program("capsule_lookup_app.py", str(spirv("region_array.comp")))
    alone = run_program(command, layered=False, timeout=60)
    layered = run_program(command, layered=True, timeout=60)
    assert layered.returncode is not None, "hung under gpuav (killed after 60 s)"
    assert_layer_changes_nothing(alone, layered)
