"""Building the C test programs (``tests/layer/apps``, ``tests/realworld/programs``) with gcc.

One place for the command: warnings are errors, and ``vk_app_common.h`` (next to this file),
which the programs share, is on the include path.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

COMMON_HEADERS = Path(__file__).parent


def compile_c_program(
    output: Path,
    sources: Sequence[Path],
    *,
    options: Sequence[str] = (),
    libraries: Sequence[str] = ("vulkan",),
) -> Path:
    """``output`` built from ``sources`` against the system's Vulkan headers and loader."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.fail("no C compiler (gcc) found")
    if not Path("/usr/include/vulkan/vulkan.h").exists():
        pytest.fail("Vulkan headers missing (Debian: libvulkan-dev)")
    subprocess.run(
        [compiler, "-O1", "-Wall", "-Werror", f"-I{COMMON_HEADERS}", *options, "-o", str(output),
         *map(str, sources), *(f"-l{library}" for library in libraries)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return output
