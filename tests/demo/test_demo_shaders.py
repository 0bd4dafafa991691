"""The demo ships compiled SPIR-V; it must be what its GLSL compiles to today."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_shipped_demo_shaders_are_fresh() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "build_demo_shaders.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr


def test_demo_runs_correctly_without_gpuav() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "gpuav.demo", "--correct"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "particle 11 -> (0.0, 0.0, 1.0, 1.0)" in result.stdout
    assert "center pixel RGBA = (0, 0, 230, 255)" in result.stdout
