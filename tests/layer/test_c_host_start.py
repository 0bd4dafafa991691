"""A C host's first vkCreateInstance starts the layer's interpreter (layer.c). What the instance
asks for through its create info must reach the Python side, and a process must be able to end
or fork at once after vkCreateInstance, as it can without the layer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.layer.conftest import RunC

pytestmark = pytest.mark.vulkan

SHADERS = ("region_reporting.comp", "quad.vert", "quad.frag")
BAD = ["--messenger", "--bad-dispatch", "1"]


@pytest.mark.parametrize(
    "how", [["--layer-settings"], ["--validation-features"]], ids=["layer-settings", "features"]
)
def test_what_the_instance_asks_for_turns_the_checks_on(
    run_c_app: RunC, layer_folder: Path, how: list[str]
) -> None:
    """GPU-AV turned on only by the create info's chain (nothing in the environment); the
    layer settings also reserve a binding slot, through a list of strings."""
    without = run_c_app(("region.comp", "quad.vert", "quad.frag"))  # its limits
    run = run_c_app(SHADERS, [*how, *BAD], layer_folder, enable=False)
    assert run.messages, "the bad dispatch went unreported"
    lowered = how == ["--layer-settings"]
    expected = int(without.result["maxBoundDescriptorSets"]) - int(lowered)
    assert int(run.result["maxBoundDescriptorSets"]) == expected


def test_a_program_ending_right_after_vkcreateinstance_exits_cleanly(
    run_c_app: RunC, layer_folder: Path
) -> None:
    """main returns with the instance alive (run_c_app asserts exit status 0)."""
    run = run_c_app(SHADERS, ["--only-instance"], layer_folder)
    assert "instance_ms" in run.result
    assert "gpuav" not in run.stderr


def test_a_child_forked_right_after_vkcreateinstance_exits_and_the_parent_goes_on(
    run_c_app: RunC, layer_folder: Path
) -> None:
    run = run_c_app(SHADERS, ["--fork-after-instance", *BAD], layer_folder)
    assert run.result["child"] == "0"
    assert run.messages


@pytest.mark.parametrize("site", [False, True], ids=["default", "GPUAV_PYTHON_SITE=1"])
def test_a_c_hosts_interpreter_runs_no_site_unless_asked(
    run_c_app: RunC, layer_folder: Path, tmp_path: Path, site: bool
) -> None:
    """`site` runs every .pth file and sitecustomize of the environment (63 ms on the lent
    H100's Python); the layer's interpreter needs none of them, and still finds gpuav without
    the repository on PYTHONPATH."""
    folder = tmp_path / "customize"
    folder.mkdir()
    marker = tmp_path / "site-ran"
    (folder / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    extra = {"PYTHONPATH": str(folder), **({"GPUAV_PYTHON_SITE": "1"} if site else {})}
    run = run_c_app(SHADERS, BAD, layer_folder, extra=extra)
    assert run.messages, "the bad dispatch went unreported"
    assert marker.exists() == site


def test_a_c_host_with_nothing_to_report_imports_no_error_or_path_machinery(
    run_c_app: RunC, layer_folder: Path, tmp_path: Path
) -> None:
    """The second run of a program whose modules are in gpuav's cache and which has nothing to
    report: the standard library's threading, traceback, pathlib, sysconfig and json are never
    imported (each costs the lent H100's interpreter 1.3-7 ms at start-up)."""
    shaders = ("region.comp", "quad.vert", "quad.frag")
    extra = {"GPUAV_SHADER_CACHE_PATH": str(tmp_path / "cache")}
    first = run_c_app(shaders, [], layer_folder, instrumenter=None, extra=extra)
    assert not first.messages
    timed = {**extra, "PYTHONPROFILEIMPORTTIME": "1"}
    second = run_c_app(shaders, [], layer_folder, instrumenter=None, extra=timed)
    assert not second.messages
    imported = {
        line.rpartition("|")[2].strip()
        for line in second.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert {"gpuav.layer.native.hooks_device", "gpuav.layer.module_cache"} <= imported
    assert "gpuav.instrument.api" not in imported  # the modules came from the cache
    for unneeded in ("threading", "traceback", "pathlib", "sysconfig", "json"):
        assert unneeded not in imported, unneeded
