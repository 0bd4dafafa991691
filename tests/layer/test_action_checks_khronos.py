"""Indirect commands and vertex fetches (``gpuav.layer.action_checks``) on lavapipe, side by side
with the Khronos layer 1.4.309's GPU-AV: ``apps/indirect_app.c`` runs one planted bad (or
correct) indirect dispatch or draw, indexed draw or plain draw, under gpuav and under the
Khronos layer. Whatever the Khronos layer's GPU-AV reports, gpuav reports under the same id,
with the numbers; correct twins are silent and draw the same image as without a layer. gpuav
also reports what the Khronos layer misses: plain draws and instanced attributes fetched past
the vertex buffers' end. (The Khronos layer's core checks, such as vkCmdDrawIndirectCount's
maxDrawCount-03111, are host-side API checks outside GPU-AV and not compared.)
"""

from __future__ import annotations

import re
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.shader_resources import STORAGE_BUFFER, resources_of
from gpuav.layer import action_check_parameters
from gpuav.layer.action_checks_spirv import WORDS
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APPS, app_environment, run_c_program
from tests.layer.test_khronos_below import (  # noqa: F401
    NewerKhronos,
    Runner,
    newer_khronos,
    run_stacked,
)
from tests.shaders.glsl import compile_glsl
from tools.generate_action_checks import compile_words

pytestmark = pytest.mark.vulkan

SHADERS = {
    "compute": ("comp", """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Counter { uint groups; } counter;
void main() { atomicAdd(counter.groups, 1u); }
"""),
    "vertex": ("vert", """#version 450
layout(location = 0) in vec2 position;
void main() { gl_Position = vec4(position, 0.0, 1.0); }
"""),
    "instanced": ("vert", """#version 450
layout(location = 0) in vec2 position;
layout(location = 1) in vec2 offset;
void main() { gl_Position = vec4(position * 0.5 + offset, 0.0, 1.0); }
"""),
    "fragment": ("frag", """#version 450
layout(location = 0) out vec4 color;
void main() { color = vec4(1.0, 0.5, 0.25, 1.0); }
"""),
}  # fmt: skip


@dataclass(frozen=True)
class Scenario:
    arguments: tuple[str, ...]
    gpuav_id: str | None  # None: silent
    expected: str = ""  # a regular expression on gpuav's first line
    khronos_id: str | None = None  # what the Khronos layer's GPU-AV says (None: nothing)
    khronos_severity: int = 0x1000


