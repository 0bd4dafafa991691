"""VK_LAYER_KHRONOS_validation beneath gpuav checks the layer's own Vulkan calls (seed 000,
"Calling Down the Chain"): with GPU-AV on, no validation message may appear that the app
does not also cause on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.layer.conftest import VALIDATION_LAYER, RunC, RunPython

pytestmark = pytest.mark.vulkan


def _khronos_available() -> bool:
    return any(
        Path(folder, "VkLayer_khronos_validation.json").exists()
        for folder in ("/usr/share/vulkan/explicit_layer.d", "/etc/vulkan/explicit_layer.d")
    )


@pytest.fixture(autouse=True)
def _need_khronos_layer() -> None:
    if not _khronos_available():
        pytest.fail("VK_LAYER_KHRONOS_validation missing (Debian: vulkan-validationlayers)")


SCENARIOS = {
    "compute": ["--shader", "region_reporting.comp", "--bad-dispatch", "1"],
    "compute-secondary-submit2": [
        "--shader", "region_reporting.comp", "--bad-dispatch", "1", "--secondary",
        "--submit2", "--features2",
    ],
    "compute-destroyed-early-many-chunks": [
        "--shader", "region_reporting.comp", "--bad-dispatch", "300", "--dispatches", "320",
        "--destroy-module-early", "--destroy-layout-early", "--repeat", "2", "--rerecord",
    ],
    "compute-host-event": [
        "--shader", "region_reporting.comp", "--bad-dispatch", "1", "--host-event",
    ],
    "compute-timeline-wait": [
        "--shader", "region_reporting.comp", "--bad-dispatch", "1", "--timeline-wait",
    ],
    "compute-every-set": ["--shader", "region.comp", "--fill-sets"],
    "graphics": [
        "--mode", "graphics", "--vert", "quad_reporting.vert", "--frag", "quad_reporting.frag",
        "--bad-draw", "1",
    ],
    "graphics-indexed-indirect": [
        "--mode", "graphics", "--vert", "quad_reporting.vert", "--frag", "quad_reporting.frag",
        "--bad-draw", "0", "--draw-command", "indexed_indirect",
    ],
}  # fmt: skip


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_no_validation_errors_from_our_calls(
    run_python_app: RunPython, spirv, layer_folder: Path, scenario: str
) -> None:
    arguments = list(SCENARIOS[scenario])
    for index, argument in enumerate(arguments):
        if argument.endswith((".comp", ".vert", ".frag")):
            arguments[index] = str(spirv(argument))
    run = run_python_app(
        [*arguments, "--messenger", "--names"], layer_folder, layers=[VALIDATION_LAYER]
    )
    assert run.validation_errors() == []
    if "reporting" in " ".join(arguments):
        assert run.with_id("GPUAV-descriptor-index-out-of-bounds")


def test_c_app_under_validation(run_c_app: RunC, layer_folder: Path) -> None:
    shaders = ("region_reporting.comp", "quad_reporting.vert", "quad_reporting.frag")
    run = run_c_app(
        shaders, ["--bad-dispatch", "0", "--bad-draw", "1", "--messenger"], layer_folder,
        layers=[VALIDATION_LAYER],
    )  # fmt: skip
    assert run.validation_errors() == []
    assert len(run.with_id("GPUAV-descriptor-index-out-of-bounds")) == 3
