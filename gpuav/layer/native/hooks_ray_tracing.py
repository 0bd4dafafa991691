"""Ray-tracing pipelines and the commands that trace rays, hooked as compute pipelines and
dispatches are: every stage gets its instrumented module, and each trace gets an output block
bound at the ray-tracing bind point.

A deferred operation the app passes is not passed down while GPU-AV is on: the pipelines are
made at once (``VK_OPERATION_NOT_DEFERRED_KHR``, which the app must accept), so that their
handles exist for the layer to track before any command buffer binds them.
"""

from __future__ import annotations

from typing import Any

from vulkan._vulkan import ffi as vkffi

from gpuav.layer.calls import PIPELINE_BIND_POINT_RAY_TRACING, PipelineInfo
from gpuav.layer.native.dispatch import REGISTRY, enabled_state
from gpuav.layer.native.hooks_commands import _recorded_action
from gpuav.layer.native.hooks_pipelines import (
    _apply_to_stage,
    _buffer_robustness,
    _create_pipelines,
    _creates_library,
    _library_handles,
    _stage_info,
)
from gpuav.layer.native.vk import address
from gpuav.layer.pipelines import PipelinePlan

OPERATION_NOT_DEFERRED = 1000268003
_COMMAND = "vkCreateRayTracingPipelinesKHR"


def _ray_tracing_infos(create_infos: int, count: int) -> list[PipelineInfo]:
    infos = vkffi.cast("VkRayTracingPipelineCreateInfoKHR *", create_infos)
    return [
        PipelineInfo(
            address(infos[i].layout),
            tuple(_stage_info(infos[i].pStages[s]) for s in range(infos[i].stageCount)),
            _library_handles(infos[i].pLibraryInfo),
            _buffer_robustness(
                infos[i].pNext, [infos[i].pStages[s].pNext for s in range(infos[i].stageCount)]
            ),
            _creates_library(infos[i]),
        )
        for i in range(count)
    ]


def _patched_ray_tracing(
    create_infos: int, count: int, plans: list[PipelinePlan], keep: list[Any]
) -> int:
    copies = vkffi.new("VkRayTracingPipelineCreateInfoKHR[]", count)
    keep.append(copies)
    vkffi.memmove(
        copies,
        vkffi.cast("VkRayTracingPipelineCreateInfoKHR *", create_infos),
        vkffi.sizeof(copies),
    )
    for i, plan in enumerate(plans):
        if not plan.changes_create_info:
            continue
        stage_count = copies[i].stageCount
        stages = vkffi.new("VkPipelineShaderStageCreateInfo[]", stage_count)
        keep.append(stages)
        vkffi.memmove(stages, copies[i].pStages, vkffi.sizeof(stages))
        for index in range(stage_count):
            _apply_to_stage(stages[index], index, plan, keep)
        copies[i].pStages = stages
    return address(copies)


def create_ray_tracing_pipelines(
    device: int, deferred_operation: int, cache: int, count: int, create_infos: int,
    allocator: int, pipelines_out: int,
) -> int:  # fmt: skip
    made_now = bool(deferred_operation) and enabled_state(REGISTRY.device_of(device)) is not None
    result = _create_pipelines(
        _COMMAND, PIPELINE_BIND_POINT_RAY_TRACING, _ray_tracing_infos, _patched_ray_tracing,
        device, cache, count, create_infos, allocator, pipelines_out, deferred_operation,
    )  # fmt: skip
    return OPERATION_NOT_DEFERRED if made_now and result == 0 else result


def cmd_trace_rays(
    command_buffer: int, raygen: int, miss: int, hit: int, callable_: int, width: int,
    height: int, depth: int,
) -> None:  # fmt: skip
    _recorded_action(command_buffer, PIPELINE_BIND_POINT_RAY_TRACING, "vkCmdTraceRaysKHR")


def cmd_trace_rays_indirect(
    command_buffer: int, raygen: int, miss: int, hit: int, callable_: int, indirect: int
) -> None:
    _recorded_action(command_buffer, PIPELINE_BIND_POINT_RAY_TRACING, "vkCmdTraceRaysIndirectKHR")


def cmd_trace_rays_indirect2(command_buffer: int, indirect: int) -> None:
    _recorded_action(command_buffer, PIPELINE_BIND_POINT_RAY_TRACING, "vkCmdTraceRaysIndirect2KHR")
