"""debugPrintfEXT of every conversion in every stage lavapipe runs, through the real layer,
compared line for line with the Khronos layer 1.4.309's debug printf on the same shaders.

The Khronos layer formats a subset (``stage_shaders.SHARED``): for those lines the two must
print the same multiset of lines. The rest (``GPUAV_ONLY``: the ``+ - #`` and space flags,
``%c``, ``%lf``) is compared with glibc's snprintf of the same values.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.printf.conftest import (
    APP,
    GPUAV_PRINTF_ID,
    Runner,
    app_messages,
    gpuav_lines,
    graphics_argv,
    khronos_lines,
)
from tests.printf.stage_shaders import GPUAV_ONLY, SHARED, source

pytestmark = pytest.mark.vulkan

ALL_GRAPHICS = ("vert", "tesc", "tese", "geom", "frag")
STAGE_CODES = {"vert": 0, "tesc": 1, "tese": 2, "geom": 3, "frag": 4, "comp": 5}
LIBC = ctypes.CDLL(None)


def label(format_text: str) -> str:
    """The word after ``s%u`` that names a printf line of ``stage_shaders``."""
    return format_text.strip('"').split()[1]


SHARED_LABELS = {label(text) for text, _ in SHARED}
GPUAV_ONLY_LABELS = {label(text) for text, _ in GPUAV_ONLY}


def printed_label(line: str) -> str:
    return line.split()[1]


def argv_of(case: str, spirv: dict[str, Path]) -> list[str]:
    if case == "compute":
        return ["compute", str(spirv["comp"]), "--groups", "2"]
    if case == "graphics":
        return graphics_argv(spirv, ALL_GRAPHICS)
    return graphics_argv(spirv, ("vert", "frag"))


STAGES_OF = {"compute": ("comp",), "graphics": ALL_GRAPHICS, "vertex-fragment": ("vert", "frag")}


@pytest.mark.parametrize("case", list(STAGES_OF))
def test_every_conversion_in_every_stage_matches_khronos(
    case: str, stage_spirv: dict[str, Path], run_gpuav: Runner, run_khronos: Runner
) -> None:
    argv = argv_of(case, stage_spirv)
    ours = gpuav_lines(run_gpuav(argv))
    theirs = khronos_lines(run_khronos(argv))
    for stage in STAGES_OF[case]:
        printed = {
            printed_label(line) for line in ours if line.startswith(f"s{STAGE_CODES[stage]} ")
        }
        assert printed == SHARED_LABELS | GPUAV_ONLY_LABELS, stage
        khronos_printed = {
            printed_label(line) for line in theirs if line.startswith(f"s{STAGE_CODES[stage]} ")
        }
        assert khronos_printed == SHARED_LABELS, stage
    shared = Counter(line for line in ours if printed_label(line) in SHARED_LABELS)
    comparable = Counter(line for line in theirs if " " in line)
    assert shared == comparable
    # The rest is the Khronos layer's one bad line: its %lf of a double prints only "s<N>".
    bare = Counter(line for line in theirs if " " not in line)
    assert set(bare) <= {f"s{STAGE_CODES[stage]}" for stage in STAGES_OF[case]}


def c_format(text: str, *values: object) -> str:
    buffer = ctypes.create_string_buffer(1024)
    LIBC.snprintf(buffer, len(buffer), text.encode(), *values)
    return buffer.value.decode()


def test_gpuav_only_conversions_equal_c(stage_spirv: dict[str, Path], run_gpuav: Runner) -> None:
    lines = gpuav_lines(run_gpuav(argv_of("compute", stage_spirv)))
    formats = {label(text): text.strip('"') for text, _ in GPUAV_ONLY}
    expected = []
    for x in range(4):
        i, u, f, d = x - 5, x, 1.5 + x, 2.25 + x
        expected += [
            c_format(
                formats["flags"],
                *(ctypes.c_uint(5), *(ctypes.c_int(i),) * 4, ctypes.c_uint(u)),
                *(ctypes.c_uint(u + 8), ctypes.c_uint(u), *(ctypes.c_double(f),) * 3),
            ),
            c_format(formats["char"], ctypes.c_uint(5), ctypes.c_uint(71 + u % 3), 80),
            c_format(formats["l-double"], ctypes.c_uint(5), *(ctypes.c_double(d),) * 3),
        ]
    assert Counter(line for line in lines if printed_label(line) in GPUAV_ONLY_LABELS) == Counter(
        expected
    )


def _source_line(stage: str, text: str) -> int:
    return next(number for number, line in enumerate(source(stage).splitlines(), 1) if text in line)


def test_each_line_names_action_stage_invocation_and_source_line(
    stage_spirv: dict[str, Path], run_gpuav: Runner
) -> None:
    compute = [m["text"] for m in run_gpuav(argv_of("compute", stage_spirv))]
    line = _source_line("comp", '"s%u int ')
    pattern = (
        r"Dispatch Index 0 \(vkCmdDispatch\), Command buffer \(0x[0-9a-f]+\), Compute, "
        rf"global invocation \(3, 0, 0\), \S*printf\.comp line {line} \| s5 int -2 -2 "
    )
    assert sum(1 for text in compute if re.search(pattern, text)) == 1
    graphics = [m["text"] for m in run_gpuav(argv_of("graphics", stage_spirv))]
    line = _source_line("vert", '"s%u uint ')
    expected_prefixes = [
        rf"Draw Index 0 \(vkCmdDraw\), Command buffer \(0x[0-9a-f]+\), Vertex, vertex index 2, "
        rf"instance 0, \S*printf\.vert line {line} \| s0 uint 2 ",
        r"Draw Index 0 \(vkCmdDraw\), .*, Tessellation Control, invocation 1, primitive 0, "
        r"\S*printf\.tesc line \d+ \| s1 ",
        r"Draw Index 0 \(vkCmdDraw\), .*, Tessellation Evaluation, primitive 0, "
        r"\S*printf\.tese line \d+ \| s2 ",
        r"Draw Index 0 \(vkCmdDraw\), .*, Geometry, primitive 0, invocation 0, "
        r"\S*printf\.geom line \d+ \| s3 ",
        r"Draw Index 0 \(vkCmdDraw\), .*, Fragment, fragment \(1\.5, 0\.5\), "
        r"\S*printf\.frag line \d+ \| s4 ",
    ]
    for pattern in expected_prefixes:
        assert any(re.search(pattern, text) for text in graphics), pattern


def test_lines_that_do_not_fit_are_counted_exactly(
    stage_spirv: dict[str, Path], run_gpuav: Runner
) -> None:
    """8 invocations print 12 lines each into 512 bytes: what is printed plus what is counted
    lost is every line, and the warning comes once."""
    messages = run_gpuav(
        ["compute", str(stage_spirv["comp"]), "--groups", "4"],
        {"GPUAV_PRINTF_BUFFER_SIZE": "512"},
    )
    printed = [m for m in messages if m["id"] == GPUAV_PRINTF_ID]
    full = [m for m in messages if m["id"] == "GPUAV-printf-buffer-full"]
    assert len(full) == 1 and printed
    lost = int(re.match(r"(\d+) debugPrintfEXT lines? of Dispatch Index 0", full[0]["text"])[1])
    assert len(printed) + lost == 8 * (len(SHARED) + len(GPUAV_ONLY))
    assert full[0]["severity"] == 0x100
    assert not [m for m in messages if m["id"] == "GPUAV-output-block-full"]


def test_lines_go_to_stdout_when_asked(stage_spirv: dict[str, Path], tmp_path: Path) -> None:
    from gpuav.layer.native.build import layer_dir
    from tests.layer.conftest import app_environment

    environment = app_environment(
        layer_dir(), instrumenter=None, extra={"GPUAV_PRINTF_TO_STDOUT": "1"}
    )
    done = subprocess.run(
        [sys.executable, str(APP), "compute", str(stage_spirv["comp"])],
        env=environment, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert not [m for m in app_messages(done.stdout) if m["id"] == GPUAV_PRINTF_ID]
    lines = [line for line in done.stdout.splitlines() if " | s5 " in line]
    assert len(lines) == 2 * (len(SHARED) + len(GPUAV_ONLY))
    assert any(line.endswith("| s5 no arguments but the stage") for line in lines)
