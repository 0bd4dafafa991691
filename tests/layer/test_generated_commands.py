"""vkCmdExecuteGeneratedCommandsEXT under the layer (issue 13, unhooked action commands).

The command runs the bound, instrumented pipeline. ``apps/dgc_app.c`` records an execute of
a single DISPATCH token, a vkCmdDispatch, and another execute (which indexes past the array
with --bad). Before the layer hooked the command, gpuav's descriptor set was unbound for the
first execute and the correct app segfaulted on lavapipe, and the bad index of the second was
reported against the vkCmdDispatch.
"""

from __future__ import annotations

import struct
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APP_TIMEOUT, APPS, AppRun, app_environment, parse_c_output
from tests.layer.test_khronos_below import Runner, newer_khronos, run_stacked  # noqa: F401

pytestmark = pytest.mark.vulkan

OUT_OF_BOUNDS = "GPUAV-descriptor-index-out-of-bounds"
EXECUTE = "vkCmdExecuteGeneratedCommandsEXT"
WORDS = 256
MULTIPLIER = 5

RunDgc = Callable[..., AppRun]


def expected_hash(*, bad: bool) -> str:
    """The app's hash when each (base, buffer, invocations) region ran and the bad one did not."""
    buffers = [list(range(WORDS)), list(range(WORDS))]
    regions = [(0, 0, 64), (64, 1, 128)] + ([] if bad else [(128, 0, 128)])
    for base, which, invocations in regions:
        for i in range(base, base + invocations):
            buffers[which][i] = (buffers[which][i] * MULTIPLIER + i) & 0xFFFFFFFF
    value = 2166136261
    for byte in struct.pack(f"<{2 * WORDS}I", *buffers[0], *buffers[1]):
        value = ((value ^ byte) * 16777619) & 0xFFFFFFFF
    return f"{value:08x}"


@pytest.fixture(scope="session")
def dgc_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compile_c_program(tmp_path_factory.mktemp("dgc_app") / "dgc_app", [APPS / "dgc_app.c"])


@pytest.fixture
def run_dgc(dgc_app: Path, spirv: Callable[[str], Path], tmp_path: Path) -> RunDgc:
    shader = spirv("wild.comp")

    def run(arguments: list[str], layer_folder: Path | None = None, **options: Any) -> AppRun:
        environment = app_environment(layer_folder, **options)
        completed = subprocess.run(
            [str(dgc_app), str(shader), "--messenger", *arguments], env=environment,
            cwd=tmp_path, capture_output=True, text=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        assert completed.returncode == 0, completed.stderr[-4000:]
        return AppRun(0, completed.stdout, completed.stderr, parse_c_output(completed.stdout))

    return run


def gpuav_errors(run: AppRun) -> list[dict[str, Any]]:
    return [m for m in run.messages if m["id"].startswith("GPUAV") and m["severity"] >= 4096]


def test_correct_app_same_result_and_nothing_reported(run_dgc: RunDgc, layer_folder: Path) -> None:
    alone = run_dgc([])
    assert alone.result["hash"] == expected_hash(bad=False)  # the executes did run
    assert int(alone.result["preprocess-size"]) > 0
    layered = run_dgc([], layer_folder, instrumenter=None)
    assert layered.result["hash"] == alone.result["hash"]
    assert gpuav_errors(layered) == []
    assert [m for m in layered.messages if m["id"].startswith("GPUAV-output")] == []


def test_bad_index_in_generated_dispatch_reported_against_it(
    run_dgc: RunDgc, layer_folder: Path
) -> None:
    run = run_dgc(["--bad"], layer_folder, instrumenter=None)
    # the bad region's accesses are skipped; everything else ran
    assert run.result["hash"] == expected_hash(bad=True)
    reported = run.with_id(OUT_OF_BOUNDS)
    assert reported  # a load and a store of data[2]
    assert gpuav_errors(run) == reported
    for message in reported:
        assert "Index of 2 used to index descriptor array of length 2" in message["text"]
        # the third action of the command buffer: the second execute, not the vkCmdDispatch
        assert f"Dispatch Index 2 ({EXECUTE})" in message["text"], message["text"]
        assert "vkCmdDispatch)" not in message["text"]


def test_khronos_layer_below_sees_nothing_from_gpuav(
    run_stacked: Runner,  # noqa: F811  (the fixture imported above)
    spirv: Callable[[str], Path],
    dgc_app: Path,
) -> None:
    """The Khronos layer 1.4.309 beneath gpuav (it knows VK_EXT_device_generated_commands):
    the app is valid alone, and gpuav's binding of its own set for the executes is too."""
    argv = [str(dgc_app), str(spirv("wild.comp")), "--messenger"]
    alone = run_stacked(argv, gpuav=False)
    run = run_stacked(argv)
    assert alone.findings() == Counter()
    assert run.findings() == Counter()
    assert parse_c_output(run.stdout)["hash"] == expected_hash(bad=False)
