"""Shader objects (VK_EXT_shader_object) on lavapipe, side by side with the Khronos layer 1.4.309.

``apps/shader_object_app.c`` has no pipeline at all: a compute shader object fills an output
buffer from a bindless array of palettes (action 0, a vkCmdDispatch), then vertex and fragment
shader objects draw a full-screen triangle with corners from a shape buffer and colors from the
palettes (action 1, a vkCmdDraw). Every shader object is created with the set layout and the
push-constant range of the app's one pipeline layout, through which the app binds its set and
pushes the constants the shaders misuse; the shaders read them, so the ranges gpuav gives the
shader objects must still match the layout's. Each planted bug fires in one invocation, so the
message must name exactly it, with its stage, action and source line; the shader objects are
created alone, linked (VK_SHADER_CREATE_LINK_STAGE_BIT_EXT), or made again from their
vkGetShaderBinaryDataEXT binaries (alone or linked; the compute shader's chosen lane is a
specialization constant, which the binary path must keep). The binaries gpuav hands out are
the app's own code, byte for byte what a run without gpuav gets.

Where the Khronos layer 1.4.309 stands: it finds the four planted bugs (the descriptor indices
as uninitialized descriptors, ``None-08114``; the overruns as ``None-08613``, the shader-object
form of ``storageBuffers-06936``, as gpuav names them too). It numbers the draw "Draw Index 0"
(draws and dispatches counted apart), where gpuav counts every action of the command buffer,
as it does for pipelines ("Draw Index 1"). It crashes (SIGSEGV) when the app makes its shader
objects again from their binaries, correct program or not; gpuav knows the binaries it
handed out and keeps checking the shader objects made from them.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import pytest

from gpuav.report.json_report import report_schema
from gpuav.spirv.reader import words_from_bytes
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import (
    APP_TIMEOUT,
    APPS,
    app_environment,
    error_messages,
    parse_c_output,
    run_c_program,
)
from tests.layer.test_khronos_below import (  # noqa: F401
    NewerKhronos,
    Runner,
    newer_khronos,
    run_stacked,
)
from tests.layer.test_ray_tracing_mesh_khronos import MESH_SHADERS
from tests.layer.test_ray_tracing_mesh_khronos import SCENARIOS as PIPELINE_SCENARIOS
from tests.shaders.glsl import compile_glsl, spirv_val
from tests.validate.asm import newer_spirv_val
from tests.workflow.programs import gpuav_run

pytestmark = pytest.mark.vulkan

PUSH = "layout(push_constant) uniform Push { uint palette; int offset; uint fragment_palette; int corner; } push;"  # noqa: E501
SHADERS = {
    "palette.comp": f"""#version 460
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 4) in;
layout(constant_id = 0) const uint CHOSEN = 1u;
layout(set = 0, binding = 1) buffer Output {{ uint words[]; }} results;
layout(set = 0, binding = 2) readonly buffer Palette {{ uint colors[]; }} palettes[];
{PUSH}
void main() {{
    uint lane = gl_LocalInvocationIndex;
    bool chosen = lane == CHOSEN;
    uint palette = chosen ? push.palette : 0u;
    int at = chosen ? int(lane) + push.offset : int(lane);
    results.words[at] = palettes[nonuniformEXT(palette)].colors[lane];
}}
""",
    "shape.vert": f"""#version 460
