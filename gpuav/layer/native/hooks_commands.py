"""Command buffer entry points. The draw and dispatch ones run per action, so they are written
out flat: find the command buffer's state, let the engine bind the output block. layer.c calls
down around the hooks of prototypes.RECORDED_AROUND_GOING_DOWN; the others call down here."""

from __future__ import annotations

from typing import Any

from vulkan._vulkan import ffi as vkffi

from gpuav.layer import command_buffers as engine
from gpuav.layer import execution_sets
from gpuav.layer.calls import (
    COMMAND_BUFFER_LEVEL_PRIMARY,
    PIPELINE_BIND_POINT_COMPUTE,
    PIPELINE_BIND_POINT_GRAPHICS,
    SHADER_STAGE_COMPUTE,
)
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord, Native, tracked_command_buffer
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import at, handles_at
from gpuav.layer.state import CommandBufferState

ERROR_INITIALIZATION_FAILED = -3
_devices = REGISTRY.devices


def _dispatch_key(handle: int) -> int:
    """Replaced at first use by the C helper itself (one attribute lookup less per draw)."""
    global _dispatch_key
    _dispatch_key = Native.lib.gpuav_dispatch_key
    return int(_dispatch_key(handle))


def _device(handle: int) -> DeviceRecord | None:
    return _devices.get(Native.lib.gpuav_dispatch_key(handle))


def lookup(command_buffer: int) -> tuple[DeviceRecord | None, CommandBufferState | None]:
    """The device record of a command buffer, and its state where gpuav tracks it."""
    record = _devices.get(_dispatch_key(command_buffer))
    if record is None or record.state is None:
        return record, None
    return record, record.state.command_buffers.get(command_buffer)


# -- life cycle -------------------------------------------------------------------------------


def allocate_command_buffers(device: int, allocate_info: int, command_buffers_out: int) -> int:
    record = _device(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkAllocateCommandBuffers(device, allocate_info, command_buffers_out))
    if result == 0 and record.state is not None and record.state.enabled:
        try:
            info = at(allocate_info, "VkCommandBufferAllocateInfo")
            handles = handles_at(command_buffers_out, int(info.commandBufferCount))
            engine.post_call_record_allocate_command_buffers(
                record.state,
                int(vkffi.cast("uintptr_t", info.commandPool)),
                int(info.level) == COMMAND_BUFFER_LEVEL_PRIMARY,
                handles,
            )
        except BaseException as error:
            report_error("vkAllocateCommandBuffers", error, record.instance.state)
    return result


def free_command_buffers(device: int, pool: int, count: int, command_buffers: int) -> None:
    record = _device(device)
    if record is None:
        return
    if record.state is not None:
        try:
            engine.pre_call_record_free_command_buffers(
                record.state, [h for h in handles_at(command_buffers, count) if h]
            )
        except BaseException as error:
            report_error("vkFreeCommandBuffers", error, record.instance.state)
    record.next.vkFreeCommandBuffers(device, pool, count, command_buffers)


