"""Enabling, the reserved binding slot, and the graceful degradations of seed 000's
"Limitations": a layout using every set, allocation failure, Vulkan 1.0, engine failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.layer.conftest import RunPython

pytestmark = pytest.mark.vulkan

OUT_OF_BOUNDS = "GPUAV-descriptor-index-out-of-bounds"
LAVAPIPE_MAX_SETS = 8


def reporting(spirv, *extra: str) -> list[str]:
    return ["--shader", str(spirv("region_reporting.comp")), "--messenger", *extra]


def plain(spirv, *extra: str) -> list[str]:
    return ["--shader", str(spirv("region.comp")), "--messenger", *extra]


# -- enabling -------------------------------------------------------------------------------


def test_off_unless_enabled(run_python_app: RunPython, spirv, layer_folder: Path) -> None:
    run = run_python_app(plain(spirv), layer_folder, enable=False, instrumenter=None)
    assert run.messages == []  # not even the "instrumentation unavailable" notice
    assert run.result["max_bound_descriptor_sets"] == LAVAPIPE_MAX_SETS


def test_enabled_by_validation_features(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    arguments = reporting(spirv, "--bad-dispatch", "1", "--validation-features", "gpu")
    run = run_python_app(arguments, layer_folder, enable=False)
    assert len(run.with_id(OUT_OF_BOUNDS)) == 1
    assert run.result["max_bound_descriptor_sets"] == LAVAPIPE_MAX_SETS


def test_validation_features_reserve_slot_lowers_max_bound_descriptor_sets(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    arguments = plain(spirv, "--validation-features", "gpu,reserve")
    run = run_python_app(arguments, layer_folder, enable=False)
    assert run.result["max_bound_descriptor_sets"] == LAVAPIPE_MAX_SETS - 1
    assert run.result["max_bound_descriptor_sets2"] == LAVAPIPE_MAX_SETS - 1


def test_environment_can_force_it_off(run_python_app: RunPython, spirv, layer_folder: Path) -> None:
    arguments = plain(spirv, "--validation-features", "gpu,reserve")
    run = run_python_app(arguments, layer_folder, enable=False, extra={"GPUAV_ENABLE": "0"})
    assert run.result["max_bound_descriptor_sets"] == LAVAPIPE_MAX_SETS


@pytest.mark.parametrize(
    "where", ["working-directory", "settings-path-file", "settings-path-folder"]
)
def test_enabled_by_settings_file(
    run_python_app: RunPython, spirv, layer_folder: Path, tmp_path: Path, where: str
) -> None:
    text = (
        "# gpuav\nkhronos_validation.enables = nothing\n"
        "gpuav_gpu_assisted.gpu_validation = all,reserve_binding_slot\n"
    )
    extra: dict[str, str] = {}
    if where == "working-directory":
        (tmp_path / "vk_layer_settings.txt").write_text(text)  # tmp_path is the app's cwd
    else:
        folder = tmp_path / "settings"
        folder.mkdir()
        (folder / "vk_layer_settings.txt").write_text(text)
        target = folder / "vk_layer_settings.txt" if where == "settings-path-file" else folder
        extra["VK_LAYER_SETTINGS_PATH"] = str(target)
    run = run_python_app(
        reporting(spirv, "--bad-dispatch", "0"), layer_folder, enable=False, extra=extra
    )
    assert run.result["max_bound_descriptor_sets"] == LAVAPIPE_MAX_SETS - 1
    assert len(run.with_id(OUT_OF_BOUNDS)) == 1


# -- the descriptor set slot ----------------------------------------------------------------


@pytest.mark.parametrize("mode", ["compute", "graphics"])
def test_layout_using_every_set_falls_back_to_original_shaders(
    run_python_app: RunPython, spirv, layer_folder: Path, mode: str
) -> None:
    arguments = plain(
        spirv, "--mode", mode, "--fill-sets",
        "--vert", str(spirv("quad.vert")), "--frag", str(spirv("quad.frag")),
    )  # fmt: skip
    without = run_python_app(arguments)
    run = run_python_app(arguments, layer_folder)
    assert run.result["data_sha256"] == without.result["data_sha256"]
    (conflict,) = run.with_id("GPUAV-pipeline-layout-conflict")
    assert "uses 8 descriptor sets, including set 7" in conflict["text"]
    (fallback,) = run.with_id("GPUAV-pipeline-original-shaders")
    assert f"A {mode} pipeline was created with its original shaders" in fallback["text"]


def test_reserved_slot_leaves_room_for_an_app_that_adapts(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    """The app fills every slot it is told about (7): no conflict, errors still found."""
    arguments = reporting(spirv, "--bad-dispatch", "1", "--fill-sets")
    run = run_python_app(arguments, layer_folder, extra={"GPUAV_RESERVE_BINDING_SLOT": "1"})
    assert run.result["max_bound_descriptor_sets"] == LAVAPIPE_MAX_SETS - 1
    assert run.with_id("GPUAV-pipeline-layout-conflict") == []
    assert len(run.with_id(OUT_OF_BOUNDS)) == 1


# -- resources and versions -----------------------------------------------------------------


def test_running_out_of_output_memory_degrades_without_breaking_the_app(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    arguments = reporting(spirv, "--dispatches", "40", "--bad-dispatch", "30")
    clean = run_python_app(plain(spirv, "--dispatches", "40"))
    run = run_python_app(
        arguments, layer_folder,
        extra={"GPUAV_BLOCKS_PER_CHUNK": "8", "GPUAV_TEST_FAULTS": "output_chunk"},
    )  # fmt: skip
    assert run.result["data_sha256"] == clean.result["data_sha256"]
    (exhausted,) = run.with_id("GPUAV-resources-exhausted")
    assert "ran out of resources" in exhausted["text"]
    # Dispatch 31 ran on the shared spill block: reported, but not pinned on one dispatch.
    (message,) = run.with_id(OUT_OF_BOUNDS)
    assert "output blocks ran out" in message["text"]


def test_action_command_gpuav_does_not_hook_runs_on_the_spill_block(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    """An action command gpuav does not know (vkCmdDispatch left unhooked stands in for a
    newer extension's) still finds gpuav's set bound, with the spill block that binding the
    instrumented pipeline put there: the bad dispatch is skipped and reported, not pinned on
    an action; the app completes."""
    run = run_python_app(
        reporting(spirv, "--bad-dispatch", "1"),
        layer_folder,
        extra={"GPUAV_TEST_UNHOOKED": "vkCmdDispatch"},
    )
    (message,) = run.with_id(OUT_OF_BOUNDS)
    assert (
        "Action: unknown action (output blocks ran out, or a command gpuav does not hook)."
        in (message["text"])
    )


def test_vulkan_1_0_app_gets_1_1_and_is_checked(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    """A Vulkan 1.0 app (vkcube's kind) on a 1.1+ loader and device: the instance is created
    with 1.1, the app is told once, and its bad dispatch (which crashes lavapipe without the
    layer) is reported."""
    run = run_python_app(reporting(spirv, "--api", "1.0", "--bad-dispatch", "1"), layer_folder)
    (raised,) = run.with_id("GPUAV-setup-vulkan-version-raised")
    assert "asked for Vulkan 1.0; gpuav created the instance with apiVersion 1.1" in raised["text"]
    assert run.with_id("GPUAV-setup-vulkan-version") == []
    assert len(run.with_id(OUT_OF_BOUNDS)) == 1


def test_refused_shader_runs_original_and_is_reported_once(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    arguments = plain(spirv, "--mode", "graphics", "--vert", str(spirv("quad.vert")),
                      "--frag", str(spirv("quad.frag")))  # fmt: skip
    without = run_python_app(arguments)
    run = run_python_app(arguments, layer_folder, extra={"GPUAV_FAKE_INSTRUMENT_REFUSE": "1"})
    assert run.result["data_sha256"] == without.result["data_sha256"]
    (message,) = run.messages
    assert message["id"] == "GPUAV-instrumentation-skipped"
    assert "refused by the test instrumenter" in message["text"]


# -- no exception crosses into the app ------------------------------------------------------


@pytest.mark.parametrize(
    "fault", ["record_action", "queue_submit", "create_pipeline_layout", "instrument_shader"]
)
def test_engine_failure_is_reported_and_the_call_still_goes_down(
    run_python_app: RunPython, spirv, layer_folder: Path, fault: str
) -> None:
    arguments = plain(spirv, "--dispatches", "6")
    without = run_python_app(arguments)
    run = run_python_app(arguments, layer_folder, extra={"GPUAV_TEST_FAULTS": fault})
    assert run.result["data_sha256"] == without.result["data_sha256"]
    internal = run.with_id("GPUAV-internal-error")
    assert internal, run.messages
    assert all(f"fault injected at {fault}" in message["text"] for message in internal)


def test_engine_failure_in_a_c_app(run_c_app, layer_folder: Path) -> None:
    shaders = ("region.comp", "quad.vert", "quad.frag")
    without = run_c_app(shaders, ["--messenger"])
    run = run_c_app(
        shaders, ["--messenger"], layer_folder,
        extra={"GPUAV_TEST_FAULTS": "record_action,queue_submit"},
    )  # fmt: skip
    assert (run.result["compute"], run.result["pixels"]) == (
        without.result["compute"], without.result["pixels"],
    )  # fmt: skip
    assert run.with_id("GPUAV-internal-error")
