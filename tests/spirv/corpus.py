"""Corpus modules for the SPIR-V core tests, and the SPIRV-Tools programs they compare with.

Each corpus shader is compiled three ways (no debug info, ``-g``, ``-gV``); glsl.py caches the
results on disk, so only the first run spawns the compiler. A missing tool fails the test.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
import tempfile
from array import array
from pathlib import Path
from typing import Literal

from tests.shaders.glsl import DEBUG_MODES, DebugMode, corpus_shaders

CASES: list[tuple[str, DebugMode]] = [
    (shader.name, debug) for shader in corpus_shaders() for debug in DEBUG_MODES
]
CASE_IDS: list[str] = [f"{name}-{debug}" for name, debug in CASES]


@functools.cache
def corpus_words(name: str, debug: DebugMode) -> tuple[int, ...]:
    """The module for one corpus shader and debug mode (a tuple: shared between tests)."""
    shader = next(shader for shader in corpus_shaders() if shader.name == name)
    return tuple(shader.compile(debug))


def all_corpus_words() -> list[tuple[int, ...]]:
    return [corpus_words(name, debug) for name, debug in CASES]


def tool(name: str) -> str:
    found = shutil.which(name)
    assert found is not None, f"{name} is not on PATH: install spirv-tools (tests fail, not skip)"
    return found


def to_bytes(words: list[int] | tuple[int, ...], byteorder: Literal["little", "big"]) -> bytes:
    return b"".join(word.to_bytes(4, byteorder) for word in words)


def run_tool(name: str, words: list[int] | tuple[int, ...], *options: str) -> str:
    """stdout of a SPIRV-Tools program given the module as a file; asserts that it succeeded."""
    with tempfile.TemporaryDirectory(prefix="gpuav-spirv-") as work:
        path = Path(work) / "module.spv"
        path.write_bytes(to_bytes(words, sys.byteorder))
        result = subprocess.run(
            [tool(name), *options, str(path)], capture_output=True, text=True, check=False
        )
    assert result.returncode == 0, f"{name} {' '.join(options)} failed:\n{result.stderr}"
    return result.stdout


def assemble(text: str, target_env: str = "spv1.4", *options: str) -> list[int]:
    """spirv-as on assembly text (``options``: more spirv-as flags)."""
    with tempfile.TemporaryDirectory(prefix="gpuav-spirv-") as work:
        source, output = Path(work) / "module.spvasm", Path(work) / "module.spv"
        source.write_text(text)
        result = subprocess.run(
            [
                tool("spirv-as"),
                "--target-env",
                target_env,
                *options,
                str(source),
                "-o",
                str(output),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"spirv-as failed:\n{result.stderr}"
        data = output.read_bytes()
    return array("I", data).tolist()  # spirv-as writes host byte order