def reset_command_pool(device: int, pool: int, flags: int) -> int:
    record = _device(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    if record.state is not None:
        try:
            engine.pre_call_record_reset_command_pool(record.state, pool)
        except BaseException as error:
            report_error("vkResetCommandPool", error, record.instance.state)
    return int(record.next.vkResetCommandPool(device, pool, flags))


def destroy_command_pool(device: int, pool: int, allocator: int) -> None:
    record = _device(device)
    if record is None:
        return
    if record.state is not None and pool:
        try:
            for handle in record.state.command_pools.get(pool, ()):
                Native.lib.gpuav_fetch_bindings_forget(handle)
            engine.pre_call_record_destroy_command_pool(record.state, pool)
        except BaseException as error:
            report_error("vkDestroyCommandPool", error, record.instance.state)
    record.next.vkDestroyCommandPool(device, pool, allocator)


def begin_command_buffer(command_buffer: int, begin_info: int) -> int:
    record, state = lookup(command_buffer)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    if state is not None:
        try:
            engine.pre_call_record_begin_command_buffer(state)
        except BaseException as error:
            report_error("vkBeginCommandBuffer", error, record.instance.state)
    return int(record.next.vkBeginCommandBuffer(command_buffer, begin_info))


def end_command_buffer(command_buffer: int) -> int:
    record, state = lookup(command_buffer)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    if state is not None:
        try:
            engine.pre_call_record_end_command_buffer(state)
        except BaseException as error:
            report_error("vkEndCommandBuffer", error, record.instance.state)
    return int(record.next.vkEndCommandBuffer(command_buffer))


def reset_command_buffer(command_buffer: int, flags: int) -> int:
    record, state = lookup(command_buffer)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    if state is not None:
        try:
            engine.pre_call_record_reset_command_buffer(state)
        except BaseException as error:
            report_error("vkResetCommandBuffer", error, record.instance.state)
    return int(record.next.vkResetCommandBuffer(command_buffer, flags))


# -- recording --------------------------------------------------------------------------------


def cmd_bind_pipeline(command_buffer: int, bind_point: int, pipeline: int) -> None:
    """After layer.c called down (prototypes.RECORDED_AROUND_GOING_DOWN). Renderers bind a
    pipeline per draw: the look-up goes through ``dispatch.RECORDING``."""
    state = tracked_command_buffer(command_buffer)
    if state is not None:
        try:
            engine.post_call_record_cmd_bind_pipeline(state, bind_point, pipeline, bound_later=True)
        except BaseException as error:
            report_error("vkCmdBindPipeline", error, state.device.instance)


def _action(command_buffer: int, bind_point: int, command: str) -> Any:
    """Engine work of an action whose hook calls down itself; returns the next layer's
    table."""
    record = _devices.get(_dispatch_key(command_buffer))
    if record is None:
        return None
    device = record.state
    if device is not None:
        state = device.command_buffers.get(command_buffer)
        if state is not None:
            try:
                engine.pre_call_record_action(state, bind_point, command)
            except BaseException as error:
                report_error(command, error, record.instance.state)
    return record.next


def _recorded_action(
    command_buffer: int, bind_point: int, command: str
) -> tuple[CommandBufferState | None, bool]:
    """Engine work of an action that layer.c calls down itself, binding the action's output
    block first (prototypes.RECORDED_BEFORE_GOING_DOWN): the command buffer's state (None
    where gpuav tracks none), and whether the work appended an Action."""
    state = tracked_command_buffer(command_buffer)
    appended = False
    if state is not None:
        try:
            appended = engine.pre_call_record_action(state, bind_point, command, bound_later=True)
        except BaseException as error:
            report_error(command, error, state.device.instance)
    return state, appended


def cmd_dispatch(command_buffer: int, x: int, y: int, z: int) -> None:
    _recorded_action(command_buffer, PIPELINE_BIND_POINT_COMPUTE, "vkCmdDispatch")


def cmd_dispatch_base(
    command_buffer: int, bx: int, by: int, bz: int, x: int, y: int, z: int
) -> None:
    _recorded_action(command_buffer, PIPELINE_BIND_POINT_COMPUTE, "vkCmdDispatchBase")


def cmd_execute_commands(command_buffer: int, count: int, command_buffers: int) -> None:
    record, state = lookup(command_buffer)
    if record is None:
        return
    record.next.vkCmdExecuteCommands(command_buffer, count, command_buffers)
    if state is not None:
        try:
            engine.post_call_record_cmd_execute_commands(state, handles_at(command_buffers, count))
        except BaseException as error:
            report_error("vkCmdExecuteCommands", error, record.instance.state)


def cmd_execute_generated_commands_nv(command_buffer: int, preprocessed: int, info: int) -> None:
    bind_point = int(at(info, "VkGeneratedCommandsInfoNV").pipelineBindPoint)
    table = _action(command_buffer, bind_point, "vkCmdExecuteGeneratedCommandsNV")
    if table is not None:
        table.vkCmdExecuteGeneratedCommandsNV(command_buffer, preprocessed, info)


# VkGeneratedCommandsInfoEXT is newer than the vulkan package: its shaderStages member follows
# sType (4 bytes, padded to 8) and pNext, and indirectExecutionSet follows it (padded to 8).
_GENERATED_COMMANDS_INFO_EXT_STAGES_OFFSET = 16
_GENERATED_COMMANDS_INFO_EXT_SET_OFFSET = 24
_EXECUTE_EXT = "vkCmdExecuteGeneratedCommandsEXT"


def cmd_execute_generated_commands_ext(command_buffer: int, preprocessed: int, info: int) -> None:
    stages = int(vkffi.cast("uint32_t *", info + _GENERATED_COMMANDS_INFO_EXT_STAGES_OFFSET)[0])
    bind_point = (
        PIPELINE_BIND_POINT_COMPUTE
        if stages & SHADER_STAGE_COMPUTE
        else PIPELINE_BIND_POINT_GRAPHICS
    )
    execution_set = int(vkffi.cast("uint64_t *", info + _GENERATED_COMMANDS_INFO_EXT_SET_OFFSET)[0])
    if not execution_set:
        table = _action(command_buffer, bind_point, _EXECUTE_EXT)
    else:
        record, state = lookup(command_buffer)
        table = None if record is None else record.next
        if record is not None and state is not None:
            try:
                execution_sets.pre_call_record_execute(
                    state, bind_point, execution_set, _EXECUTE_EXT
                )
            except BaseException as error:
                report_error(_EXECUTE_EXT, error, record.instance.state)
    if table is not None:
        table.vkCmdExecuteGeneratedCommandsEXT(command_buffer, preprocessed, info)
