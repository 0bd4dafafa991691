"""Draws of extensions (transform feedback, mesh shaders): actions like vkCmdDraw (multi
draws are hooks_action_checks', which checks their fetches too).

Unhooked, they ran an instrumented graphics pipeline with no output block of their own: an
error went to whatever block an earlier draw had bound, or to no descriptor at all when they
came first in the command buffer. A mesh pipeline's task, mesh and fragment stages are all
instrumented.
"""

from __future__ import annotations

from gpuav.layer.calls import PIPELINE_BIND_POINT_GRAPHICS
from gpuav.layer.native.hooks_commands import _action


def cmd_draw_indirect_byte_count(
    command_buffer: int, instances: int, first: int, counter: int, counter_offset: int,
    counter_value_offset: int, stride: int,
) -> None:  # fmt: skip
    table = _action(command_buffer, PIPELINE_BIND_POINT_GRAPHICS, "vkCmdDrawIndirectByteCountEXT")
    if table is not None:
        table.vkCmdDrawIndirectByteCountEXT(
            command_buffer, instances, first, counter, counter_offset, counter_value_offset,
            stride,
        )  # fmt: skip


def cmd_draw_mesh_tasks(command_buffer: int, x: int, y: int, z: int) -> None:
    table = _action(command_buffer, PIPELINE_BIND_POINT_GRAPHICS, "vkCmdDrawMeshTasksEXT")
    if table is not None:
        table.vkCmdDrawMeshTasksEXT(command_buffer, x, y, z)


def cmd_draw_mesh_tasks_indirect(
    command_buffer: int, buffer: int, offset: int, count: int, stride: int
) -> None:
    table = _action(command_buffer, PIPELINE_BIND_POINT_GRAPHICS, "vkCmdDrawMeshTasksIndirectEXT")
    if table is not None:
        table.vkCmdDrawMeshTasksIndirectEXT(command_buffer, buffer, offset, count, stride)


def cmd_draw_mesh_tasks_indirect_count(
    command_buffer: int, buffer: int, offset: int, count_buffer: int, count_offset: int,
    max_count: int, stride: int,
) -> None:  # fmt: skip
    command = "vkCmdDrawMeshTasksIndirectCountEXT"
    table = _action(command_buffer, PIPELINE_BIND_POINT_GRAPHICS, command)
    if table is not None:
        table.vkCmdDrawMeshTasksIndirectCountEXT(
            command_buffer, buffer, offset, count_buffer, count_offset, max_count, stride
        )
