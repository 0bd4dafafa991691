"""Runs real third-party Vulkan programs (``programs/``) twice, alone and under gpuav, each in
its own process group with a time limit, and compares what they computed.

A program writes its results as raw files into the folder given as its first argument (or,
for C programs, as lines on stdout); the run under gpuav must finish, load the layer, write
the same bytes and get no error message from gpuav (read from the layer's message log,
``GPUAV_MESSAGE_LOG``, the file ``gpuav run`` reads too).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.apps_common.build import compile_c_program
from tests.layer.conftest import app_environment, layer_folder, spirv  # noqa: F401  (fixtures)

PROGRAMS = Path(__file__).parent / "programs"
RUN_TIMEOUT = 120
LAYER_INSERTED = 'Inserted device layer "VK_LAYER_GPUAV_gpu_assisted"'
LOADER_LINE = re.compile(r"^(\w+ \| )?\w+:  |^\s*$")  # VK_LOADER_DEBUG's lines


@dataclass
class ProgramRun:
    command: list[str]
    returncode: int | None  # None: killed at its time limit
    stdout: str = field(repr=False)
    stderr: str = field(repr=False)
    outputs: dict[str, bytes] = field(repr=False)
    messages: list[dict[str, Any]] = field(repr=False)

    def summary(self) -> str:
        status = f"exit {self.returncode}" if self.returncode is not None else "killed (time limit)"
        own_lines = [line for line in self.stderr.splitlines() if not LOADER_LINE.match(line)]
        stderr = "\n".join(own_lines)[-3000:]
        return f"{' '.join(self.command)}: {status}\n--- stderr without the loader's ---\n{stderr}"

    def gpuav_errors(self) -> list[dict[str, Any]]:
        return [message for message in self.messages if message.get("severity") == "error"]

    def result_lines(self) -> list[str]:
        """A C program's results: its stdout lines that are not messages."""
        return [line for line in self.stdout.splitlines() if line.strip()]


RunProgram = Callable[..., ProgramRun]


@pytest.fixture
def run_program(layer_folder: Path, tmp_path: Path) -> RunProgram:  # noqa: F811
    """``run_program(command, layered=..., timeout=..., extra=...)``; ``{out}`` in the command
    is replaced by the run's output folder."""
    counter = iter(range(1_000_000))

    def run(
        command: Sequence[str],
        *,
        layered: bool,
        timeout: float = RUN_TIMEOUT,
        extra: dict[str, str] | None = None,
    ) -> ProgramRun:
        folder = tmp_path / f"{'layered' if layered else 'alone'}-{next(counter)}"
        output = folder / "out"
        output.mkdir(parents=True)
        log = folder / "gpuav-messages.jsonl"
        extra_environment = dict(extra or {})
        if layered:
            extra_environment |= {"GPUAV_MESSAGE_LOG": str(log), "VK_LOADER_DEBUG": "layer"}
        environment = app_environment(
            layer_folder if layered else None, instrumenter=None, extra=extra_environment
        )
        arguments = [part.replace("{out}", str(output)) for part in command]
        returncode, stdout, stderr = _run_in_own_group(arguments, environment, folder, timeout)
        outputs = {path.name: path.read_bytes() for path in sorted(output.iterdir())}
        return ProgramRun(arguments, returncode, stdout, stderr, outputs, _read_log(log))

    return run


def _run_in_own_group(
    command: list[str], environment: dict[str, str], cwd: Path, timeout: float
) -> tuple[int | None, str, str]:
    """Kill the whole group at the time limit: a hung program may have children (Xvfb)."""
    process = subprocess.Popen(
        command, env=environment, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, errors="replace", start_new_session=True,
    )  # fmt: skip
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        return process.returncode, stdout, stderr
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        return None, stdout, stderr


def _read_log(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    messages = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            messages.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return messages


def python_program(name: str, *arguments: str) -> list[str]:
    return [sys.executable, str(PROGRAMS / name), "{out}", *arguments]


def assert_works_alone(alone: ProgramRun) -> None:
    """The program itself must work on this machine, or the comparison means nothing."""
    assert alone.returncode == 0, f"fails without gpuav: {alone.summary()}"


def assert_layer_changes_nothing(
    alone: ProgramRun, layered: ProgramRun, *, compare_stdout: bool = False
) -> None:
    """Completion, the layer really loaded, identical results, no error from gpuav."""
    assert_works_alone(alone)
    assert alone.outputs or compare_stdout, f"no results written: {alone.summary()}"
    assert layered.returncode == 0, f"fails under gpuav: {layered.summary()}"
    assert LAYER_INSERTED in layered.stderr, f"gpuav was not loaded: {layered.summary()}"
    differing = sorted(
        name for name in alone.outputs.keys() | layered.outputs.keys()
        if alone.outputs.get(name) != layered.outputs.get(name)
    )  # fmt: skip
    assert differing == [], f"results differ under gpuav: {differing}"
    if compare_stdout:
        assert layered.result_lines() == alone.result_lines()
    assert layered.gpuav_errors() == [], f"gpuav reported errors: {layered.gpuav_errors()}"


def compile_c(
    tmp_path_factory: pytest.TempPathFactory, source: str, *, shared: bool = False
) -> Path:
    """A program of ``programs/`` built with gcc against the system's Vulkan loader."""
    name = Path(source).stem
    output = tmp_path_factory.mktemp(name) / (f"{name}.so" if shared else name)
    shape = ["-shared", "-fPIC"] if shared else []
    return compile_c_program(output, [PROGRAMS / source], options=shape, libraries=("vulkan", "dl"))


@pytest.fixture(scope="session")
def lifecycle_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``programs/lifecycle.c``: instances re-created, Vulkan calls from ``atexit``."""
    return compile_c(tmp_path_factory, "lifecycle.c")
