"""The layer under application patterns the other apps do not use (``apps/wild_*.c``): push
descriptors, update templates, pipeline caches and derivatives, specialization constants (one
sizes the descriptor array: checks must use the specialized length), 10k dispatches, one-time
and simultaneous-use command buffers, empty and semaphore-only submits, wait-before-signal on
a timeline semaphore, two threads (recording; submitting and reading back), shader objects,
two devices, two instances, dynamic rendering, indirect-count, multi and mesh draws,
tessellation and geometry (with descriptor arrays), multiview, graphics pipeline libraries
(also by maintenance5 flags), objects left alive at exit.

Every run must complete with the results of the app alone; a real out-of-bounds index must be
reported; the Khronos layer beneath must see nothing from us that the app alone does not cause,
also when the app passes host allocation callbacks.
Scenarios are batched into few app runs to keep the suite fast.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.apps_common.build import compile_c_program
from tests.layer.conftest import (
    APP_TIMEOUT,
    APPS,
    VALIDATION_LAYER,
    AppRun,
    app_environment,
    parse_c_output,
)
from tests.layer.conftest import SHADERS as SHADER_SOURCES

pytestmark = pytest.mark.vulkan

SHADERS = ["wild.comp", "wild.tesc", "wild.tese", "wild.geom", "wild_view.frag", "quad.vert",
           "quad.frag", "quad_reporting.frag", "wild_index.tese", "wild_index.geom"]  # fmt: skip
COMPUTE = ["compute", "many", "threads", "second-device", "second-instance",
           "wait-before-signal", "wait-before-signal-empty", "threads-timeline"]  # fmt: skip
GRAPHICS = ["dynamic-rendering", "geometry-tessellation", "tessellation-indexed", "multiview",
            "library", "multi-draw", "mesh"]  # fmt: skip
OUT_OF_BOUNDS = "GPUAV-descriptor-index-out-of-bounds"

RunWild = Callable[..., tuple[AppRun, list[tuple[str, str]]]]


@pytest.fixture(scope="session")
def wild_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    names = ("wild_main.c", "wild_app.c", "wild_graphics.c", "wild_sync.c")
    return compile_c_program(
        tmp_path_factory.mktemp("wild_app") / "wild_app",
        [APPS / name for name in names],
        libraries=("vulkan", "pthread"),
    )


@pytest.fixture
def run_wild(wild_app: Path, spirv: Callable[[str], Path], tmp_path: Path) -> RunWild:
    """Run wild_app; returns the run and its ``(scenario, hash)`` lines in order."""
    compiled = [spirv(name) for name in SHADERS]  # all into one folder, named NAME.spv
    folder = compiled[0].parent
    mesh = folder / "wild.mesh.spv"  # mesh shaders need SPIR-V 1.4
    if not mesh.exists():
        subprocess.run(
            ["glslangValidator", "-V", "--target-env", "vulkan1.2", "-o", str(mesh),
             str(SHADER_SOURCES / "wild.mesh")],
            check=True, capture_output=True, text=True,
        )  # fmt: skip

    def run(
        arguments: list[str], layer_folder: Path | None = None, **options: Any
    ) -> tuple[AppRun, list[tuple[str, str]]]:
        environment = app_environment(layer_folder, **options)
        completed = subprocess.run(
            [str(wild_app), str(folder), *arguments], env=environment, cwd=tmp_path,
            capture_output=True, text=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        assert completed.returncode == 0, completed.stderr[-4000:]
        hashes = [
            (name, value)
            for name, _, value in (line.partition(" ") for line in completed.stdout.splitlines())
            if name and name != "message"
        ]
        result = parse_c_output(completed.stdout)
        return AppRun(0, completed.stdout, completed.stderr, result), hashes

    return run


def test_results_unchanged_and_nothing_reported(run_wild: RunWild, layer_folder: Path) -> None:
    scenarios = [*COMPUTE, "shader-object", *GRAPHICS, "library-flags2"]
    _, alone = run_wild(scenarios)
    assert [name for name, _ in alone] == [
        "compute", "many", "threads", "compute", "compute", "compute", "compute",
        "wait-before-signal",
        "wait-before-signal-empty", "threads-timeline", "shader-object", *GRAPHICS,
        "library-flags2",
    ]  # fmt: skip
    # --leak 1: the app forgets every object but its devices and instance
    run, layered = run_wild(
        ["--messenger", "--leak", "1", *scenarios], layer_folder, instrumenter=None
    )
    assert layered == alone
    assert run.with_id(OUT_OF_BOUNDS) == []
    assert [m for m in run.messages if m["id"].startswith("GPUAV") and m["severity"] >= 4096] == []
    # the six library pipelines and the shader object are checked (nothing said)
    assert [m for m in run.messages if "library" in m["id"]] == []
    assert [m for m in run.messages if "shader-object" in m["id"]] == []


def test_out_of_bounds_reported_when_output_memory_runs_out(
    run_wild: RunWild, layer_folder: Path
) -> None:
    """No second output chunk can be had: 20k dispatches share the spill block, the app still
    finishes with the results of the bug-free dispatches, the first bad one is reported. The
    app's only messenger is chained to VkInstanceCreateInfo, which covers instance creation
    and destruction only (the Khronos layer too then logs to its default output), so reports
    go to stderr; the app forgets its device and instance."""
    run, hashes = run_wild(
        ["--chained-messenger", "--leak", "2", "--bad", "3", "many"], layer_folder,
        instrumenter=None,
        extra={"GPUAV_TEST_FAULTS": "output_chunk", "GPUAV_BLOCKS_PER_CHUNK": "64"},
    )  # fmt: skip
    assert [name for name, _ in hashes] == ["many"]
    assert [m for m in run.messages if m["id"].startswith("GPUAV")] == []
    assert "GPUAV-resources-exhausted" in run.stderr
    assert "Index of 2 used to index descriptor array of length 2." in run.stderr
    assert "Descriptor: data (block Data), set 0, binding 0." in run.stderr
    assert "Dispatch Index 3 (vkCmdDispatch)" in run.stderr  # the fourth dispatch, counted from 0
    assert (
        "Action: unknown action (output blocks ran out, or a command gpuav does not hook)."
        in run.stderr
    )
    # no VK_EXT_debug_utils at all: the report still reaches stderr
    bare, _ = run_wild(["--bad", "3", "compute"], layer_folder, instrumenter=None)
    assert "Index of 2 used to index descriptor array of length 2." in bare.stderr
    assert bare.messages == []


def test_shader_objects_get_output_blocks_of_their_own(
    run_wild: RunWild, layer_folder: Path
) -> None:
    """16 dispatches with an instrumented pipeline, then 16 with an instrumented shader object
    (specialized, with a push-constant range of its own) bound in its place, the fourth of each
    indexing past its array: each dispatch gets a block (32, and the spill block, fill one
    chunk of 33) and each error names its own shader. Before vkCmdBindShadersEXT was hooked,
    the stale pipeline gave the shader object's dispatches its blocks."""
    run, hashes = run_wild(
        ["--messenger", "--bad", "3", "shader-object"], layer_folder, instrumenter=None,
        extra={"GPUAV_TEST_FAULTS": "output_chunk", "GPUAV_BLOCKS_PER_CHUNK": "33"},
    )  # fmt: skip
    assert [name for name, _ in hashes] == ["shader-object"]
    assert run.with_id("GPUAV-resources-exhausted") == []
    assert run.with_id("GPUAV-shader-object-unchecked") == []
    # The bad dispatch's load and store, once with the pipeline, once with the shader object.
    texts = [m["text"] for m in run.with_id(OUT_OF_BOUNDS)]
    assert len(texts) == 4
    assert all("Dispatch Index 3 (vkCmdDispatch)" in t and "Pipeline (" in t for t in texts[:2])
    assert all("Dispatch Index 19 (vkCmdDispatch)" in t for t in texts[2:])
    assert all("Shader Object (0x" in t and "Pipeline" not in t for t in texts[2:])


