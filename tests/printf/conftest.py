"""Fixtures for the printf tests: the stage shaders compiled, and runners of ``printf_app.py``
under gpuav or under the Khronos layer 1.4.309 with its debug printf on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from gpuav.layer.native.build import layer_dir
from tests.layer.conftest import app_environment
from tests.printf.stage_shaders import MAINS, compile_stage

HERE = Path(__file__).parent
REPOSITORY = HERE.parent.parent
APP = HERE / "printf_app.py"
APP_TIMEOUT = 300
GPUAV_PRINTF_ID = "GPUAV-debug-printf"
KHRONOS_PRINTF_ID = "VVL-DEBUG-PRINTF"
KHRONOS_PREFIX = "DebugPrintf:\n"
BIG_BUFFER = "1048576"

Runner = Callable[..., list[dict[str, Any]]]


def app_messages(stdout: str) -> list[dict[str, Any]]:
    """The messages of the app's JSON line (its last line starting with a brace)."""
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert lines, f"the app printed no JSON:\n{stdout[-3000:]}"
    return list(json.loads(lines[-1])["messages"])


def gpuav_lines(messages: list[dict[str, Any]]) -> list[str]:
    """What the shaders printed, from gpuav's messages (after the `` | `` of the prefix)."""
    return [m["text"].split(" | ", 1)[1] for m in messages if m["id"] == GPUAV_PRINTF_ID]


def khronos_lines(messages: list[dict[str, Any]]) -> list[str]:
    return [m["text"].split(KHRONOS_PREFIX, 1)[1] for m in messages if m["id"] == KHRONOS_PRINTF_ID]


@pytest.fixture(scope="session")
def stage_spirv(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("printf_shaders")
    return {stage: compile_stage(stage, folder) for stage in MAINS}


def graphics_argv(spirv: Mapping[str, Path], stages: tuple[str, ...]) -> list[str]:
    argv = ["graphics"]
    for stage in stages:
        argv += [f"--{stage}", str(spirv[stage])]
    return argv


@pytest.fixture(scope="session")
def run_gpuav(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    """Run the app under gpuav (the real pass): its messenger's messages."""
    folder = layer_dir()
    cwd = tmp_path_factory.mktemp("printf_gpuav")

    def run(argv: list[str], extra: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
        environment = app_environment(
            folder,
            instrumenter=None,
            extra={"GPUAV_PRINTF_BUFFER_SIZE": BIG_BUFFER, **(extra or {})},
        )
        done = subprocess.run(
            [sys.executable, str(APP), *argv],
            env=environment, cwd=cwd, capture_output=True, text=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return app_messages(done.stdout)

    return run


@pytest.fixture(scope="session")
def run_khronos(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    """Run the app under the Khronos layer 1.4.309 (GPU-AV and debug printf on)."""
    script = Path(
        os.environ.get("GPUAV_NEWER_KHRONOS")
        or REPOSITORY.parent / "shared" / "tools" / "newer-khronos.sh"
    )
    if not script.exists():
        pytest.fail(f"{script} is missing: it provides the Khronos layer 1.4.309")
    cwd = tmp_path_factory.mktemp("printf_khronos")

    def run(argv: list[str]) -> list[dict[str, Any]]:
        environment = app_environment(
            None,
            extra={"VK_LAYER_PRINTF_ENABLE": "1", "VK_LAYER_PRINTF_BUFFER_SIZE": BIG_BUFFER},
        )
        command = 'source "$0" >/dev/null && nk_vvl14 "$@"'
        done = subprocess.run(
            ["bash", "-c", command, str(script), sys.executable, str(APP), *argv],
            env=environment, cwd=cwd, capture_output=True, text=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        return app_messages(done.stdout)

    return run
