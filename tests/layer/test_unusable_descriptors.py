"""Descriptors a shader uses that are not valid (VUID-vkCmd*-None-08114), through the real
layer on lavapipe with ``apps/descriptor_app.c``: never written (any descriptor type, arrayed
or not, a constant index), or naming an object destroyed (or whose memory was freed) before
the submit. The access is skipped and reported with the descriptor, the line and, for a
destroyed object, the object; correct twins are silent and compute what they compute without
the layer. Several unwritten descriptors crash lavapipe without gpuav (and under the Khronos
layer 1.4.309); under gpuav they are reported and the program finishes. Side by side with the
Khronos layer 1.4.309, gpuav reports 08114 wherever it does (it also reports the unwritten
uniform or storage buffer as a null-descriptor range error, which gpuav does not repeat)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from gpuav.instrument.api import instrument_shader
from gpuav.spirv.disassembler import disassemble
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APP_TIMEOUT, APPS, app_environment, error_messages, parse_c_output
from tests.layer.test_khronos_below import NewerKhronos, newer_khronos  # noqa: F401
from tests.layer.unusable_descriptor_shaders import BODIES, VERTEX, access_line, source
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

DISPATCH_ID = "VUID-vkCmdDispatch-None-08114"
DRAW_ID = "VUID-vkCmdDraw-None-08114"
NAMES = {
    "storage_buffer": "data (block Data)",
    "uniform_buffer": "data (block Data)",
    "sampled_image": "image",
    "storage_image": "image",
    "image_atomic": "image",
    "uniform_texel": "texels",
    "storage_texel": "texels",
    "separate_image": "image",
    "sampler": "nearest",
    "constant_index": "data (block Data)",
}
# Their range (or texel) check, which stands anyway, also fails an unusable descriptor.
RANGE_CHECKED = {"storage_buffer", "uniform_buffer", "uniform_texel", "storage_texel"}
RANGE_CHECKED.add("constant_index")
# Unwritten, these crash lavapipe without a layer.
CRASHING = ["sampled_image", "storage_image", "image_atomic", "uniform_texel", "storage_texel"]
# (scenario, mode) -> what the message says was destroyed or freed, and what the descriptor names
RETIRED = {
    ("storage_buffer", "destroyed"): "names VkBuffer (0x",
    ("uniform_texel", "destroyed"): "names VkBufferView (0x",
    ("sampled_image", "destroyed"): "names VkImageView (0x",
    ("storage_image", "destroyed"): "names VkImageView (0x",
    ("sampler", "destroyed"): "names VkSampler (0x",
    ("storage_buffer", "freed"): "whose VkDeviceMemory (0x",
    ("sampled_image", "freed"): "whose VkDeviceMemory (0x",
}

Run = Callable[..., tuple[int, dict[str, object]]]


@pytest.fixture(scope="module")
def descriptor_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("descriptor_app")
    return compile_c_program(folder / "descriptor_app", [APPS / "descriptor_app.c"])


@pytest.fixture(scope="module")
def shader(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    folder = tmp_path_factory.mktemp("descriptor_shaders")

    def compile_(name: str, stage: str) -> Path:
        path = folder / f"{name}.{stage}.spv"
        if not path.exists():
            text = VERTEX if name == "vertex" else source(name, stage)
            words = compile_glsl(text, stage, debug="g")
            path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        return path

    return compile_


def _argv(
    app: Path, shader: Callable[[str, str], Path], name: str, mode: str, stage: str, options: str
) -> list[str]:
    kind, count, _, _ = BODIES[name]
    vertex = str(shader("vertex", "vert")) if stage == "frag" else ""
    return [str(app), str(shader(name, stage)), kind, str(count), mode, vertex, options]


@pytest.fixture
def run(
    descriptor_app: Path,
    shader: Callable[[str, str], Path],
    layer_folder: Path,
    tmp_path: Path,
) -> Run:
    """(exit status, parsed output) of one scenario, under gpuav unless ``layer`` is False."""

    def run_(
        name: str, mode: str, stage: str = "comp", options: str = "", layer: bool = True
    ) -> tuple[int, dict[str, object]]:
        argv = _argv(descriptor_app, shader, name, mode, stage, options)
        environment = app_environment(layer_folder if layer else None, instrumenter=None)
        done = subprocess.run(
            argv, env=environment, cwd=tmp_path, capture_output=True, text=True,
            timeout=APP_TIMEOUT,
        )  # fmt: skip
        return done.returncode, parse_c_output(done.stdout)

    return run_


@pytest.mark.parametrize("stage", ["comp", "frag"])
@pytest.mark.parametrize("name", list(BODIES))
def test_instrumented_scenarios_pass_spirv_val(name: str, stage: str) -> None:
    """Every descriptor use is guarded, the constant ones with a word read in the first block."""
    words = compile_glsl(source(name, stage), stage, debug="g")
    checked = instrument_shader(words, shader_id=3, descriptor_set=7, descriptor_state=True)
    spirv_val(checked)
    text = disassemble(checked)
    # A constant-index image or sampler's word is read once, in the function's first block;
    # a buffer's or texel buffer's range is read there anyway, 0 when it may not be used.
    reads = (
        "%gpuav_buffer_range %uint_0 %uint_0"
        if name in RANGE_CHECKED
        else "%gpuav_descriptor_word %uint_0 %uint_0"
    )
    expected = 0 if name == "sampler_array" else 1
    assert text.count(f"OpFunctionCall %uint {reads}") == expected
    if name in RANGE_CHECKED:
        assert "%gpuav_descriptor_word" not in text


@pytest.mark.parametrize("stage", ["comp", "frag"])
@pytest.mark.parametrize("name", list(NAMES))
def test_unwritten_descriptor_is_reported_and_skipped(run: Run, name: str, stage: str) -> None:
    status, output = run(name, "first_only" if name == "constant_index" else "unwritten", stage)
    assert status == 0
    (error,) = error_messages(output)
    assert error["id"] == (DISPATCH_ID if stage == "comp" else DRAW_ID)
    text = error["text"]
    if name == "constant_index":
        assert "Descriptor index 1 used to index descriptor array of length 2 is uninit" in text
    else:
        assert text.startswith("The descriptor is uninitialized.")
    assert f"line {access_line(name, stage)}" in text
    assert f"Descriptor: {NAMES[name]}, set 0, binding 0." in text
    assert "It was never written" in text
    assert ("Dispatch Index 0" if stage == "comp" else "Draw Index 0") in text
    assert ("Stage = Compute" if stage == "comp" else "Stage = Fragment") in text
    assert str(output["result"]).split()[0] == "0"  # the access was skipped


@pytest.mark.parametrize("stage", ["comp", "frag"])
@pytest.mark.parametrize("name", [*NAMES, "sampler_array"])
@pytest.mark.parametrize("mode", ["written", "copied"])
def test_correct_twins_are_silent_and_identical(run: Run, name: str, stage: str, mode: str) -> None:
    if name == "sampler_array":
        return  # its index is out of bounds in every mode
    status, output = run(name, mode, stage)
    plain_status, plain = run(name, mode, stage, layer=False)
    assert status == plain_status == 0
    assert error_messages(output) == []
    assert output["result"] == plain["result"]


@pytest.mark.parametrize("name", CRASHING)
def test_no_crash_where_lavapipe_crashes_without_the_layer(run: Run, name: str) -> None:
    status, _ = run(name, "unwritten", layer=False)
    assert status != 0  # lavapipe dereferences the empty descriptor
    status, output = run(name, "unwritten")
    assert status == 0
    assert [error["id"] for error in error_messages(output)] == [DISPATCH_ID]


@pytest.mark.parametrize(("name", "mode"), list(RETIRED))
def test_destroyed_or_freed_resource_is_named(run: Run, name: str, mode: str) -> None:
    status, output = run(name, mode)
    assert status == 0
    (error,) = error_messages(output)
    assert error["id"] == DISPATCH_ID
    text = error["text"]
    assert RETIRED[(name, mode)] in text
    assert ("which was destroyed" in text) == (mode == "destroyed")
    assert ("was freed" in text) == (mode == "freed")
    assert f"Descriptor: {NAMES[name]}, set 0, binding 0." in text


# The command buffer also clears the image: with its memory freed, that clear is the app's
# own crash, layer or not.
LATE = [scenario for scenario in RETIRED if scenario != ("sampled_image", "freed")]


@pytest.mark.parametrize(("name", "mode"), LATE)
def test_destroyed_or_freed_after_recording_is_reported(run: Run, name: str, mode: str) -> None:
    """At recording, every descriptor of the binding was usable, and the action's table says
    so (its binding summary); the object goes before the submit, and the state at submit time
    counts."""
    status, output = run(name, mode, options="late")
    assert status == 0
    (error,) = error_messages(output)
    assert error["id"] == DISPATCH_ID
    assert RETIRED[(name, mode)] in error["text"]
    assert str(output["result"]).split()[0] == "0"  # the access was skipped


@pytest.mark.parametrize("options", ["resubmit", "rerecord"])
def test_each_submission_reports(run: Run, options: str) -> None:
    status, output = run("storage_buffer", "unwritten", options=options)
    assert status == 0
    errors = error_messages(output)
    assert [error["id"] for error in errors] == [DISPATCH_ID] * 2
    assert all("Dispatch Index 0 (vkCmdDispatch)" in error["text"] for error in errors)


def test_separate_sampler_out_of_bounds_names_the_sampler_array(run: Run) -> None:
    """OpSampledImage takes the image first; the record says which binding's index failed."""
    status, output = run("sampler_array", "written")
    assert status == 0
    (error,) = error_messages(output)
    assert error["id"] == "GPUAV-descriptor-index-out-of-bounds"
    assert "Index of 2 used to index descriptor array of length 2." in error["text"]
    assert "Descriptor: nearest, set 0, binding 0." in error["text"]