def test_wait_before_signal_does_not_deadlock(run_wild: RunWild, layer_folder: Path) -> None:
    """A submission waits on a timeline value the host signals after a second submission to
    the same queue. Waiting for the queue inside the second vkQueueSubmit hung forever; now
    it is deferred like the first, and both command buffers' errors are reported. In the
    -empty variant the first submission is the wait alone, with nothing to read: it must still
    hold later submissions back."""
    scenarios = ["wait-before-signal", "wait-before-signal-empty"]
    run, hashes = run_wild(
        ["--messenger", "--bad", "3", *scenarios], layer_folder, instrumenter=None
    )
    assert [name for name, _ in hashes] == scenarios
    # messages come before their scenario's hash line: both command buffers of each reported
    command_buffers: list[set[str]] = [set()]
    for line in run.stdout.splitlines():
        if line.startswith("wait-before-signal"):
            command_buffers.append(set())
        elif OUT_OF_BOUNDS in line:
            assert "Dispatch Index 3 (vkCmdDispatch)" in line
            command_buffers[-1].add(line.split("Command buffer (")[1].split(")")[0])
    assert [len(handles) for handles in command_buffers] == [2, 2, 0]


@pytest.mark.parametrize(
    ("scenario", "leak"),
    [("wait-semaphores", "0"), ("wait-semaphores", "2"), ("submit-and-exit", "2")],
    ids=["wait-semaphores", "wait-semaphores-then-exit", "exit-without-waiting"],
)
def test_deferred_submission_loses_no_record(
    run_wild: RunWild, layer_folder: Path, scenario: str, leak: str
) -> None:
    """A submission that waits on a timeline value signalled later is deferred. The app learns
    of its completion only through vkWaitSemaphores, or not at all, and may exit without
    vkDestroyDevice (--leak 2). Its bad dispatch's two errors (load and store) are reported
    all the same, at the wait or at exit; before, the records were lost."""
    run, hashes = run_wild(
        ["--messenger", "--leak", leak, "--bad", "3", scenario], layer_folder, instrumenter=None
    )
    assert [name for name, _ in hashes] == [scenario]
    messages = run.with_id(OUT_OF_BOUNDS)
    assert len(messages) == 2
    for message in messages:
        assert "Dispatch Index 3 (vkCmdDispatch)" in message["text"]


