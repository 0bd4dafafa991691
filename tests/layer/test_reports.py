"""Errors written into output blocks reach the app's messenger with the action's context.

The shaders write their own records (see ``shaders/*_reporting.*``) through the stand-in
instrumentation, so these tests cover the layer's whole path: shader ids, the set index,
per-action blocks, the read-back after submit, decoding and delivery.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.layer.conftest import RunC, RunPython

pytestmark = pytest.mark.vulkan

OUT_OF_BOUNDS = "GPUAV-descriptor-index-out-of-bounds"
ERROR_SEVERITY = 0x1000


def compute_arguments(spirv, *extra: str) -> list[str]:
    return ["--shader", str(spirv("region_reporting.comp")), "--messenger", "--names", *extra]


def graphics_arguments(spirv, *extra: str, reporting: bool = True) -> list[str]:
    suffix = "_reporting" if reporting else ""
    return [
        "--mode", "graphics", "--vert", str(spirv(f"quad{suffix}.vert")),
        "--frag", str(spirv(f"quad{suffix}.frag")), "--messenger", "--names", *extra,
    ]  # fmt: skip


def test_compute_error_names_dispatch_pipeline_shader_and_invocation(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    run = run_python_app(compute_arguments(spirv, "--bad-dispatch", "2"), layer_folder)
    (message,) = run.messages
    assert message["id"] == OUT_OF_BOUNDS
    assert message["severity"] == ERROR_SEVERITY
    text = message["text"]
    assert "Index of 6 used to index descriptor array of length 4." in text
    assert re.search(r"Command buffer \(ComputeCommandBuffer\)\(0x[0-9a-f]+\)", text)
    assert "Dispatch Index 2 (vkCmdDispatch)" in text
    assert re.search(r"Pipeline \(ComputePipeline\)\(0x[0-9a-f]+\)", text)
    assert re.search(r"Shader Module \(ComputeShader\)\(0x[0-9a-f]+\)", text)
    assert "Shader Instruction Index = 42." in text
    assert "Stage = Compute." in text
    assert "Global invocation ID (x, y, z) = (5, 0, 0)." in text
    names = {(item["type"], item["name"]) for item in message["objects"]}
    assert names == {(6, "ComputeCommandBuffer"), (19, "ComputePipeline"), (15, "ComputeShader")}


@pytest.mark.parametrize("command", ["dispatch", "indirect", "base"])
def test_every_dispatch_command_gets_an_output_block(
    run_python_app: RunPython, spirv, layer_folder: Path, command: str
) -> None:
    arguments = compute_arguments(spirv, "--bad-dispatch", "1", "--dispatch-command", command)
    run = run_python_app(arguments, layer_folder)
    (message,) = run.with_id(OUT_OF_BOUNDS)
    names = {
        "dispatch": "vkCmdDispatch",
        "indirect": "vkCmdDispatchIndirect",
        "base": "vkCmdDispatchBase",
    }
    assert f"Dispatch Index 1 ({names[command]})" in message["text"]


DRAW_COMMANDS = {
    "draw": "vkCmdDraw",
    "indexed": "vkCmdDrawIndexed",
    "indirect": "vkCmdDrawIndirect",
    "indexed_indirect": "vkCmdDrawIndexedIndirect",
    "indirect_count": "vkCmdDrawIndirectCount",
    "indexed_indirect_count": "vkCmdDrawIndexedIndirectCount",
}


@pytest.mark.parametrize("command", sorted(DRAW_COMMANDS))
def test_only_the_second_draw_errs_in_vertex_and_fragment_stages(
    run_python_app: RunPython, spirv, layer_folder: Path, command: str
) -> None:
    arguments = graphics_arguments(
        spirv, "--draws", "2", "--bad-draw", "1", "--draw-command", command
    )
    run = run_python_app(arguments, layer_folder)
    # The reporting shaders name a set only the layer provides: compare with the plain ones.
    clean = run_python_app(graphics_arguments(spirv, "--draws", "2", reporting=False))
    assert run.result["data_sha256"] == clean.result["data_sha256"]
    vertex, fragment = sorted(run.with_id(OUT_OF_BOUNDS), key=lambda m: "Fragment" in m["text"])
    names = DRAW_COMMANDS
    for message in (vertex, fragment):
        assert f"Draw Index 1 ({names[command]})" in message["text"]
        assert "(DrawCommandBuffer)" in message["text"]
        assert "Pipeline (GraphicsPipeline)" in message["text"]
    assert "Index of 3 used to index descriptor array of length 2." in vertex["text"]
    assert "Shader Module (VertexShader)" in vertex["text"]
    assert "Stage = Vertex. Vertex index = 4. Instance index = 0." in vertex["text"]
    assert "Index of 9 used to index descriptor array of length 8." in fragment["text"]
    assert "Shader Module (FragmentShader)" in fragment["text"]
    assert "Stage = Fragment. Fragment coord (x,y) = (9.5, 2.5)." in fragment["text"]
    assert len(run.messages) == 2


def test_shader_module_destroyed_before_submit_still_reports(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    arguments = compute_arguments(
        spirv, "--bad-dispatch", "0", "--destroy-module-early", "--destroy-layout-early"
    )
    run = run_python_app(arguments, layer_folder)
    (message,) = run.messages
    assert "Dispatch Index 0 (vkCmdDispatch)" in message["text"]
    assert re.search(r"Shader Module \(0x[0-9a-f]+\)", message["text"])
    assert "Shader Instruction Index = 42." in message["text"]


def test_secondary_command_buffer_blocks_are_read(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    run = run_python_app(
        compute_arguments(spirv, "--bad-dispatch", "3", "--secondary"), layer_folder
    )
    (message,) = run.messages
    assert "Command buffer (SecondaryCommandBuffer)" in message["text"]
    assert "Dispatch Index 3 (vkCmdDispatch)" in message["text"]


def test_queue_submit2_is_read_back(run_python_app: RunPython, spirv, layer_folder: Path) -> None:
    run = run_python_app(compute_arguments(spirv, "--bad-dispatch", "1", "--submit2"), layer_folder)
    assert len(run.with_id(OUT_OF_BOUNDS)) == 1


def test_each_submit_reports_and_blocks_are_cleared(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    """Three submits of one command buffer: three reports, none doubled (blocks re-zeroed);
    re-recording resets the action numbering."""
    arguments = compute_arguments(spirv, "--bad-dispatch", "1", "--repeat", "3", "--rerecord")
    run = run_python_app(arguments, layer_folder)
    messages = run.with_id(OUT_OF_BOUNDS)
    assert len(messages) == 3
    assert all("Dispatch Index 1 (vkCmdDispatch)" in m["text"] for m in messages)


def test_many_dispatches_span_several_output_chunks(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    run = run_python_app(
        compute_arguments(spirv, "--dispatches", "600", "--bad-dispatch", "555"), layer_folder
    )
    (message,) = run.messages
    assert "Dispatch Index 555 (vkCmdDispatch)" in message["text"]


def test_c_app_reports_compute_vertex_and_fragment_errors(
    run_c_app: RunC, layer_folder: Path
) -> None:
    shaders = ("region_reporting.comp", "quad_reporting.vert", "quad_reporting.frag")
    arguments = ["--bad-dispatch", "2", "--bad-draw", "1", "--messenger"]
    run = run_c_app(shaders, arguments, layer_folder)
    clean = run_c_app(("region.comp", "quad.vert", "quad.frag"), ["--messenger"])
    assert (run.result["compute"], run.result["pixels"]) == (
        clean.result["compute"],
        clean.result["pixels"],
    )
    texts = [m["text"] for m in run.with_id(OUT_OF_BOUNDS)]
    assert len(texts) == 3
    assert "Dispatch Index 2 (vkCmdDispatch)" in texts[0] and "Stage = Compute." in texts[0]
    assert any("Stage = Vertex." in t and "Draw Index 1 (vkCmdDraw)" in t for t in texts)
    assert any("Stage = Fragment." in t and "Draw Index 1 (vkCmdDraw)" in t for t in texts)


def test_c_app_without_messenger_gets_messages_on_stderr(
    run_c_app: RunC, layer_folder: Path
) -> None:
    shaders = ("region_reporting.comp", "quad.vert", "quad.frag")
    run = run_c_app(shaders, ["--bad-dispatch", "0"], layer_folder)
    assert run.messages == []
    assert f"Message Id Name: {OUT_OF_BOUNDS}" in run.stderr
    assert "Dispatch Index 0 (vkCmdDispatch)" in run.stderr


def test_host_event_wait_is_not_waited_for_and_is_reported_later(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    """Seed 000's CmdWaitEvents limitation is gone: gpuav never waits for a submission itself,
    so a host-set event cannot deadlock it and needs no warning; the error is reported once the
    app's own wait shows the submission finished."""
    run = run_python_app(
        compute_arguments(spirv, "--bad-dispatch", "1", "--host-event"), layer_folder
    )
    assert [message["id"] for message in run.messages] == [OUT_OF_BOUNDS]


