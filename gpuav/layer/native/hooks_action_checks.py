"""Entry points of the indirect and vertex-fetch checks (``action_checks``): what they need to
know (limits and features at device creation, command pools' queue families, buffers that
indirect and index data live in; ``hooks_fetch_state``: pipelines' vertex input;
``fetch_bindings``: the vertex and index buffers bound), the actions they check, and
(``action_check_submits``) the submissions that run gpuav's validation command buffers.

Each wraps the layer's general hook of the same command, so the rest of the layer is unchanged;
a failure here is reported and the app's call goes down as it came.
"""

from __future__ import annotations

from typing import Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer import action_checks as checks
from gpuav.layer import command_buffers as engine
from gpuav.layer import notices
from gpuav.layer.action_check_parameters import (
    KIND_DRAW,
    KIND_DRAW_INDEXED,
    KIND_GROUPS,
    STORAGE_BUFFERS,
)
from gpuav.layer.action_checks import ActionCheckDevice, DeviceLimits
from gpuav.layer.calls import PIPELINE_BIND_POINT_COMPUTE, PIPELINE_BIND_POINT_GRAPHICS
from gpuav.layer.native import (
    hooks_buffers,
    hooks_device,
)
from gpuav.layer.native.action_check_submits import queue_submit as queue_submit
from gpuav.layer.native.action_check_submits import queue_submit2 as queue_submit2
from gpuav.layer.native.device_calls import NativeDeviceCalls
from gpuav.layer.native.dispatch import RECORDING as _recording
from gpuav.layer.native.dispatch import (
    REGISTRY,
    DeviceRecord,
    recording_state,
)
from gpuav.layer.native.enabled_features import enabled_feature_names
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.fetch_bindings import bound_buffers
from gpuav.layer.native.hooks_commands import _recorded_action
from gpuav.layer.native.validation_calls import NativeActionCheckCalls
from gpuav.layer.native.vk import address, at, chain, handles_at
from gpuav.layer.state import CommandBufferState

ERROR_INITIALIZATION_FAILED = -3
BUFFER_USAGE_INDEX = 0x40
BUFFER_USAGE_INDIRECT = 0x100
BUFFER_USAGE_STORAGE = 0x20
STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO = 1000470006
STRUCTURE_TYPE_MESH_SHADER_PROPERTIES = 1000328001
_MESH_WORDS = 64  # room for VkPhysicalDeviceMeshShaderPropertiesEXT after its header


_GRAPHICS = PIPELINE_BIND_POINT_GRAPHICS


# -- device -------------------------------------------------------------------------------------


def _limits(
    record: DeviceRecord, physical_device: int, create_info: int
) -> tuple[DeviceLimits, int]:
    """The checks' limits, and the storage buffers a compute shader may bind
    (maxPerStageDescriptorStorageBuffers), which gpuav's validation dispatch needs."""
    properties = vkffi.new("VkPhysicalDeviceProperties2 *")
    properties.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
    mesh = vkffi.new("uint32_t[]", 4 + _MESH_WORDS)
    mesh[0] = STRUCTURE_TYPE_MESH_SHADER_PROPERTIES
    mesh[4 : 4 + _MESH_WORDS] = [0xFFFF_FFFF] * _MESH_WORDS
    get = record.instance.next.vkGetPhysicalDeviceProperties2
    if get is not None:
        properties.pNext = mesh
        get(physical_device, address(properties))
    else:
        record.instance.next.vkGetPhysicalDeviceProperties(
            physical_device, address(properties) + 16
        )
    limits = properties.properties.limits
    words = list(mesh[4 : 4 + 15])
    features = enabled_feature_names(create_info)
    checks = DeviceLimits(
        compute_groups=tuple(int(v) for v in limits.maxComputeWorkGroupCount),  # type: ignore[arg-type]
        task_groups=(words[1], words[2], words[3], words[0]),
        mesh_groups=(words[12], words[13], words[14], words[11]),
        max_draw_indirect_count=int(limits.maxDrawIndirectCount),
        first_instance="drawIndirectFirstInstance" in features,
        storage_alignment=int(limits.minStorageBufferOffsetAlignment),
        max_storage_range=int(limits.maxStorageBufferRange),
    )
    return checks, int(limits.maxPerStageDescriptorStorageBuffers)


