"""The labeled compute program of the workflow tests, and how to run it under gpuav."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

APPS = Path(__file__).parent / "apps"
PROGRAM = APPS / "labeled_compute.py"
RUN_TIMEOUT = 300


def dispatch_line() -> int:
    """The line of ``vkCmdDispatch`` in the program (the recording site messages name)."""
    lines = PROGRAM.read_text().splitlines()
    return next(number for number, line in enumerate(lines, 1) if "vkCmdDispatch(" in line)


def clean_environment() -> dict[str, str]:
    """The caller's environment without anything that loads or configures a layer."""
    cleared = ("GPUAV_", "VK_INSTANCE_LAYERS", "VK_LAYER_", "VK_ADD_LAYER_PATH", "VK_LOADER")
    return {key: value for key, value in os.environ.items() if not key.startswith(cleared)}


def gpuav_run(
    options: list[str], program: list[str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``gpuav run OPTIONS -- PROGRAM`` as a user types it."""
    return subprocess.run(
        [sys.executable, "-m", "gpuav.cli", "run", *options, "--", *program],
        env=clean_environment(), cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip
