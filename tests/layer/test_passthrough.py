"""The layer loads through its manifest and never changes what a correct program computes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuav.layer.native.build import LAYER_NAME, MANIFEST_NAME, library_file_name
from tests.layer.conftest import RunC, RunPython

pytestmark = pytest.mark.vulkan


def test_manifest_names_the_layer_and_its_library(layer_folder: Path) -> None:
    manifest = json.loads((layer_folder / MANIFEST_NAME).read_text())
    assert manifest["layer"]["name"] == LAYER_NAME
    library = layer_folder / manifest["layer"]["library_path"]
    assert library.name == library_file_name() and library.is_file()


@pytest.mark.parametrize(
    "mode_arguments",
    [
        ["--mode", "compute", "--dispatches", "8"],
        ["--mode", "compute", "--dispatches", "8", "--secondary"],
        ["--mode", "compute", "--dispatches", "8", "--submit2", "--features2"],
        ["--mode", "graphics", "--draws", "4"],
        ["--mode", "graphics", "--draws", "4", "--draw-command", "indexed_indirect"],
    ],
    ids=["compute", "secondary", "submit2", "graphics", "graphics-indexed-indirect"],
)
def test_results_are_bit_identical_with_and_without_the_layer(
    run_python_app: RunPython, spirv, layer_folder: Path, mode_arguments: list[str]
) -> None:
    shaders = ["--shader", str(spirv("region.comp"))]
    shaders += ["--vert", str(spirv("quad.vert")), "--frag", str(spirv("quad.frag"))]
    arguments = [*mode_arguments, *shaders, "--messenger"]
    without = run_python_app(arguments)
    disabled = run_python_app(arguments, layer_folder, enable=False)
    # GPU-AV on with the stand-in pass: shadow modules, patched layouts and per-action output
    # blocks are all in play, yet the results must not move by a bit.
    enabled = run_python_app(arguments, layer_folder)
    assert without.result["data_sha256"] == disabled.result["data_sha256"]
    assert without.result["data_sha256"] == enabled.result["data_sha256"]
    assert enabled.messages == []
    assert disabled.messages == []


def test_c_app_results_are_bit_identical(run_c_app: RunC, layer_folder: Path) -> None:
    shaders = ("region.comp", "quad.vert", "quad.frag")
    without = run_c_app(shaders, ["--messenger"])
    enabled = run_c_app(shaders, ["--messenger"], layer_folder)
    assert without.result["compute"] == enabled.result["compute"]
    assert without.result["pixels"] == enabled.result["pixels"]
    assert enabled.messages == []


def test_the_real_instrumentation_entry_point_is_used_by_default(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    """With ``gpuav.instrument.api`` (whatever it does today) the app still computes the same;
    a shader it refuses is reported once, not once per shader."""
    arguments = ["--shader", str(spirv("region.comp")), "--messenger", "--dispatches", "4"]
    without = run_python_app(arguments)
    enabled = run_python_app(arguments, layer_folder, instrumenter=None)
    assert enabled.result["data_sha256"] == without.result["data_sha256"]
    skipped = enabled.with_id("GPUAV-instrumentation-skipped")
    assert len(skipped) <= 1
    assert all(message["id"].startswith("GPUAV-") for message in enabled.messages)
