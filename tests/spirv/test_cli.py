"""`gpuav dis`: the installed console script prints spirv-dis text, and rejects bad input with 2."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuav.cli import main
from tests.spirv.corpus import CASES, corpus_words, run_tool, to_bytes


def _gpuav() -> str:
    found = shutil.which("gpuav")
    assert found is not None, "the gpuav console script is not installed: pip install -e ."
    return found


def test_console_script_disassembles_a_corpus_shader(tmp_path: Path) -> None:
    words = corpus_words(*CASES[1])
    module = tmp_path / "shader.spv"
    module.write_bytes(to_bytes(words, sys.byteorder))  # type: ignore[arg-type]
    result = subprocess.run([_gpuav(), "dis", str(module)], capture_output=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode() == run_tool("spirv-dis", words)


def test_console_script_rejects_garbage_with_exit_2(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.spv"
    garbage.write_bytes(b"not a SPIR-V module")
    result = subprocess.run([_gpuav(), "dis", str(garbage)], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stdout == ""
    reason = "invalid SPIR-V at byte offset 19: length 19 is not a multiple of 4"
    assert result.stderr == f"gpuav dis: {garbage}: {reason}\n"


def test_options_and_output_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    words = corpus_words(*CASES[0])
    module = tmp_path / "shader.spv"
    module.write_bytes(to_bytes(words, "big"))  # the other byte order reads as well
    output = tmp_path / "shader.spvasm"
    assert main(["dis", str(module), "--raw-id", "--no-header", "-o", str(output)]) == 0
    assert capsys.readouterr().out == ""
    assert output.read_text() == run_tool("spirv-dis", words, "--raw-id", "--no-header")


def test_truncated_module_reports_where(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    words = list(corpus_words(*CASES[0]))
    module = tmp_path / "cut.spv"
    module.write_bytes(to_bytes(words[:-1], "little"))
    assert main(["dis", str(module)]) == 2
    assert "module ends inside a function" in capsys.readouterr().err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["dis", str(tmp_path / "absent.spv")]) == 2
    assert "No such file" in capsys.readouterr().err
