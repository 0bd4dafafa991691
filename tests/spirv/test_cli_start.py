"""Every `gpuav` subcommand whose reader went away (``| head -1``) ends quietly, and a
subcommand imports only the part of gpuav that implements it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuav.cli import COMMANDS, EXIT_BROKEN_PIPE
from tests.shaders.glsl import compile_glsl, words_to_bytes

SHADER = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; } data[4];
layout(push_constant) uniform Push { uint which; } push;
void main() { data[push.which].values[0] = 1u; }
"""


@pytest.fixture(scope="module")
def module_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "shader.spv"
    path.write_bytes(words_to_bytes(compile_glsl(SHADER, "comp")))
    return path


def _arguments(command: str, module: Path) -> list[str]:
    """Arguments that make ``command`` print something on stdout."""
    output = module.with_name(f"{command}.out")
    return {
        "dis": ["dis", str(module)],
        "validate": ["validate", str(module), "--target-env", "vulkan1.0"],
        "interface": ["interface", str(module)],
        "instrument": ["instrument", str(module), "-o", str(output), "--json"],
        "layer-path": ["layer-path"],
        "split-output-structs": ["split-output-structs", str(module), "-o", str(output)],
        "decode": ["decode", str(module), "--shader", str(module)],
        # The child prints nothing: what it would do with a closed stdout is its own affair.
        "run": ["run", "--", sys.executable, "-c", "pass"],
    }[command]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_closed_stdout_ends_the_command_without_a_traceback(
    command: str, module_path: Path
) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first write: every write fails
    try:
        result = subprocess.run(
            [sys.executable, "-m", "gpuav.cli", *_arguments(command, module_path)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in result.stderr, result.stderr
    assert "BrokenPipe" not in result.stderr, result.stderr
    assert result.returncode in (0, 1, 2, EXIT_BROKEN_PIPE), result.stderr


def test_validate_piped_to_head_prints_one_line_and_no_traceback(module_path: Path) -> None:
    pipeline = (
        f"{sys.executable} -m gpuav.cli dis {module_path} | head -1; "
        f"{sys.executable} -m gpuav.cli validate {module_path} --target-env vulkan1.0 | head -1"
    )
    result = subprocess.run(
        ["bash", "-c", pipeline], capture_output=True, text=True, timeout=300, check=False
    )
    assert result.stderr == ""
    assert result.stdout.splitlines()[0] == "; SPIR-V"
    assert len(result.stdout.splitlines()) == 2


def test_validate_imports_neither_the_instrumentation_pass_nor_the_layer(
    module_path: Path,
) -> None:
    probe = (
        "import sys\n"
        "from gpuav.cli import main\n"
        f"status = main(['validate', {str(module_path)!r}])\n"
        "loaded = sorted(name for name in sys.modules if name.startswith('gpuav.'))\n"
        "print(status, ' '.join(loaded))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True
    )
    status, loaded = result.stdout.splitlines()[-1].split(" ", 1)
    assert status == "0", result.stdout
    modules = loaded.split()
    assert "gpuav.validate.api" in modules
    assert not [name for name in modules if name.startswith(("gpuav.instrument", "gpuav.layer"))]
    assert "gpuav.report.shader_info" not in modules  # only needed to describe diagnostics
