"""Descriptors that do not fit the instruction using them, at the index it used, through the
real layer on lavapipe with ``apps/image_fit_app.c``: the image view's type against the
image type's Dim and Arrayed (VUID-...-viewType-07752), its format's numeric type against the
Sampled Type (-format-07753), the image's sample count against MS (RuntimeSpirv-samples-08725
and -08726), and samplers with unnormalizedCoordinates where the instruction or view forbids
them (-None-08609, -08610, -08611). The shader tests the descriptor's fact bits with the word
it reads anyway; a mismatch skips the access and writes one record. Correct twins (the same
shaders, fitting descriptors) are silent and compute what they compute without the layer.
Side by side with the Khronos layer 1.4.309, both report the same id in every scenario."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpuav.instrument.api import instrument_shader
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APP_TIMEOUT, APPS, app_environment, error_messages, parse_c_output
from tests.layer.test_khronos_below import NewerKhronos, newer_khronos  # noqa: F401
from tests.layer.unusable_descriptor_shaders import VERTEX
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

RESULTS = "layout(set = 0, binding = 1) buffer Results { uint results[16]; };"


@dataclass(frozen=True)
class Scenario:
    declaration: str  # of binding 0 (and 2)
    body: str  # main's body; its access is on its last line
    kind: str  # the app's KIND
    bad: str  # the app's SPECs, one descriptor not fitting
    good: str  # fitting twins
    vuid: str  # the id, after VUID-vkCmdDispatch- (or whole, from VUID-)
    index: int  # the descriptor that does not fit

    @property
    def access_line(self) -> int:
        return 6 + self.declaration.count("\n") + self.body.count("\n")

    def source(self) -> str:
        return "\n".join(
            [
                "#version 450",
                "layout(local_size_x = 1) in;",
                self.declaration,
                RESULTS,
                "void main() {",
                self.body,
                "}",
            ]
        )


LOOP = "for (int k = 0; k < 4; ++k) results[k] = "
SCENARIOS = {
    "view_type_array": Scenario(
        "layout(set = 0, binding = 0) uniform usampler2D images[4];",
        LOOP + "texelFetch(images[k], ivec2(0), 0).x;",
        "combined",
        "2d:r32ui:1:n,2d:r32ui:1:n,2darray:r32ui:1:n,2d:r32ui:1:n",
        "2d:r32ui:1:n,2d:r32ui:1:n,2d:r32ui:1:n,2d:r32ui:1:n",
        "viewType-07752",
        2,
    ),
    "view_type_cube": Scenario(
        "layout(set = 0, binding = 0) uniform usamplerCube image;",
        "results[0] = textureLod(image, vec3(1, 0, 0), 0).x;",
        "combined",
        "2darray:r32ui:1:n",
        "cube:r32ui:1:n",
        "viewType-07752",
        0,
    ),
    "format": Scenario(
        "layout(set = 0, binding = 0) uniform usampler2D image;",
        "results[0] = texelFetch(image, ivec2(0), 0).x;",
        "combined",
        "2d:rgba8:1:n",
        "2d:r32ui:1:n",
        "format-07753",
        0,
    ),
    "signed_format": Scenario(
        "layout(set = 0, binding = 0) uniform isampler2D images[2];",
        "for (int k = 0; k < 2; ++k) results[k] = uint(texelFetch(images[k], ivec2(0), 0).x);",
        "combined",
        "2d:r32i:1:n,2d:r32ui:1:n",
        "2d:r32i:1:n,2d:r32i:1:n",
        "format-07753",
        1,
    ),
    "storage_format": Scenario(
        "layout(set = 0, binding = 0, r32ui) uniform readonly uimage2D image;",
        "results[0] = imageLoad(image, ivec2(0)).x;",
        "storage",
        "2d:r32f:1:n",
        "2d:r32ui:1:n",
        "format-07753",
        0,
    ),
    "multisampled": Scenario(
        "layout(set = 0, binding = 0) uniform usampler2D image;",
        "results[0] = texelFetch(image, ivec2(0), 0).x;",
        "combined",
        "2d:r32ui:4:n",
        "2d:r32ui:1:n",
        "VUID-RuntimeSpirv-samples-08725",
        0,
    ),
    "single_sampled": Scenario(
        "layout(set = 0, binding = 0) uniform usampler2DMS image;",
        "results[0] = texelFetch(image, ivec2(0), 0).x;",
        "combined",
        "2d:r32ui:1:n",
        "2d:r32ui:4:n",
        "VUID-RuntimeSpirv-samples-08726",
        0,
    ),
    "separate_view_type": Scenario(
        "layout(set = 0, binding = 0) uniform utexture2D images[2];\n"
        "layout(set = 0, binding = 2) uniform sampler nearest;",
        "for (int k = 0; k < 2; ++k)\n"
        "    results[k] = texelFetch(usampler2D(images[k], nearest), ivec2(0), 0).x;",
        "separate",
        "2d:r32ui:1:n,3d:r32ui:1:n",
        "2d:r32ui:1:n,2d:r32ui:1:n",
        "viewType-07752",
        1,
    ),
    "unnormalized_proj": Scenario(
        "layout(set = 0, binding = 0) uniform sampler2D image;",
        "results[0] = floatBitsToUint(textureProjLod(image, vec3(0.5, 0.5, 1), 0).x);",
        "combined",
        "2d:r32f:1:u",
        "2d:r32f:1:n",
        "None-08610",
        0,
    ),
    "unnormalized_offset": Scenario(
        "layout(set = 0, binding = 0) uniform sampler2D image;",
        "results[0] = floatBitsToUint(textureLodOffset(image, vec2(0.5), 0, ivec2(1, 0)).x);",
        "combined",
        "2d:r32f:1:u",
        "2d:r32f:1:n",
        "None-08611",
        0,
    ),
    "unnormalized_immutable": Scenario(
        "layout(set = 0, binding = 0) uniform sampler2D image;",
        "results[0] = floatBitsToUint(textureProjLod(image, vec3(0.5, 0.5, 1), 0).x);",
        "immutable",
        "2d:r32f:1:u",
        "2d:r32f:1:n",
        "None-08610",
        0,
    ),
    "unnormalized_view": Scenario(
        "layout(set = 0, binding = 0) uniform sampler2DArray image;",
        "results[0] = floatBitsToUint(textureLod(image, vec3(0.5, 0.5, 0), 0).x);",
        "combined",
        "2darray:r32f:1:u",
        "2darray:r32f:1:n",
        "None-08609",
        0,
    ),
}

Run = Callable[..., tuple[int, dict[str, object]]]


def _vuid(scenario: Scenario) -> str:
    if scenario.vuid.startswith("VUID-"):
        return scenario.vuid
    return f"VUID-vkCmdDispatch-{scenario.vuid}"


@pytest.fixture(scope="module")
def image_fit_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("image_fit_app")
    return compile_c_program(folder / "image_fit_app", [APPS / "image_fit_app.c"])


@pytest.fixture(scope="module")
def shader(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    folder = tmp_path_factory.mktemp("image_fit_shaders")

    def compile_(name: str) -> Path:
        path = folder / f"{name}.comp.spv"
        if not path.exists():
            words = compile_glsl(SCENARIOS[name].source(), "comp", debug="g")
            path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        return path

    return compile_


def _argv(app: Path, shader: Callable[[str], Path], name: str, good: bool) -> list[str]:
    scenario = SCENARIOS[name]
    specs = scenario.good if good else scenario.bad
    return [str(app), str(shader(name)), scenario.kind, specs]


@pytest.fixture
def run(
    image_fit_app: Path, shader: Callable[[str], Path], layer_folder: Path, tmp_path: Path
) -> Run:
    """(exit status, parsed output) of one scenario, under gpuav unless ``layer`` is False."""

    def run_(name: str, good: bool = False, layer: bool = True) -> tuple[int, dict[str, object]]:
        environment = app_environment(layer_folder if layer else None, instrumenter=None)
        done = subprocess.run(
            _argv(image_fit_app, shader, name, good), env=environment, cwd=tmp_path,
            capture_output=True, text=True, timeout=APP_TIMEOUT,
        )  # fmt: skip
        return done.returncode, parse_c_output(done.stdout)

    return run_


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_instrumented_shaders_pass_spirv_val(name: str) -> None:
    words = compile_glsl(SCENARIOS[name].source(), "comp", debug="g")
    spirv_val(instrument_shader(words, shader_id=3, descriptor_set=7, descriptor_state=True))


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_descriptor_not_fitting_is_reported_and_skipped(run: Run, name: str) -> None:
    scenario = SCENARIOS[name]
    status, output = run(name)
    assert status == 0
    (error,) = error_messages(output)
    assert error["id"] == _vuid(scenario)
    text = error["text"]
    if "[" in scenario.declaration:
        assert f"Descriptor index {scenario.index} used to index descriptor array" in text
    else:
        assert text.startswith("The descriptor does not fit the instruction using it: ")
    assert f"line {scenario.access_line}" in text
    assert "set 0, binding 0." in text
    assert "It holds VkImageView (0x" in text
    assert "Dispatch Index 0 (vkCmdDispatch)" in text
    results = str(output["result"]).split()
    assert results[scenario.index] == "0"  # the access was skipped


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_fitting_twins_are_silent_and_identical(run: Run, name: str) -> None:
    status, output = run(name, good=True)
    plain_status, plain = run(name, good=True, layer=False)
    assert status == plain_status == 0
    assert error_messages(output) == []
    assert output["result"] == plain["result"]
    assert str(output["result"]).split()[0] != "0"


def test_message_names_the_view_and_what_the_shader_needs(run: Run) -> None:
    _, output = run("view_type_array")
    (error,) = error_messages(output)
    text = error["text"]
    assert "The image view's type is VK_IMAGE_VIEW_TYPE_2D_ARRAY" in text
    assert "needs VK_IMAGE_VIEW_TYPE_2D." in text
    assert "VK_IMAGE_VIEW_TYPE_2D_ARRAY, VK_FORMAT_R32_UINT, of an image with" in text
    _, output = run("multisampled")
    (error,) = error_messages(output)
    assert "of an image with VK_SAMPLE_COUNT_4_BIT" in error["text"]
    _, output = run("unnormalized_proj")
    (error,) = error_messages(output)
    assert "VkSampler (0x" in error["text"]
    assert "with unnormalizedCoordinates" in error["text"]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_gpuav_reports_what_khronos_reports(
    image_fit_app: Path,
    shader: Callable[[str], Path],
    run: Run,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
    name: str,
) -> None:
    environment = newer_khronos.gpu_assisted_environment()
    done = subprocess.run(
        newer_khronos.command(_argv(image_fit_app, shader, name, False)), env=environment,
        cwd=tmp_path, capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    khronos = {m["id"] for m in error_messages(parse_c_output(done.stdout))}
    _, output = run(name)
    ours = {m["id"] for m in error_messages(output)}
    assert done.returncode == 0
    assert ours == khronos == {_vuid(SCENARIOS[name])}


FRAGMENT = """#version 450
layout(location = 0) out vec4 color;
layout(set = 0, binding = 1) buffer Out { uint o[16]; } o;
layout(set = 0, binding = 0) uniform usampler2DArray image;
void main() {
    o.o[0] = texelFetch(image, ivec3(0), 0).x;
    color = vec4(1.0);
}
"""


def test_fragment_stage_reports_the_view_type(layer_folder: Path, tmp_path: Path) -> None:
    """``descriptor_app.c`` draws one fragment reading its 2D view through a 2D-array type."""
    app = compile_c_program(tmp_path / "descriptor_app", [APPS / "descriptor_app.c"])
    paths = []
    for name, text, stage in (("frag", FRAGMENT, "frag"), ("vert", VERTEX, "vert")):
        path = tmp_path / f"{name}.spv"
        words = compile_glsl(text, stage, debug="g")
        path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        paths.append(str(path))
    argv = [str(app), paths[0], "sampled_image", "1", "written", paths[1], ""]
    done = subprocess.run(
        argv, env=app_environment(layer_folder, instrumenter=None), cwd=tmp_path,
        capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0
    (error,) = error_messages(parse_c_output(done.stdout))
    assert error["id"] == "VUID-vkCmdDraw-viewType-07752"
    assert "needs VK_IMAGE_VIEW_TYPE_2D_ARRAY" in error["text"]
    assert "line 6" in error["text"] and "Stage = Fragment" in error["text"]
