"""Real programs that print from shaders, run through ``gpuav run``: a Kompute-style compute
program (its tensors computed as without the layer, each element's line reported) and taichi's
``print`` in a Vulkan kernel, which taichi itself shows on stdout from gpuav's messages as it
does from the Khronos layer's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.layer.conftest import app_environment

PROGRAMS = Path(__file__).parent / "programs"
TIMEOUT = 180
TAICHI_LINES = [f"taichi i = {i} square {i * i} half {i * 0.5:.6f}" for i in range(4)]


def gpuav_run(
    program: str, tmp_path: Path, *options: str, layer: bool = True
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """The program under ``gpuav run OPTIONS --json`` (or alone): its run and the report."""
    report = tmp_path / "report.json"
    command = [sys.executable, str(PROGRAMS / program)]
    if layer:
        command = [sys.executable, "-m", "gpuav.cli", "run", *options, "--json", str(report), "--"]
        command += [sys.executable, str(PROGRAMS / program)]
    environment = app_environment(None)
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(Path(__file__).parents[2]), environment.get("PYTHONPATH", "")])
    )
    done = subprocess.run(
        command, env=environment, cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT
    )
    return done, json.loads(report.read_text()) if layer else {}


def printed(report: dict[str, Any]) -> list[str]:
    return [
        message["text"].split(" | ", 1)[1].rstrip("\n")
        for message in report["messages"]
        if message["id"] == "GPUAV-debug-printf"
    ]


@pytest.mark.vulkan
def test_kompute_style_program_prints_each_element(tmp_path: Path) -> None:
    alone, _ = gpuav_run("kompute_style.py", tmp_path, layer=False)
    done, report = gpuav_run("kompute_style.py", tmp_path, "--printf-only")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1] == alone.stdout.splitlines()[-1] == "[1.0, 6.0, 15.0]"
    assert sorted(printed(report)) == [
        "element 0: 2.0 * 0.5 = 1.00",
        "element 1: 4.0 * 1.5 = 6.00",
        "element 2: 6.0 * 2.5 = 15.00",
    ]
    assert report["errors"] == 0
    message = next(m for m in report["messages"] if m["id"] == "GPUAV-debug-printf")
    assert message["severity"] == "info"
    assert message["action"]["command"] == "vkCmdDispatch"
    assert message["invocation"] == {"stage": "compute"}


@pytest.mark.realworld
@pytest.mark.vulkan
def test_taichi_print_in_a_vulkan_kernel(tmp_path: Path) -> None:
    """Alone, taichi (debug=True) prints through the Khronos layer it loads; under gpuav the
    DebugPrintf is gpuav's (the layer below never sees it) and taichi prints the same."""
    alone, _ = gpuav_run("taichi_print.py", tmp_path, layer=False)
    assert alone.returncode == 0, alone.stderr[-3000:]
    done, report = gpuav_run("taichi_print.py", tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    for run in (alone, done):
        lines = [line for line in run.stdout.splitlines() if line.startswith("taichi i =")]
        assert sorted(lines) == TAICHI_LINES
        assert "result [0, 1, 4, 9]" in run.stdout.splitlines()
    assert sorted(printed(report)) == TAICHI_LINES
    assert report["errors"] == 0
