"""Entry points that set what the vertex-fetch checks (``action_checks``) read: pipelines'
vertex input and task stages, and vertex input set by vkCmdSetVertexInputEXT (the vertex and
index buffers bound are noted in C: ``fetch_bindings``). Each wraps the layer's general hook
of the same command; a failure here is reported and the app's call goes down as it came.
"""

from __future__ import annotations

from typing import Any

from vulkan._vulkan import ffi as vkffi

from gpuav.layer import action_checks as checks
from gpuav.layer.native import hooks_pipelines
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.hooks_commands import lookup
from gpuav.layer.native.vk import handles_at
from gpuav.layer.state import CommandBufferState
from gpuav.layer.vertex_input import (
    INPUT_RATE_INSTANCE,
    Attribute,
    VertexInput,
    format_bytes,
)

DYNAMIC_STATE_VERTEX_INPUT = 1000352000
DYNAMIC_STATE_VERTEX_INPUT_BINDING_STRIDE = 1000267005
DYNAMIC_STATE_PRIMITIVE_RESTART_ENABLE = 1000377004
SHADER_STAGE_TASK = 0x40


# -- pipelines ----------------------------------------------------------------------------------


def _vertex_input(info: Any) -> VertexInput | None:
    dynamic: set[int] = set()
    if info.pDynamicState != vkffi.NULL:
        states = info.pDynamicState
        dynamic = {int(states.pDynamicStates[k]) for k in range(states.dynamicStateCount)}
    # Primitive restart set by a command gpuav does not follow counts as on: an index of all
    # ones is then never taken for a vertex.
    restart = DYNAMIC_STATE_PRIMITIVE_RESTART_ENABLE in dynamic or bool(
        info.pInputAssemblyState != vkffi.NULL and info.pInputAssemblyState.primitiveRestartEnable
    )
    if DYNAMIC_STATE_VERTEX_INPUT in dynamic:
        return VertexInput({}, frozenset(), (), restart, dynamic=True)
    if info.pVertexInputState == vkffi.NULL:
        return None
    state = info.pVertexInputState
    strides = {}
    instance_rate = set()
    for k in range(state.vertexBindingDescriptionCount):
        binding = state.pVertexBindingDescriptions[k]
        strides[int(binding.binding)] = int(binding.stride)
        if int(binding.inputRate) == INPUT_RATE_INSTANCE:
            instance_rate.add(int(binding.binding))
    sizes = format_bytes()
    attributes = []
    for k in range(state.vertexAttributeDescriptionCount):
        attribute = state.pVertexAttributeDescriptions[k]
        attributes.append(
            Attribute(
                int(attribute.location),
                int(attribute.binding),
                int(attribute.format),
                int(attribute.offset),
                sizes.get(int(attribute.format), 0),
            )
        )
    return VertexInput(
        strides,
        frozenset(instance_rate),
        tuple(attributes),
        restart,
        DYNAMIC_STATE_VERTEX_INPUT_BINDING_STRIDE in dynamic,
    )


def create_graphics_pipelines(
    device: int, cache: int, count: int, create_infos: int, allocator: int, pipelines_out: int
) -> int:
    result = hooks_pipelines.create_graphics_pipelines(
        device, cache, count, create_infos, allocator, pipelines_out
    )
    record = REGISTRY.device_of(device)
    engine_ = None if record is None or record.state is None else record.state.action_checks
    if result >= 0 and engine_ is not None and record is not None:
        try:
            infos = vkffi.cast("VkGraphicsPipelineCreateInfo *", create_infos)
            for index, handle in enumerate(handles_at(pipelines_out, count)):
                if not handle:
                    continue
                info = infos[index]
                # A linked pipeline's vertex input and task stage may live in its libraries.
                libraries = hooks_pipelines._linked_libraries(info)
                vertex_input = _vertex_input(info) or next(
                    filter(None, map(engine_.vertex_inputs.get, libraries)), None
                )
                if vertex_input is not None:
                    engine_.vertex_inputs[handle] = vertex_input
                stages = [int(info.pStages[k].stage) for k in range(info.stageCount)]
                if any(stage & SHADER_STAGE_TASK for stage in stages) or any(
                    library in engine_.task_pipelines for library in libraries
                ):
                    engine_.task_pipelines.add(handle)
        except BaseException as error:
            report_error("vkCreateGraphicsPipelines (vertex input)", error, record.instance.state)
    return result


def destroy_pipeline(device: int, pipeline: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    engine_ = None if record is None or record.state is None else record.state.action_checks
    if engine_ is not None:
        checks.forget_pipeline(engine_, pipeline)
    hooks_pipelines.destroy_pipeline(device, pipeline, allocator)


# -- bindings -----------------------------------------------------------------------------------


def _checked_state(command_buffer: int) -> tuple[DeviceRecord | None, CommandBufferState | None]:
    """The device record, and the command buffer's state where the checks are on."""
    record, state = lookup(command_buffer)
    if state is None or state.device.action_checks is None:
        return record, None
    return record, state


def cmd_set_vertex_input(
    command_buffer: int, binding_count: int, bindings: int, attribute_count: int, attributes: int
) -> None:
    record, state = _checked_state(command_buffer)
    if record is None:
        return
    record.next.vkCmdSetVertexInputEXT(command_buffer, binding_count, bindings, attribute_count,
                                       attributes)  # fmt: skip
    if state is not None:
        try:
            vertex_input = _dynamic_vertex_input(
                binding_count, bindings, attribute_count, attributes
            )
            checks.post_call_record_set_vertex_input(state, vertex_input)
        except BaseException as error:
            report_error("vkCmdSetVertexInputEXT", error, record.instance.state)


def _dynamic_vertex_input(
    binding_count: int, bindings: int, attribute_count: int, attributes: int
) -> VertexInput:
    """vkCmdSetVertexInputEXT's state; bindings with a divisor other than 1 and their
    attributes are left out (their instances are not counted one per instance)."""
    strides = {}
    instance_rate = set()
    divided = set()
    described = vkffi.cast("VkVertexInputBindingDescription2EXT *", bindings)
    for k in range(binding_count):
        binding = described[k]
        strides[int(binding.binding)] = int(binding.stride)
        if int(binding.inputRate) == INPUT_RATE_INSTANCE:
            instance_rate.add(int(binding.binding))
        if int(binding.divisor) != 1:
            divided.add(int(binding.binding))
    sizes = format_bytes()
    items = vkffi.cast("VkVertexInputAttributeDescription2EXT *", attributes)
    fetched = tuple(
        Attribute(
            int(items[k].location),
            int(items[k].binding),
            int(items[k].format),
            int(items[k].offset),
            sizes.get(int(items[k].format), 0),
        )
        for k in range(attribute_count)
        if int(items[k].binding) not in divided
    )
    return VertexInput(strides, frozenset(instance_rate), fetched)