def test_failing_fence_of_a_deferred_submission_degrades(
    run_wild: RunWild, layer_folder: Path
) -> None:
    """gpuav's own fence for a deferred submission cannot be created (out of memory): the app
    runs on with one GPUAV-resources-exhausted notice, not an internal error."""
    run, hashes = run_wild(
        ["--messenger", "wait-semaphores"], layer_folder, instrumenter=None,
        extra={"GPUAV_TEST_FAULTS": "vkCreateFence:1"},
    )  # fmt: skip
    assert [name for name, _ in hashes] == ["wait-semaphores"]
    (exhausted,) = run.with_id("GPUAV-resources-exhausted")
    assert "vkQueueSubmit" in exhausted["text"]
    assert run.with_id("GPUAV-internal-error") == []


def test_extension_draws_are_actions(run_wild: RunWild, layer_folder: Path) -> None:
    """vkCmdDrawMultiEXT and vkCmdDrawMeshTasksEXT (and the other extension draws) get their
    own output block: the fragment shader's record is reported for the right draw, the image
    is unchanged. Before, the first draw of a command buffer found no descriptor bound at
    GPU-AV's set."""
    _, alone = run_wild(["multi-draw", "mesh"])
    run, hashes = run_wild(["--messenger", "multi-draw-reporting", "mesh-reporting"], layer_folder)
    assert [value for _, value in hashes] == [value for _, value in alone]
    messages = run.with_id(OUT_OF_BOUNDS)
    commands = ["vkCmdDrawMultiEXT", "vkCmdDrawMeshTasksEXT"]
    assert len(messages) == len(commands)
    for message, command in zip(messages, commands, strict=True):
        assert "Index of 9 used to index descriptor array of length 8." in message["text"]
        assert f"Draw Index 1 ({command})." in message["text"]
        assert "Stage = Fragment. Fragment coord (x,y) = (5.5, 2.5)." in message["text"]


def test_tessellation_and_geometry_errors_reported(run_wild: RunWild, layer_folder: Path) -> None:
    """The real pass in tessellation evaluation and geometry shaders: draw 1 indexes a
    two-buffer uniform array with 2 and 3; both are reported with their stage words."""
    run, hashes = run_wild(
        ["--messenger", "--bad", "1", "tessellation-indexed"], layer_folder, instrumenter=None
    )
    assert [name for name, _ in hashes] == ["tessellation-indexed"]
    texts = [m["text"] for m in run.with_id(OUT_OF_BOUNDS)]
    assert len(texts) == 2
    tese = next(text for text in texts if "Index of 2 used" in text)
    geom = next(text for text in texts if "Index of 3 used" in text)
    for text in (tese, geom):
        assert "descriptor array of length 2." in text
        assert "Descriptor: tints (block Tint), set 0, binding 0." in text
        assert "Draw Index 1 (vkCmdDraw)." in text
    assert "Stage = Tessellation Evaluation. Primitive ID = " in tese
    assert "Stage = Geometry. Primitive ID = " in geom and "Invocation ID = 0." in geom