SCENARIOS = {
    "dispatch_x_past_limit": Scenario(
        ("dispatch", "70000", "1", "1"),
        "VUID-VkDispatchIndirectCommand-x-00417",
        r"VkDispatchIndirectCommand::x is 70000, greater than maxComputeWorkGroupCount\[0\] "
        r"\(65535\)",
        "VUID-VkDispatchIndirectCommand-x-00417",
    ),
    "dispatch_z_past_limit": Scenario(
        ("dispatch", "1", "1", "65536"),
        "VUID-VkDispatchIndirectCommand-z-00419",
        r"::z is 65536, greater than maxComputeWorkGroupCount\[2\] \(65535\)",
        "VUID-VkDispatchIndirectCommand-z-00419",
    ),
    "dispatch_inside": Scenario(("dispatch", "65535", "1", "1"), None),
    "first_instance": Scenario(
        ("draw", "1"),
        "VUID-VkDrawIndirectCommand-firstInstance-00501",
        r"firstInstance member of VkDrawIndirectCommand\[0\] is 1",
        "VUID-VkDrawIndirectCommand-firstInstance-00501",
    ),
    "first_instance_zero": Scenario(("draw", "0"), None),
    "count_past_buffer_clamped": Scenario(
        ("count", "3", "2", "2"),
        "GPUAV-draw-count-past-buffer",
        r"draw count of 3, but the indirect buffer holds 2 VkDrawIndirectCommand.*maxDrawCount "
        r"\(2\) keeps",
        "WARNING-GPU-AV-drawCount",
        0x100,
    ),
    "count_past_buffer": Scenario(
        ("count", "3", "4", "2"),
        "VUID-vkCmdDrawIndirectCount-countBuffer-03122",
        r"draw count of 3, but the indirect buffer holds 2 .* 1 of the 3 draws read past",
        "WARNING-GPU-AV-drawCount",
        0x100,
    ),
    "count_inside": Scenario(("count", "2", "2", "2"), None),
    "indexed_indirect_index_range": Scenario(
        ("indexed_indirect", "4", "6"),
        "VUID-VkDrawIndexedIndirectCommand-robustBufferAccess2-08798",
        r"firstIndex 4 and indexCount 6: indices \[4, 10\) reach 4 past the 6 indices bound",
        "VUID-VkDrawIndexedIndirectCommand-robustBufferAccess2-08798",
    ),
    "indexed_indirect_inside": Scenario(("indexed_indirect", "0", "6"), None),
    "index_value_past_vertices": Scenario(
        ("indexed", "5", "0"),
        "VUID-vkCmdDrawIndexed-None-02721",
        r"element 2 is 5, and with vertexOffset 0 it fetches vertex 5, past the 3 vertices .*"
        r"\(1 index",
        "VUID-vkCmdDrawIndexed-None-02721",
    ),
    "vertex_offset_past_vertices": Scenario(
        ("indexed", "0", "3"),
        "VUID-vkCmdDrawIndexed-None-02721",
        r"element 0 is 0, and with vertexOffset 3 it fetches vertex 3, past the 3 vertices .*"
        r"\(3 indices",
        "VUID-vkCmdDrawIndexed-None-02721",
    ),
    "index_value_inside": Scenario(("indexed", "2", "0"), None),
    "index16_value_past_vertices": Scenario(
        ("indexed16", "4", "0"),
        "VUID-vkCmdDrawIndexed-None-02721",
        r"element 2 is 4, and with vertexOffset 0 it fetches vertex 4, past the 3 vertices",
        "VUID-vkCmdDrawIndexed-None-02721",
    ),
    "index16_value_inside": Scenario(("indexed16", "2", "0"), None),
    "index_value_in_secondary": Scenario(
        ("indexed_secondary", "5", "0"),
        "VUID-vkCmdDrawIndexed-None-02721",
        r"element 2 is 5, .* vertex 5",
        "VUID-vkCmdDrawIndexed-None-02721",
    ),
    "vertices_past_buffer": Scenario(
        ("vertices", "1", "3"),
        "VUID-vkCmdDraw-None-02721",
        r"firstVertex 1 and vertexCount 3 fetch vertices \[1, 4\), but the bound vertex buffers "
        r"hold 3 vertices",
    ),
    "vertices_inside": Scenario(("vertices", "0", "3"), None),
    # vkCmdBindVertexBuffers2's size, not the buffer's, bounds the fetch.
    "sized_vertices_past_size": Scenario(
        ("sized_vertices", "0", "3"),
        "VUID-vkCmdDraw-None-02721",
        r"firstVertex 0 and vertexCount 3 fetch vertices \[0, 3\), but the bound vertex buffers "
        r"hold 2 vertices",
    ),
    "sized_vertices_inside": Scenario(("sized_vertices", "0", "2"), None),
    "instances_past_buffer": Scenario(
        ("instances", "1", "2"),
        "VUID-vkCmdDraw-None-02721",
        r"firstInstance 1 and instanceCount 2 fetch instances \[1, 3\), but the bound vertex "
        r"buffers hold 2 instances",
    ),
    "instances_inside": Scenario(("instances", "0", "2"), None),
    # Multi-draws: each draw checked as its single twin is (the Khronos layer checks none).
    "multi_past_buffer": Scenario(
        ("multi", "2", "3"),
        "VUID-vkCmdDrawMultiEXT-None-02721",
        r"vkCmdDrawMultiEXT draw 1 \(pVertexInfo\[1\]\): firstVertex 2 and vertexCount 3 fetch "
        r"vertices \[2, 5\), but the bound vertex buffers hold 3 vertices",
    ),
    "multi_inside": Scenario(("multi", "0", "3"), None),
    "multi_indexed_past_vertices": Scenario(
        ("multi_indexed", "2", "2"),
        "VUID-vkCmdDrawMultiIndexedEXT-None-02721",
        r"vkCmdDrawMultiIndexedEXT \(one of its draws\): index buffer element 1 is 1, and with "
        r"vertexOffset 2 it fetches vertex 3, past the 3 vertices .*\(2 indices of this draw",
    ),
    "multi_indexed_inside": Scenario(("multi_indexed", "2", "0"), None),
}


@pytest.fixture(scope="module")
def indirect_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("indirect_app")
    return compile_c_program(folder / "indirect_app", [APPS / "indirect_app.c"])


@pytest.fixture(scope="module")
def shader_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("indirect_shaders")
    for name, (stage, source) in SHADERS.items():
        words = compile_glsl(source, stage)
        (folder / f"{name}.spv").write_bytes(b"".join(w.to_bytes(4, "little") for w in words))
    return folder


GPU_AV_IDS = ("VUID-Vk", "VUID-vkCmdDrawIndexed-None-02721", "WARNING-GPU-AV-drawCount")


def _reported(parsed: dict[str, object], prefixes: tuple[str, ...]) -> list[dict[str, object]]:
    messages = parsed["messages"]
    assert isinstance(messages, list)
    return [m for m in messages if str(m["id"]).startswith(prefixes)]


