"""The read-back with frames in flight (``queue_submit``): benchmarks/frame_loop_app.c keeps 3
frames in flight, each waiting only for the fence of the frame 3 back, so gpuav reads each
submission back when the app's wait shows it finished, with a fence of its own that it resets
and reuses. Every frame's records must be reported once (none lost to a reused fence, none read
twice), a correct loop must render what it renders alone, and the Khronos layer beneath must
see nothing wrong in gpuav's own fences (reset while pending, left alive at vkDestroyDevice).
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.apps_common.build import compile_c_program
from tests.layer.conftest import (
    APP_TIMEOUT,
    SHADERS,
    VALIDATION_LAYER,
    app_environment,
    parse_c_output,
)

pytestmark = pytest.mark.vulkan

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
FRAMES, WARMUP = 7, 2  # 9 frames in all: each slot's fence reused twice
BAD_DRAWS = [draw for draw in range(100) if draw % 9 == 8]


@pytest.fixture(scope="module")
def frame_loop(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The app and its shaders: the benchmark's, and the fragment shader with a bad index."""
    folder = tmp_path_factory.mktemp("frame_loop")
    built = {"app": compile_c_program(folder / "frame_loop_app", [BENCHMARKS / "frame_loop_app.c"])}
    sources = {
        "vert": BENCHMARKS / "shaders" / "frame_loop.vert",
        "frag": BENCHMARKS / "shaders" / "frame_loop.frag",
        "bad": SHADERS / "frame_loop_past_array.frag",
        "pushed": BENCHMARKS / "shaders" / "frame_loop_pushed.frag",
        "pushed_bad": SHADERS / "frame_loop_pushed_past_array.frag",
    }
    for name, source in sources.items():
        built[name] = folder / f"{name}.spv"
        subprocess.run(
            ["glslangValidator", "-V", "-g", "--target-env", "vulkan1.1", "-o", str(built[name]),
             str(source)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
    return built


def run_loop(
    frame_loop: dict[str, Path],
    fragment: str,
    tmp_path: Path,
    layer_folder: Path | None,
    push2: bool = False,
    **options: Any,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the app's figures, its parsed messages) for 8x8 targets; ``push2``: each draw's index
    pushed with vkCmdPushConstants2KHR."""
    completed = subprocess.run(
        [str(frame_loop["app"]), str(frame_loop["vert"]), str(frame_loop[fragment]),
         "--frames", str(FRAMES), "--warmup", str(WARMUP), "--width", "8", "--height", "8",
         "--print-messages", "1", "--push2", str(int(push2))],
        env=app_environment(layer_folder, **options), cwd=tmp_path,
        capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    figures = json.loads(completed.stdout.splitlines()[-1])
    assert completed.returncode == (1 if figures["errors"] else 0), completed.stderr[-4000:]
    return figures, parse_c_output("\n".join(completed.stdout.splitlines()[:-1]))


def test_every_frame_reports_its_bad_draws_once(
    frame_loop: dict[str, Path], tmp_path: Path, layer_folder: Path
) -> None:
    figures, output = run_loop(frame_loop, "bad", tmp_path, layer_folder, instrumenter=None)
    messages = output["messages"]
    assert {m["id"] for m in messages} == {"GPUAV-descriptor-index-out-of-bounds"}
    assert figures["errors"] == len(messages) == (FRAMES + WARMUP) * len(BAD_DRAWS)
    draws = Counter(int(m["text"].split("Draw Index ")[1].split(" ")[0]) for m in messages)
    assert draws == {draw: FRAMES + WARMUP for draw in BAD_DRAWS}
    assert all("frame_loop_past_array.frag line 21" in m["text"] for m in messages)


def test_correct_loop_renders_as_alone_and_khronos_beneath_sees_nothing(
    frame_loop: dict[str, Path], tmp_path: Path, layer_folder: Path
) -> None:
    alone, _ = run_loop(frame_loop, "frag", tmp_path, None)
    checked, output = run_loop(
        frame_loop, "frag", tmp_path, layer_folder, instrumenter=None, layers=[VALIDATION_LAYER]
    )
    assert alone["errors"] == 0
    assert checked["errors"] == 0, output["messages"][:3]
    assert checked["checksum"] == alone["checksum"]


def test_a_pushed_index_is_decided_draw_by_draw(
    frame_loop: dict[str, Path], tmp_path: Path, layer_folder: Path
) -> None:
    """The first texture is picked by a pushed index the shader does not bound itself: the
    layer works each draw's verdict out from the value pushed for it. The draws that stay in
    the array run unchecked and render as alone; each of the others runs its checks and
    reports, in every frame."""
    alone, _ = run_loop(frame_loop, "pushed", tmp_path, None)
    checked, output = run_loop(frame_loop, "pushed", tmp_path, layer_folder, instrumenter=None)
    assert checked["errors"] == 0, output["messages"][:3]
    assert checked["checksum"] == alone["checksum"]
    _, output = run_loop(frame_loop, "pushed_bad", tmp_path, layer_folder, instrumenter=None)
    messages = output["messages"]
    assert {m["id"] for m in messages} == {"GPUAV-descriptor-index-out-of-bounds"}
    draws = Counter(int(m["text"].split("Draw Index ")[1].split(" ")[0]) for m in messages)
    assert draws == {draw: FRAMES + WARMUP for draw in range(64, 100)}


def test_push_constants2_are_followed(
    frame_loop: dict[str, Path], tmp_path: Path, layer_folder: Path
) -> None:
    """Each draw pushes index 0 with vkCmdPushConstants, then its own with
    vkCmdPushConstants2KHR: a layer that missed the second would decide every draw from index
    0, run the draws past the array unchecked, and report none of them."""
    _, output = run_loop(
        frame_loop, "pushed_bad", tmp_path, layer_folder, instrumenter=None, push2=True
    )
    messages = output["messages"]
    draws = Counter(int(m["text"].split("Draw Index ")[1].split(" ")[0]) for m in messages)
    assert draws == {draw: FRAMES + WARMUP for draw in range(64, 100)}