def test_stage_with_inline_code_instead_of_a_module(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    """VK_KHR_maintenance5: module VK_NULL_HANDLE, VkShaderModuleCreateInfo in the stage's pNext;
    the layer instruments a copy of the chained code."""
    run = run_python_app(
        compute_arguments(spirv, "--bad-dispatch", "1", "--inline-module"), layer_folder
    )
    clean = run_python_app(["--shader", str(spirv("region.comp")), "--inline-module"])
    assert run.result["data_sha256"] == clean.result["data_sha256"]
    (message,) = run.messages
    assert "Dispatch Index 1 (vkCmdDispatch)" in message["text"]
    assert "Shader Module (none: code given in the pipeline create info)." in message["text"]


def test_debug_report_callbacks_receive_messages(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    arguments = [
        "--shader",
        str(spirv("region_reporting.comp")),
        "--bad-dispatch",
        "0",
        "--report-callback",
    ]
    run = run_python_app(arguments, layer_folder)
    (message,) = run.messages
    assert message["report_callback"] and message["id"] == OUT_OF_BOUNDS
    assert message["severity"] == 0x8  # VK_DEBUG_REPORT_ERROR_BIT_EXT
    assert message["object_type"] == 6  # the command buffer
    assert "Dispatch Index 0 (vkCmdDispatch)" in message["text"]


def test_timeline_wait_before_signal_does_not_deadlock(
    run_python_app: RunPython, spirv, layer_folder: Path
) -> None:
    """The batch waits on a timeline value the host signals after vkQueueSubmit returns: the
    layer must not wait inside vkQueueSubmit; both submissions are still reported."""
    arguments = compute_arguments(spirv, "--bad-dispatch", "1", "--timeline-wait", "--repeat", "2")
    run = run_python_app(arguments, layer_folder)
    assert len(run.with_id(OUT_OF_BOUNDS)) == 2
