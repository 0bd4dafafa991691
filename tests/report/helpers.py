"""Shared helpers for the report tests: real glslang modules and the instructions in them."""

from __future__ import annotations

import struct
import subprocess
import tempfile
from pathlib import Path

from gpuav.spirv.reader import read, words_from_bytes
from tests.shaders.glsl import spirv_val, tool


def instruction_indices(words: list[int], opcode: int) -> list[int]:
    """Indices (origins) of the instructions with ``opcode``, in module order."""
    module = read(words)
    return [index for index, item in enumerate(module.instructions()) if item.opcode == opcode]


def compile_with_source_debug_info(source: str, name: str) -> list[int]:
    """``glslangValidator -gVS``: DebugInfo with the source text embedded in DebugSource.

    tests/shaders/glsl.py knows -g and -gV only; this mode is the one that carries text.
    """
    with tempfile.TemporaryDirectory(prefix="gpuav-report-") as work:
        (Path(work) / name).write_text(source)
        command = [tool("glslangValidator"), "-V", "-gVS", "-o", "out.spv", name]
        result = subprocess.run(command, cwd=work, capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
        words = words_from_bytes((Path(work) / "out.spv").read_bytes())
    spirv_val(words)
    return words


def float_bits(value: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", value))[0])