KHRONOS_SCENARIOS = [
    (name, mode)
    for name in NAMES
    for mode in ("first_only" if name == "constant_index" else "unwritten", "destroyed")
]


@pytest.mark.parametrize(("name", "mode"), KHRONOS_SCENARIOS)
def test_gpuav_reports_what_khronos_reports(
    descriptor_app: Path,
    shader: Callable[[str, str], Path],
    run: Run,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
    name: str,
    mode: str,
) -> None:
    argv = _argv(descriptor_app, shader, name, mode, "comp", "")
    environment = newer_khronos.gpu_assisted_environment()
    done = subprocess.run(
        newer_khronos.command(argv), env=environment, cwd=tmp_path, capture_output=True,
        text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    khronos = {m["id"] for m in error_messages(parse_c_output(done.stdout))}
    status, output = run(name, mode)
    ours = {m["id"] for m in error_messages(output)}
    assert status == 0 and ours == {DISPATCH_ID}
    if done.returncode == 0:
        assert DISPATCH_ID in khronos
        assert khronos - ours <= {
            "VUID-vkCmdDispatch-storageBuffers-06936",
            "VUID-vkCmdDispatch-uniformBuffers-06935",
        }  # its null-descriptor message for the same unwritten buffer
    else:
        assert khronos == set()  # it crashed (lavapipe, on the empty descriptor)