layout(set = 0, binding = 0) readonly buffer Shape {{ vec2 corners[]; }} shape;
{PUSH}
void main() {{
    int at = gl_VertexIndex == 2 ? 2 + push.corner : gl_VertexIndex;
    gl_Position = vec4(shape.corners[at], 0.0, 1.0);
}}
""",
    "color.frag": f"""#version 460
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 2) readonly buffer Palette {{ uint colors[]; }} palettes[];
{PUSH}
layout(location = 0) out vec4 color;
void main() {{
    ivec2 pixel = ivec2(gl_FragCoord.xy);
    bool chosen = pixel == ivec2(1, 0);
    uint palette = chosen ? push.fragment_palette : 1u;
    color = unpackUnorm4x8(palettes[nonuniformEXT(palette)].colors[pixel.x]);
}}
""",
}
CORRECT = ("1", "0", "0", "0")  # PALETTE OFFSET FRAGMENT_PALETTE CORNER
MODES = ("separate", "linked", "binary", "linked-binary")


@dataclass(frozen=True)
class Scenario:
    arguments: tuple[str, ...]
    gpuav_id: str
    expected: tuple[str, ...]  # patterns gpuav's message must hold
    khronos_id: str
    khronos_action: str  # how the Khronos layer names the action


DISPATCH = "Dispatch Index 0 \\(vkCmdDispatch\\)"
DRAW = "Draw Index 1 \\(vkCmdDraw\\)"
COMPUTE_INVOCATION = "Stage = Compute\\. Global invocation ID \\(x, y, z\\) = \\(2, 0, 0\\)\\."
SCENARIOS = {
    "compute_descriptor_index": Scenario(
        ("5", "0", "0", "0"),
        "GPUAV-descriptor-index-out-of-bounds",
        (
            "Index of 5 used to index descriptor array of length 2\\.",
            "At palette\\.comp line 13\\.",
            "Descriptor: palettes \\(block Palette\\), set 0, binding 2\\.",
            DISPATCH,
            "Shader Object \\(palette\\.comp\\)\\(0x[0-9a-f]+\\)\\.",
            COMPUTE_INVOCATION,
        ),
        "VUID-vkCmdDispatch-None-08114",
        "Compute Dispatch Index 0 Shader Object (palette.comp)",
    ),
    "compute_buffer_overrun": Scenario(
        ("1", "2", "0", "0"),
        "VUID-vkCmdDispatch-None-08613",
        (
            "storage buffer write: 4 bytes at offset 16 .* past the end of the 16 bytes bound",
            "Buffer 'output'",
            "At palette\\.comp line 13\\.",
            DISPATCH,
            "Shader Object \\(palette\\.comp\\)",
            COMPUTE_INVOCATION,
        ),
        "VUID-vkCmdDispatch-None-08613",
        "Compute Dispatch Index 0 Shader Object (palette.comp)",
    ),
    "fragment_descriptor_index": Scenario(
        ("1", "0", "5", "0"),
        "GPUAV-descriptor-index-out-of-bounds",
        (
            "Index of 5 used to index descriptor array of length 2\\.",
            "At color\\.frag line 10\\.",
            DRAW,
            "Shader Object \\(color\\.frag\\)",
            "Stage = Fragment\\. Fragment coord \\(x,y\\) = \\(1\\.5, 0\\.5\\)\\.",
        ),
        "VUID-vkCmdDraw-None-08114",
        "Draw Index 0 Shader Object (color.frag)",
    ),
    "vertex_buffer_overrun": Scenario(
        ("1", "0", "0", "1"),
        "VUID-vkCmdDraw-None-08613",
        (
            "storage buffer read: 8 bytes at offset 24 .* past the end of the 24 bytes bound",
            "Buffer 'shape'",
            "At shape\\.vert line 6\\.",
            DRAW,
            "Shader Object \\(shape\\.vert\\)",
            "Stage = Vertex\\. Vertex index = 2\\. Instance index = 0\\.",
        ),
        "VUID-vkCmdDraw-None-08613",
        "Draw Index 0 Shader Object (shape.vert)",
    ),
}


# mesh_app's scenarios, its task, mesh and fragment stages drawn as shader objects.
MESH_SCENARIOS = [
    name
    for name, scenario in PIPELINE_SCENARIOS.items()
    if scenario.app == "mesh" and "indirect" not in scenario.arguments
]


def _compiled(folder: Path, app: str, shaders: dict[str, str]) -> list[str]:
    """The app and its shaders' paths (compiled with -g, for the source lines)."""
    found = [str(compile_c_program(folder / app, [APPS / f"{app}.c"]))]
    for file_name, source in shaders.items():
        words = compile_glsl(
            source, file_name.rsplit(".", 1)[1], target_env="vulkan1.2", debug="g",
            source_name=file_name,
        )  # fmt: skip
        path = folder / f"{file_name}.spv"
        path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        found.append(str(path))
    return found


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _compiled(tmp_path_factory.mktemp("shader_objects"), "shader_object_app", SHADERS)