def create_device(physical_device: int, create_info: int, allocator: int, device_out: int) -> int:
    result = hooks_device.create_device(physical_device, create_info, allocator, device_out)
    if result != 0:
        return result
    record = REGISTRY.device_of(handles_at(device_out, 1)[0])
    state = None if record is None else record.state
    if record is None or state is None or not state.enabled:
        return result
    try:
        calls = state.calls
        if isinstance(calls, NativeDeviceCalls):
            limits, storage_buffers = _limits(record, physical_device, create_info)
            if storage_buffers < STORAGE_BUFFERS:
                notice = notices.action_checks_unavailable(storage_buffers, STORAGE_BUFFERS)
                state.reporter.emit_once("action-checks", notice)
                return result
            state.action_checks = ActionCheckDevice(
                limits, NativeActionCheckCalls(calls, state.facts.memory_type_flags)
            )
    except BaseException as error:
        report_error("vkCreateDevice (action checks)", error, record.instance.state)
    return result


def destroy_device(device: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is not None and record.state is not None and record.state.action_checks:
        try:
            record.state.action_checks.calls.destroy()
        except BaseException as error:
            report_error("vkDestroyDevice (action checks)", error, record.instance.state)
        record.state.action_checks = None
    hooks_device.destroy_device(device, allocator)


def create_buffer(device: int, create_info: int, allocator: int, buffer_out: int) -> int:
    """Indirect and index buffers also get storage-buffer usage: the checks read them."""
    record = REGISTRY.device_of(device)
    passed = create_info
    keep: list[Any] = []
    if record is not None and record.state is not None and record.state.action_checks:
        try:
            passed = _with_storage_usage(create_info, keep)
        except BaseException as error:
            report_error("vkCreateBuffer (action checks)", error, record.instance.state)
            passed = create_info
    return hooks_buffers.create_buffer(device, passed, allocator, buffer_out)


def _with_storage_usage(create_info: int, keep: list[Any]) -> int:
    info = at(create_info, "VkBufferCreateInfo")
    usage = int(info.usage)
    if not usage & (BUFFER_USAGE_INDEX | BUFFER_USAGE_INDIRECT) or usage & BUFFER_USAGE_STORAGE:
        return create_info
    for structure_type, _ in chain(address(info.pNext)):
        if structure_type == STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO:
            return create_info  # its 64-bit usage rules; left as the app made it
    copy = vkffi.new("VkBufferCreateInfo *")
    vkffi.memmove(copy, info, vkffi.sizeof("VkBufferCreateInfo"))
    copy.usage = usage | BUFFER_USAGE_STORAGE
    keep.append(copy)
    return address(copy)


def create_command_pool(device: int, create_info: int, allocator: int, pool_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkCreateCommandPool(device, create_info, allocator, pool_out))
    engine_ = None if record.state is None else record.state.action_checks
    if result == 0 and engine_ is not None:
        try:
            family = int(at(create_info, "VkCommandPoolCreateInfo").queueFamilyIndex)
            engine_.pool_families[handles_at(pool_out, 1)[0]] = family
        except BaseException as error:
            report_error("vkCreateCommandPool", error, record.instance.state)
    return result


# -- actions ------------------------------------------------------------------------------------
# These run per draw, so they are written out flat: the command buffer's state found once, the
# layer's action work (``command_buffers.pre_call_record_action``), the check's (whose output
# block and Action are made only when it has rows to queue). layer.c calls the next layer
# after them (prototypes.RECORDED_BEFORE_GOING_DOWN).


def _indirect(
    command_buffer: int, bind_point: int, command: str, kind: int, buffer: int, offset: int,
    draw_count: int, stride: int, count_buffer: int = 0, count_offset: int = 0,
) -> None:  # fmt: skip
    """The layer's action work, then the indirect check's (the Action made first: its
    validation dispatch writes into the action's block)."""
    state, appended = _recorded_action(command_buffer, bind_point, command)
    if state is None:
        return
    engine_ = state.device.action_checks
    if engine_ is not None:
        try:
            if bind_point == _GRAPHICS:
                bound_buffers(state, command_buffer)
            action = engine.current_action(state, bind_point, command, appended)
            if action is not None:
                task = None
                if "MeshTasks" in command:
                    task = checks.checks_of(state).graphics_pipeline in engine_.task_pipelines
                checks.record_indirect(state, action, kind, buffer, offset, draw_count, stride,
                                       count_buffer, count_offset, task)  # fmt: skip
        except BaseException as error:
            report_error(command, error, state.device.instance)


def cmd_draw(command_buffer: int, a: int, b: int, c: int, d: int) -> None:
    state = _recording.get(command_buffer)
    if state is None or state.device.command_buffers.get(command_buffer) is not state:
        state = recording_state(command_buffer)
    if state is not None:
        appended = False
        try:
            appended = engine.pre_call_record_action(
                state, _GRAPHICS, "vkCmdDraw", bound_later=True
            )
        except BaseException as error:
            report_error("vkCmdDraw", error, state.device.instance)
        if state.device.action_checks is not None:
            try:
                found = None
                bound = bound_buffers(state, command_buffer)
                if bound is not None and bound.vertex_buffers:
                    found = checks.draw_rows_of(state, a, b, c, d)
                if found is not None:
                    action = engine.current_action(state, _GRAPHICS, "vkCmdDraw", appended)
                    if action is not None:
                        checks.add_rows(state, action, found)
            except BaseException as error:
                report_error("vkCmdDraw", error, state.device.instance)


def cmd_draw_indexed(command_buffer: int, a: int, b: int, c: int, d: int, e: int) -> None:
    state = _recording.get(command_buffer)
    if state is None or state.device.command_buffers.get(command_buffer) is not state:
        state = recording_state(command_buffer)
    if state is not None:
        appended = False
        try:
            appended = engine.pre_call_record_action(
                state, _GRAPHICS, "vkCmdDrawIndexed", bound_later=True
            )
        except BaseException as error:
            report_error("vkCmdDrawIndexed", error, state.device.instance)
        if state.device.action_checks is not None:
            try:
                found = None
                bound = bound_buffers(state, command_buffer)
                if bound is not None and bound.index_buffer is not None:
                    offset = d - (1 << 32) if d >= 1 << 31 else d
                    found = checks.draw_indexed_rows_of(state, a, b, c, offset, e)
                if found is not None:
                    action = engine.current_action(state, _GRAPHICS, "vkCmdDrawIndexed", appended)
                    if action is not None:
                        checks.add_rows(state, action, found)
            except BaseException as error:
                report_error("vkCmdDrawIndexed", error, state.device.instance)


def _counted_action(
    command_buffer: int, bind_point: int, command: str
) -> tuple[CommandBufferState | None, bool]:
    """The layer's action work (``hooks_commands``' own): the command buffer's state where
    the checks are on, and whether the work appended an Action (the pipeline is
    instrumented)."""
    state, appended = _recorded_action(command_buffer, bind_point, command)
    if state is None or state.device.action_checks is None:
        return None, False
    return state, appended


def cmd_draw_multi(
    command_buffer: int, count: int, infos: int, instances: int, first: int, stride: int
) -> None:
    """vkCmdDrawMultiEXT: one action, each of its draws checked as vkCmdDraw is."""
    command = "vkCmdDrawMultiEXT"
    state, appended = _counted_action(command_buffer, _GRAPHICS, command)
    if state is not None:
        try:
            bound = bound_buffers(state, command_buffer)
            for draw in range(count if bound is not None and bound.vertex_buffers else 0):
                info = vkffi.cast("VkMultiDrawInfoEXT *", infos + draw * stride)[0]
                found = checks.draw_rows_of(state, info.vertexCount, instances, info.firstVertex,
                                            first, draw)  # fmt: skip
                if found is not None:
                    action = engine.current_action(state, _GRAPHICS, command, appended)
                    if action is not None:
                        checks.add_rows(state, action, found)
        except BaseException as error:
            report_error(command, error, state.device.instance)


def cmd_draw_multi_indexed(
    command_buffer: int, count: int, infos: int, instances: int, first: int, stride: int,
    vertex_offset: int,
) -> None:  # fmt: skip
    """vkCmdDrawMultiIndexedEXT: one action, each of its draws checked as vkCmdDrawIndexed
    is (``vertex_offset``, where not NULL, gives every draw's vertexOffset)."""
    command = "vkCmdDrawMultiIndexedEXT"
    state, appended = _counted_action(command_buffer, _GRAPHICS, command)
    if state is not None:
        try:
            bound = bound_buffers(state, command_buffer)
            indexed = bound is not None and bound.index_buffer is not None
            shared = None if not vertex_offset else vkffi.cast("int32_t *", vertex_offset)[0]
            for draw in range(count if indexed else 0):
                info = vkffi.cast("VkMultiDrawIndexedInfoEXT *", infos + draw * stride)[0]
                offset = info.vertexOffset if shared is None else shared
                found = checks.draw_indexed_rows_of(
                    state, info.indexCount, instances, info.firstIndex, offset, first, draw
                )
                if found is not None:
                    action = engine.current_action(state, _GRAPHICS, command, appended)
                    if action is not None:
                        checks.add_rows(state, action, found)
        except BaseException as error:
            report_error(command, error, state.device.instance)


def cmd_draw_indirect(
    command_buffer: int, buffer: int, offset: int, count: int, stride: int
) -> None:
    _indirect(command_buffer, _GRAPHICS, "vkCmdDrawIndirect", KIND_DRAW, buffer, offset, count,
              stride)  # fmt: skip


def cmd_draw_indexed_indirect(
    command_buffer: int, buffer: int, offset: int, count: int, stride: int
) -> None:
    _indirect(command_buffer, _GRAPHICS, "vkCmdDrawIndexedIndirect", KIND_DRAW_INDEXED, buffer,
              offset, count, stride)  # fmt: skip


def cmd_draw_indirect_count(
    command_buffer: int, buffer: int, offset: int, count_buffer: int, count_offset: int,
    max_count: int, stride: int,
) -> None:  # fmt: skip
    _indirect(command_buffer, _GRAPHICS, "vkCmdDrawIndirectCount", KIND_DRAW, buffer, offset,
              max_count, stride, count_buffer, count_offset)  # fmt: skip


def cmd_draw_indexed_indirect_count(
    command_buffer: int, buffer: int, offset: int, count_buffer: int, count_offset: int,
    max_count: int, stride: int,
) -> None:  # fmt: skip
    _indirect(command_buffer, _GRAPHICS, "vkCmdDrawIndexedIndirectCount", KIND_DRAW_INDEXED,
              buffer, offset, max_count, stride, count_buffer, count_offset)  # fmt: skip


def cmd_dispatch_indirect(command_buffer: int, buffer: int, offset: int) -> None:
    _indirect(command_buffer, PIPELINE_BIND_POINT_COMPUTE, "vkCmdDispatchIndirect", KIND_GROUPS,
              buffer, offset, 1, 0)  # fmt: skip


def cmd_draw_mesh_tasks_indirect(
    command_buffer: int, buffer: int, offset: int, count: int, stride: int
) -> None:
    _indirect(command_buffer, _GRAPHICS, "vkCmdDrawMeshTasksIndirectEXT", KIND_GROUPS, buffer,
              offset, count, stride)  # fmt: skip


def cmd_draw_mesh_tasks_indirect_count(
    command_buffer: int, buffer: int, offset: int, count_buffer: int, count_offset: int,
    max_count: int, stride: int,
) -> None:  # fmt: skip
    _indirect(command_buffer, _GRAPHICS, "vkCmdDrawMeshTasksIndirectCountEXT", KIND_GROUPS,
              buffer, offset, max_count, stride, count_buffer, count_offset)  # fmt: skip
