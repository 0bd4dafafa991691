"""Draws of extensions (transform feedback, mesh shaders): actions like vkCmdDraw (multi
draws and indirect mesh draws are hooks_action_checks', which checks their parameters too).

Unhooked, they ran an instrumented graphics pipeline with no output block of their own: an
error went to whatever block an earlier draw had bound, or to no descriptor at all when they
came first in the command buffer. A mesh pipeline's task, mesh and fragment stages are all
instrumented.
"""

from __future__ import annotations

from gpuav.layer.calls import PIPELINE_BIND_POINT_GRAPHICS
from gpuav.layer.native.hooks_commands import _recorded_action


def cmd_draw_indirect_byte_count(
    command_buffer: int, instances: int, first: int, counter: int, counter_offset: int,
    counter_value_offset: int, stride: int,
) -> None:  # fmt: skip
    _recorded_action(command_buffer, PIPELINE_BIND_POINT_GRAPHICS, "vkCmdDrawIndirectByteCountEXT")


def cmd_draw_mesh_tasks(command_buffer: int, x: int, y: int, z: int) -> None:
    _recorded_action(command_buffer, PIPELINE_BIND_POINT_GRAPHICS, "vkCmdDrawMeshTasksEXT")