@pytest.fixture(scope="module")
def mesh_program(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _compiled(tmp_path_factory.mktemp("mesh_objects"), "mesh_app", MESH_SHADERS)


@pytest.mark.parametrize("name", SCENARIOS)
def test_gpuav_names_stage_action_and_line_and_khronos_finds_the_same(
    name: str,
    program: list[str],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    scenario = SCENARIOS[name]
    argv = [*program, *scenario.arguments]
    theirs = run_c_program(
        newer_khronos.command(argv), newer_khronos.gpu_assisted_environment(), tmp_path
    )
    (finding,) = error_messages(theirs)
    assert finding["id"] == scenario.khronos_id
    assert scenario.khronos_action in finding["text"]
    for mode in MODES:
        ours = run_c_program(
            [*argv, mode], app_environment(layer_folder, instrumenter=None), tmp_path
        )
        # One message, folding every invocation of the instruction: the planted one alone.
        (error,) = error_messages(ours)
        assert error["id"] == scenario.gpuav_id, mode
        for pattern in scenario.expected:
            assert re.search(pattern, error["text"]), (mode, pattern, error["text"])
        assert "more invocations" not in error["text"]
        ids = {m["id"] for m in ours["messages"]}  # type: ignore[union-attr]
        assert not any("shader-object" in message_id for message_id in ids), ids
        # The bad access was skipped, as the Khronos layer skips it.
        assert ours["output"] == theirs["output"], mode


@pytest.mark.parametrize("mode", MODES)
def test_correct_twins_are_silent_and_compute_what_they_compute_alone(
    mode: str,
    program: list[str],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    argv = [*program, *CORRECT, mode]
    ours = run_c_program(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    plain = run_c_program(argv, app_environment(None), tmp_path)
    assert error_messages(ours) == []
    assert [m["id"] for m in ours["messages"]] == []  # type: ignore[union-attr]
    assert (ours["output"], ours["result"]) == (plain["output"], plain["result"])
    khronos = subprocess.run(
        newer_khronos.command(argv), env=newer_khronos.gpu_assisted_environment(), cwd=tmp_path,
        capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    if "binary" in mode:
        # What the docstring says of the Khronos layer: its instrumented binaries crash.
        assert khronos.returncode == -signal.SIGSEGV, khronos.stdout[-2000:]
        return
    theirs = parse_c_output(khronos.stdout)
    assert khronos.returncode == 0 and error_messages(theirs) == []
    assert (theirs["output"], theirs["result"]) == (plain["output"], plain["result"])


@pytest.mark.parametrize("mode", MODES)
def test_layouts_stay_compatible_under_the_khronos_core_checks(
    mode: str,
    program: list[str],
    run_stacked: Runner,  # noqa: F811
) -> None:
    """gpuav above the Khronos layer 1.4.309 (core and synchronization validation, no GPU-AV):
    the app's binds and pushes through its own layout, gpuav's pushes through its layouts, and
    the draws and dispatches with shader objects given gpuav's push-constant ranges are all
    valid; the compute and vertex bugs are still reported."""
    run = run_stacked([*program, "5", "0", "0", "1", mode])
    assert run.findings() == Counter()
    found = Counter(m["id"] for m in run.messages if m["id"].startswith(("GPUAV", "VUID")))
    assert found == Counter(
        {"GPUAV-descriptor-index-out-of-bounds": 1, "VUID-vkCmdDraw-None-08613": 1}
    )


def test_every_module_gpuav_gives_the_driver_passes_spirv_val(
    program: list[str], layer_folder: Path, tmp_path: Path
) -> None:
    """The instrumented code of each shader object, as the running layer made it (the pass
    itself, through an override that keeps its output), per spirv-val and spirv-val 2025.1."""
    kept = tmp_path / "kept"
    kept.mkdir()
    environment = app_environment(
        layer_folder,
        instrumenter="tests.layer.keeping_instrument:instrument",
        extra={"GPUAV_TEST_KEEP": str(kept)},
    )
    ours = run_c_program([*program, "5", "2", "5", "1", "linked"], environment, tmp_path)
    assert len(error_messages(ours)) == 4
    modules = sorted(kept.iterdir())
    assert len(modules) == 3
    for path in modules:
        words = words_from_bytes(path.read_bytes())
        spirv_val(words, "vulkan1.3")
        accepted, said = newer_spirv_val(words, "vulkan1.3")
        assert accepted, said


def test_binaries_handed_out_are_the_apps_own_code(
    program: list[str], layer_folder: Path, tmp_path: Path
) -> None:
    """vkGetShaderBinaryDataEXT of instrumented shader objects gives exactly the binaries the
    app gets without gpuav, so a shader cache written under gpuav runs without it; a later
    run under gpuav cannot know them, and says so (they run unchecked, and unharmed)."""
    under_gpuav, alone = tmp_path / "under_gpuav.bin", tmp_path / "alone.bin"
    gpuav = app_environment(layer_folder, instrumenter=None)
    saving = run_c_program(
        [*program, "5", "0", "0", "1", f"binary-save={under_gpuav}"], gpuav, tmp_path
    )
    assert len(error_messages(saving)) == 2  # made again from those binaries, still checked
    run_c_program([*program, *CORRECT, f"binary-save={alone}"], app_environment(None), tmp_path)
    assert under_gpuav.read_bytes() == alone.read_bytes()
    plain = run_c_program([*program, *CORRECT], app_environment(None), tmp_path)
    loaded = run_c_program(
        [*program, *CORRECT, f"binary-load={under_gpuav}"], app_environment(None), tmp_path
    )
    assert (loaded["output"], loaded["result"]) == (plain["output"], plain["result"])
    later = run_c_program(
        [*program, "5", "0", "0", "1", f"binary-load={under_gpuav}"], gpuav, tmp_path
    )
    assert [m["id"] for m in later["messages"]] == ["GPUAV-shader-object-binary-unchecked"]  # type: ignore[union-attr]


def test_ranges_without_room_for_the_address_keep_the_original_code(
    program: list[str], layer_folder: Path, tmp_path: Path
) -> None:
    """The app's push-constant range covers all of maxPushConstantsSize: gpuav cannot add its
    address, so the shader objects run the app's code, said once with the reason."""
    argv = [*program, "5", "0", "0", "1", "whole-range"]
    ours = run_c_program(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    plain = run_c_program(argv, app_environment(None), tmp_path)
    (notice,) = ours["messages"]  # type: ignore[misc]
    assert notice["id"] == "GPUAV-shader-object-unchecked"
    assert (
        "push-constant ranges (bytes [0, 256)) do not all end at one offset of at most 248"
        in (notice["text"])
    )
    assert ours["output"] == plain["output"]


def _shader_object_id(message_id: str | None) -> str | None:
    """The VUID of an overrun by a shader object where a pipeline's is storageBuffers-06936."""
    return message_id and message_id.replace("storageBuffers-06936", "None-08613")


@pytest.mark.parametrize("name", MESH_SCENARIOS)
def test_task_and_mesh_shader_objects_report_as_their_pipeline_does(
    name: str,
    mesh_program: list[str],
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    """mesh_app's task, mesh and fragment stages bound as shader objects: each planted bug is
    reported with the stage words and line it has with the pipeline, and the Khronos layer
    1.4.309 finds with shader objects what it finds with the pipeline."""
    scenario = PIPELINE_SCENARIOS[name]
    argv = [*mesh_program, *scenario.arguments, "objects"]
    ours = run_c_program(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    theirs = run_c_program(
        newer_khronos.command(argv), newer_khronos.gpu_assisted_environment(), tmp_path
    )
    khronos = _shader_object_id(scenario.khronos_id)
    assert {m["id"] for m in error_messages(theirs)} == ({khronos} if khronos else set())
    errors = error_messages(ours)
    if scenario.gpuav_id is None:
        assert errors == []
        plain = run_c_program(argv, app_environment(None), tmp_path)
        by_pipeline = run_c_program(argv[:-1], app_environment(None), tmp_path)
        assert ours["result"] == plain["result"] == by_pipeline["result"] == theirs["result"]
        return
    (error,) = errors
    assert error["id"] == _shader_object_id(scenario.gpuav_id)
    for pattern in scenario.expected:
        assert re.search(pattern, error["text"]), (pattern, error["text"])
    assert re.search("Shader Object \\(0x[0-9a-f]+\\)\\.", error["text"])
    assert "Pipeline" not in error["text"]


def test_json_report_names_the_shader_object(program: list[str], tmp_path: Path) -> None:
    """The shader object is among the message's objects, with its name; no pipeline is."""
    report = tmp_path / "report.json"
    gpuav_run(["--json", str(report)], [*program, "5", "0", "0", "0"], tmp_path)
    content = json.loads(report.read_text())
    jsonschema.validate(content, report_schema())
    (error,) = [m for m in content["messages"] if m["severity"] == "error"]
    assert [(ref["type"], ref["name"]) for ref in error["objects"]] == [
        (6, None),  # VK_OBJECT_TYPE_COMMAND_BUFFER
        (1000482000, "palette.comp"),  # VK_OBJECT_TYPE_SHADER_EXT
    ]
    assert (error["pipeline"], error["shader"]["module"]) == (None, None)
    assert error["invocation"] == {"stage": "compute", "global_invocation_id": [2, 0, 0]}