def test_out_of_bounds_draw_after_compute_does_not_crash(
    run_wild: RunWild, layer_folder: Path
) -> None:
    """Regression: every lane of the bad draw indexes past the array, so the guard skips the
    load in all of them, yet lavapipe still fetched the descriptor of lane 0's index (2 and 3
    of 2): memory past the descriptor set, stale and non-zero once the compute scenario had
    freed its buffers, and the instrumented tessellation shader dereferenced it (SIGSEGV).
    The guarded load now indexes with a safe index."""
    run, hashes = run_wild(
        ["--messenger", "--bad", "1", "compute", "tessellation-indexed"], layer_folder,
        instrumenter=None,
    )  # fmt: skip
    assert [name for name, _ in hashes] == ["compute", "tessellation-indexed"]
    draws = [m["text"] for m in run.with_id(OUT_OF_BOUNDS) if "(vkCmdDraw)" in m["text"]]
    assert sorted(text.split(" used")[0] for text in draws) == ["Index of 2", "Index of 3"]
    assert all("Draw Index 1 (vkCmdDraw)." in text for text in draws)


def test_two_threads_reading_back_deferred_submissions(
    run_wild: RunWild, layer_folder: Path
) -> None:
    """Two threads submit 40 times each with a timeline wait (deferred read-back) and wait on
    their own fences: read-backs run from both threads at once. Before a lock, one fence was
    destroyed twice (a segmentation fault in 3 runs of 4) or an entry was lost."""
    run, hashes = run_wild(
        ["--messenger", "--bad", "3", "threads-timeline"], layer_folder, instrumenter=None
    )
    assert [name for name, _ in hashes] == ["threads-timeline"]
    # every execution's two bad accesses: 2 threads x 40 submissions x 2 instructions
    assert len(run.with_id(OUT_OF_BOUNDS)) == 160


def test_under_khronos_validation(run_wild: RunWild, layer_folder: Path) -> None:
    """Stacked beneath gpuav, the Khronos layer reports the same as for the app alone (its
    1.3.239 release knows no shader objects or maintenance5, so those scenarios are left
    out). The app alone
    runs without its bug, which crashes lavapipe unchecked."""
    scenarios = ["compute", "threads", "second-device", "second-instance", "wait-before-signal",
                 "threads-timeline", *GRAPHICS]  # fmt: skip
    layers = [VALIDATION_LAYER]
    options = ["--messenger", "--allocator"]  # host allocation callbacks on every call
    alone, alone_hashes = run_wild([*options, *scenarios], layers=layers)
    run, hashes = run_wild(
        [*options, "--bad", "3", *scenarios], layer_folder, instrumenter=None, layers=layers
    )
    assert sorted(m["id"] for m in run.validation_errors()) == sorted(
        m["id"] for m in alone.validation_errors()
    )
    assert [name for name, _ in hashes] == [name for name, _ in alone_hashes]
    assert ("live-allocations", "0") in hashes  # everything given back through the callbacks
    reported = run.with_id(OUT_OF_BOUNDS)
    assert reported and all("array of length 2" in m["text"] for m in reported)


def test_vulkaninfo_passes_through(layer_folder: Path, tmp_path: Path) -> None:
    """``gpuav run -- vulkaninfo --summary`` and ``--json`` (which writes a profile file)."""
    environment = app_environment(None)
    outputs = []
    for arguments in (["--summary"], ["--json"]):
        done = subprocess.run(
            [sys.executable, "-m", "gpuav.cli", "run", "--", "vulkaninfo", *arguments],
            env=environment, cwd=tmp_path, capture_output=True, text=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-4000:]
        assert "Traceback" not in done.stderr and "GPUAV-" not in done.stderr
        outputs.append(done.stdout)
    assert "deviceName" in outputs[0] and "VK_LAYER_GPUAV_gpu_assisted" in outputs[0]
    (written,) = tmp_path.glob("VP_VULKANINFO_*.json")
    assert "capabilities" in json.loads(written.read_text())
