"""vkcube (Debian's vulkan-tools) for 50 frames in Xvfb, alone and under gpuav: exit 0, the
same last frame on the screen (pixels read from an ``xwd`` screenshot taken once vkcube waits
for its device at tear-down, by ``programs/capture_at_close.c``; taken when it destroyed its
window, after its swapchain, the screen showed the last frame or the one before, about 1 run in
4 with or without the layer), no error from gpuav. vkcube asks for
Vulkan 1.0 (issue 13, item 9)."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest

from tests.realworld.conftest import RunProgram, assert_layer_changes_nothing, compile_c

pytestmark = [pytest.mark.realworld, pytest.mark.vulkan]

FRAMES = 50
SCREEN = "-screen 0 640x480x24"
XWD_HEADER_FIELDS = 25


@pytest.fixture(scope="module")
def capture_shim(tmp_path_factory: pytest.TempPathFactory) -> Path:
    for tool in ("xvfb-run", "Xvfb", "xauth", "xwd", "vkcube"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing (Debian: xvfb, xauth, x11-apps, vulkan-tools)")
    return compile_c(tmp_path_factory, "capture_at_close.c", shared=True)


def xwd_pixels(data: bytes) -> bytes:
    """The pixel rows of an XWD file, without its header and colour map."""
    fields = struct.unpack(f">{XWD_HEADER_FIELDS}I", data[: XWD_HEADER_FIELDS * 4])
    header_size, height, bytes_per_line, colors = fields[0], fields[5], fields[12], fields[19]
    start = header_size + colors * 12
    return data[start : start + height * bytes_per_line]


def test_vkcube_draws_the_same_frames_under_gpuav(
    run_program: RunProgram, capture_shim: Path
) -> None:
    command = [
        "xvfb-run", "-a", "-s", SCREEN,
        "env", f"LD_PRELOAD={capture_shim}",
        "CAPTURE_COMMAND=xwd -root -silent -out {out}/screen.xwd",
        "vkcube", "--c", str(FRAMES), "--suppress_popups",
    ]  # fmt: skip
    alone = run_program(command, layered=False)
    layered = run_program(command, layered=True)
    for run in (alone, layered):
        if "screen.xwd" in run.outputs:
            run.outputs["screen.xwd"] = xwd_pixels(run.outputs["screen.xwd"])
    assert "screen.xwd" in alone.outputs, alone.summary()
    pixels = alone.outputs["screen.xwd"]
    assert len({pixels[i : i + 4] for i in range(0, len(pixels), 4)}) > 100, "no cube drawn"
    assert_layer_changes_nothing(alone, layered)
