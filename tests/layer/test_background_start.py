"""A C host's first vkCreateInstance goes down the chain while the layer's interpreter starts on
a thread of its own (layer.c): the instance is handed to Python afterwards with a copy of its
create info, and every call that needs Python waits for it. These tests hold that path to what
the start on the app's thread (``GPUAV_BACKGROUND_START=0``) does, at every point of a
process's life: settings chained to the instance, a 1.0 app, a program that ends or forks
right after vkCreateInstance.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.layer.conftest import REPOSITORY, AppRun, RunC

pytestmark = pytest.mark.vulkan

SHADERS = ("region.comp", "quad.vert", "quad.frag")
ON_THE_APP_THREAD = {"GPUAV_BACKGROUND_START": "0"}
SLOW_SITE_SECONDS = 3.0


def checks(run: AppRun) -> tuple[object, ...]:
    """What a run found and computed, in a form two runs can be compared by."""
    result = run.result
    return (
        result["compute"],
        result["pixels"],
        result["maxBoundDescriptorSets"],
        sorted((message["id"], message["text"]) for message in run.messages),
    )


@pytest.mark.parametrize(
    "how", [["--layer-settings"], ["--validation-features"]], ids=["layer-settings", "features"]
)
def test_what_the_instance_asks_for_reaches_python_started_in_the_background(
    run_c_app: RunC, layer_folder: Path, how: list[str]
) -> None:
    """GPU-AV turned on only by the create info's chain (no environment), which layer.c copies
    for the Python side to read after vkCreateInstance has returned."""
    bad = ["--messenger", "--bad-dispatch", "1", "--bad-draw", "0"]
    arguments = [*how, *bad]
    without = run_c_app(SHADERS, bad)
    background = run_c_app(SHADERS, arguments, layer_folder, enable=False)
    on_app_thread = run_c_app(
        SHADERS, arguments, layer_folder, enable=False, extra=ON_THE_APP_THREAD
    )
    assert checks(background) == checks(on_app_thread)
    assert background.validation_errors, "the bad dispatch and draw went unreported"
    assert (background.result["compute"], background.result["pixels"]) == (
        without.result["compute"], without.result["pixels"],
    )  # fmt: skip
    reserved = int(without.result["maxBoundDescriptorSets"]) - 1
    expected = reserved if how == ["--layer-settings"] else reserved + 1
    assert int(background.result["maxBoundDescriptorSets"]) == expected


def test_an_app_asking_for_vulkan_1_0_is_raised_to_1_1_and_checked(
    run_c_app: RunC, layer_folder: Path
) -> None:
    """Raising the version changes what goes down, so that instance waits for the settings."""
    arguments = ["--api-1-0", "--messenger", "--bad-dispatch", "0"]
    run = run_c_app(SHADERS, arguments, layer_folder)
    on_app_thread = run_c_app(SHADERS, arguments, layer_folder, extra=ON_THE_APP_THREAD)
    assert checks(run) == checks(on_app_thread)
    assert run.validation_errors


@pytest.fixture
def slow_site(tmp_path: Path) -> dict[str, str]:
    """An environment whose embedded interpreter takes seconds to start (its sitecustomize)."""
    folder = tmp_path / "slow_site"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(
        f"import time\ntime.sleep({SLOW_SITE_SECONDS})\n", encoding="utf-8"
    )
    return {"PYTHONPATH": os.pathsep.join([str(folder), str(REPOSITORY)])}


def test_vkcreateinstance_does_not_wait_for_the_interpreter(
    run_c_app: RunC, layer_folder: Path, slow_site: dict[str, str]
) -> None:
    """The interpreter's start overlaps the app's own work; the calls that need Python wait."""
    arguments = ["--messenger", "--bad-dispatch", "0"]
    background = run_c_app(SHADERS, arguments, layer_folder, extra=slow_site)
    on_app_thread = run_c_app(
        SHADERS, arguments, layer_folder, extra={**slow_site, **ON_THE_APP_THREAD}
    )
    assert float(on_app_thread.result["instance_ms"]) >= SLOW_SITE_SECONDS * 1000
    assert float(background.result["instance_ms"]) < SLOW_SITE_SECONDS * 1000 / 2
    assert checks(background) == checks(on_app_thread)
    assert background.validation_errors


@pytest.mark.parametrize("slow", [False, True], ids=["quick-start", "slow-start"])
def test_a_program_ending_right_after_vkcreateinstance_exits_cleanly(
    run_c_app: RunC, layer_folder: Path, slow_site: dict[str, str], slow: bool
) -> None:
    """main returns while the interpreter may still be starting: the exit waits for it, then
    ends normally (run_c_app asserts exit status 0)."""
    run = run_c_app(SHADERS, ["--only-instance"], layer_folder, extra=slow_site if slow else {})
    assert "instance_ms" in run.result
    assert "gpuav" not in run.stderr


@pytest.mark.parametrize("slow", [False, True], ids=["quick-start", "slow-start"])
def test_a_child_forked_right_after_vkcreateinstance_exits_and_the_parent_goes_on(
    run_c_app: RunC, layer_folder: Path, slow_site: dict[str, str], slow: bool
) -> None:
    """A child forked while the interpreter starts has no starter thread: its exit must not
    wait for one."""
    arguments = ["--fork-after-instance", "--messenger", "--bad-dispatch", "0"]
    run = run_c_app(SHADERS, arguments, layer_folder, extra=slow_site if slow else {})
    assert run.result["child"] == "0"
    assert run.validation_errors