@pytest.mark.parametrize("name", SCENARIOS)
def test_gpuav_reports_what_khronos_reports_with_the_numbers(
    name: str,
    indirect_app: Path,
    shader_folder: Path,
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    scenario = SCENARIOS[name]
    argv = [str(indirect_app), str(shader_folder), *scenario.arguments]
    khronos = _reported(
        run_c_program(
            newer_khronos.command(argv), newer_khronos.gpu_assisted_environment(), tmp_path
        ),
        GPU_AV_IDS,
    )
    gpuav_run = run_c_program(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    gpuav = _reported(gpuav_run, ("VUID-", "GPUAV-"))
    plain = run_c_program(argv, app_environment(None), tmp_path)
    # The checks change nothing the app computes.
    assert gpuav_run["result"] == plain["result"]
    if scenario.khronos_id is None:
        assert khronos == [], khronos
    else:
        assert {m["id"] for m in khronos} == {scenario.khronos_id}, khronos
        assert {m["severity"] for m in khronos} == {scenario.khronos_severity}
    if scenario.gpuav_id is None:
        assert gpuav == [], gpuav
        return
    # One message per error (index scans fold their workgroups' records).
    assert [m["id"] for m in gpuav] == [scenario.gpuav_id], gpuav
    text = str(gpuav[0]["text"])
    assert re.search(scenario.expected, text), text
    assert "Index 0 (vkCmd" in text, text


def test_validation_shader_is_what_its_source_compiles_to_and_passes_spirv_val(
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    assert tuple(compile_words()) == WORDS, "run tools/generate_action_checks.py"
    module = tmp_path / "action_checks.spv"
    module.write_bytes(struct.pack(f"<{len(WORDS)}I", *WORDS))
    for validator in ("spirv-val", str(newer_khronos.root / "spirv-val")):
        done = subprocess.run(
            [validator, "--target-env", "vulkan1.1", str(module)], capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr


def test_the_device_check_asks_for_the_storage_buffers_the_validation_shader_binds() -> None:
    """gpuav turns its validation dispatch off on a device whose compute shaders may bind
    fewer storage buffers than ``STORAGE_BUFFERS`` (``hooks_action_checks.create_device``)."""
    bindings = resources_of(list(WORDS)).bindings
    assert {b.descriptor_type for b in bindings} == {STORAGE_BUFFER}
    assert sum(b.count for b in bindings) == action_check_parameters.STORAGE_BUFFERS


def test_every_row_word_has_its_own_place_and_the_block_word_is_last() -> None:
    """The layer sets each row's output block as its last word (``action_checks._add_row``);
    the other words must not collide (the report kind's aliases apart)."""
    words = {
        name: value
        for name, value in vars(action_check_parameters).items()
        if name.startswith("P_") and not name.startswith("P_REPORT_")
    }
    assert sorted(words.values()) == list(range(action_check_parameters.PARAMETER_WORDS))
    assert words["P_BLOCK_WORD"] == action_check_parameters.PARAMETER_WORDS - 1


# Draws of one command buffer past the 256 output blocks of a chunk, over 20 copies of their
# buffers, more than a group's window slots (action_check_groups): their rows fall in two
# groups, each dispatched once for each of the two chunks. Recorded again for a second frame.
REPEATED = {
    "index_value_past_vertices": (("indexed", "5", "0"), "VUID-vkCmdDrawIndexed-None-02721"),
    "first_instance": (("draw", "1"), "VUID-VkDrawIndirectCommand-firstInstance-00501"),
    "indexed_indirect_index_range": (
        ("indexed_indirect", "4", "6"),
        "VUID-VkDrawIndexedIndirectCommand-robustBufferAccess2-08798",
    ),
    "vertices_past_buffer": (("vertices", "1", "3"), "VUID-vkCmdDraw-None-02721"),
}
DRAWS = 300
FRAMES = 2
COPIES = 20
assert COPIES > action_check_parameters.WINDOW_SLOTS


@pytest.mark.parametrize("name", REPEATED)
def test_every_draw_of_a_command_buffer_recorded_again_is_reported_once_a_frame(
    name: str, indirect_app: Path, shader_folder: Path, layer_folder: Path, tmp_path: Path
) -> None:
    arguments, message_id = REPEATED[name]
    argv = [str(indirect_app), str(shader_folder), *arguments]
    extra = {
        "INDIRECT_APP_REPEAT": str(DRAWS),
        "INDIRECT_APP_FRAMES": str(FRAMES),
        "INDIRECT_APP_BUFFERS": str(COPIES),
    }
    gpuav = run_c_program(
        argv, app_environment(layer_folder, instrumenter=None, extra=extra), tmp_path
    )
    plain = run_c_program(argv, app_environment(None, extra=extra), tmp_path)
    assert gpuav["result"] == plain["result"]
    messages = _reported(gpuav, ("VUID-", "GPUAV-"))
    assert {m["id"] for m in messages} == {message_id}
    numbers = sorted(
        int(found.group(1))
        for m in messages
        if (found := re.search(r"Draw Index (\d+) \(vkCmd", str(m["text"])))
    )
    assert numbers == sorted(list(range(DRAWS)) * FRAMES)


@pytest.mark.parametrize(
    "arguments", [("indexed", "2", "0"), ("draw", "0"), ("indexed_indirect", "0", "6")]
)
def test_correct_draws_recorded_again_stay_silent(
    arguments: tuple[str, ...],
    indirect_app: Path,
    shader_folder: Path,
    layer_folder: Path,
    tmp_path: Path,
) -> None:
    argv = [str(indirect_app), str(shader_folder), *arguments]
    extra = {
        "INDIRECT_APP_REPEAT": str(DRAWS),
        "INDIRECT_APP_FRAMES": str(FRAMES),
        "INDIRECT_APP_BUFFERS": str(COPIES),
    }
    gpuav = run_c_program(
        argv, app_environment(layer_folder, instrumenter=None, extra=extra), tmp_path
    )
    plain = run_c_program(argv, app_environment(None, extra=extra), tmp_path)
    assert gpuav["result"] == plain["result"]
    assert _reported(gpuav, ("VUID-", "GPUAV-")) == []


@pytest.mark.parametrize(
    "arguments",
    [
        ("indexed", "2", "0"),
        ("indexed16", "2", "0"),
        ("draw", "0"),
        ("count", "2", "2", "2"),
        ("indexed_indirect", "0", "6"),
        ("vertices", "0", "3"),
        ("dispatch", "1", "1", "1"),
    ],
)
def test_the_khronos_layer_beneath_sees_nothing_wrong_in_gpuavs_validation_work(
    arguments: tuple[str, ...],
    run_stacked: Runner,  # noqa: F811
    indirect_app: Path,
    shader_folder: Path,
) -> None:
    """Re-recorded command buffers of checks over two output chunks and 20 buffer sets,
    with the Khronos layer 1.4.309 below gpuav (synchronization validation on): it says what
    it says of the app alone (which leaves its objects to vkDestroyDevice), nothing more."""
    extra = {
        "INDIRECT_APP_REPEAT": str(DRAWS),
        "INDIRECT_APP_FRAMES": str(FRAMES),
        "INDIRECT_APP_BUFFERS": str(COPIES),
    }
    argv = [str(indirect_app), str(shader_folder), *arguments]
    stacked = run_stacked(argv, extra=extra)
    alone = run_stacked(argv, gpuav=False, extra=extra)
    assert "result" in stacked.stdout
    assert set(alone.findings()) <= {"VUID-vkDestroyDevice-device-05137"}
    assert stacked.findings() == alone.findings()


DYNAMIC_INPUT_SCENARIOS = [
    "index_value_past_vertices",
    "vertices_past_buffer",
    "instances_past_buffer",
    "index_value_inside",
    "instances_inside",
]


@pytest.mark.parametrize("name", DYNAMIC_INPUT_SCENARIOS)
def test_dynamic_vertex_input_is_fetch_checked(
    name: str,
    indirect_app: Path,
    shader_folder: Path,
    layer_folder: Path,
    newer_khronos: NewerKhronos,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The same fetches with the pipeline's vertex input set by vkCmdSetVertexInputEXT."""
    scenario = SCENARIOS[name]
    argv = [str(indirect_app), str(shader_folder), *scenario.arguments]
    extra = {"INDIRECT_APP_DYNAMIC_INPUT": "1"}
    gpuav_run = run_c_program(
        argv, app_environment(layer_folder, instrumenter=None, extra=extra), tmp_path
    )
    plain = run_c_program(argv, app_environment(None, extra=extra), tmp_path)
    assert gpuav_run["result"] == plain["result"]
    gpuav = _reported(gpuav_run, ("VUID-", "GPUAV-"))
    khronos_environment = newer_khronos.gpu_assisted_environment()
    khronos_environment.update(extra)
    khronos = _reported(
        run_c_program(newer_khronos.command(argv), khronos_environment, tmp_path), GPU_AV_IDS
    )
    if scenario.gpuav_id is None:
        assert gpuav == [] and khronos == [], (gpuav, khronos)
        return
    assert [m["id"] for m in gpuav] == [scenario.gpuav_id], gpuav
    assert re.search(scenario.expected, str(gpuav[0]["text"]))
    # Where the Khronos layer checks these fetches, it does so with dynamic input too.
    assert {m["id"] for m in khronos} <= {scenario.gpuav_id}
