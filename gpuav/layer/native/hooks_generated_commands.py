"""Indirect execution set entry points (VK_EXT_device_generated_commands): call down, then let
``gpuav.layer.execution_sets`` follow which pipelines or shader objects each set holds.

The structures are newer than the ``vulkan`` package's declarations: their members are read at
their offsets on the 64-bit ABIs we support (sType padded to 8 bytes, then pNext).
"""

from __future__ import annotations

from vulkan._vulkan import ffi as vkffi

from gpuav.layer import execution_sets
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord, Native
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import handles_at

ERROR_INITIALIZATION_FAILED = -3
SUCCESS = 0
INFO_TYPE_SHADER_OBJECTS = 1  # VkIndirectExecutionSetInfoTypeEXT
# VkIndirectExecutionSetCreateInfoEXT: type, then the info union (a pointer).
_CREATE_TYPE, _CREATE_INFO = 16, 24
# VkIndirectExecutionSetPipelineInfoEXT: initialPipeline.
_PIPELINE_INITIAL = 16
# VkIndirectExecutionSetShaderInfoEXT: shaderCount, pInitialShaders.
_SHADER_COUNT, _SHADER_INITIAL = 16, 24
# VkWriteIndirectExecutionSetPipelineEXT and ...ShaderEXT alike: index, then the handle.
_WRITE_SIZE, _WRITE_INDEX, _WRITE_MEMBER = 32, 16, 24


def _u32(address: int) -> int:
    return int(vkffi.cast("uint32_t *", address)[0])


def _u64(address: int) -> int:
    return int(vkffi.cast("uint64_t *", address)[0])


def _device(handle: int) -> DeviceRecord | None:
    return REGISTRY.devices.get(Native.lib.gpuav_dispatch_key(handle))


def create_indirect_execution_set(device: int, info: int, allocator: int, out: int) -> int:
    record = _device(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkCreateIndirectExecutionSetEXT(device, info, allocator, out))
    if result == SUCCESS and record.state is not None:
        try:
            shader_objects = _u32(info + _CREATE_TYPE) == INFO_TYPE_SHADER_OBJECTS
            members = _u64(info + _CREATE_INFO)
            if shader_objects:
                initial = handles_at(_u64(members + _SHADER_INITIAL), _u32(members + _SHADER_COUNT))
            else:
                initial = [_u64(members + _PIPELINE_INITIAL)]
            execution_sets.post_call_record_create(record.state, _u64(out), shader_objects, initial)
        except BaseException as error:
            report_error("vkCreateIndirectExecutionSetEXT", error, record.instance.state)
    return result


def _writes(writes: int, count: int) -> list[tuple[int, int]]:
    return [
        (
            _u32(writes + k * _WRITE_SIZE + _WRITE_INDEX),
            _u64(writes + k * _WRITE_SIZE + _WRITE_MEMBER),
        )
        for k in range(count)
    ]


def update_indirect_execution_set_pipeline(
    device: int, execution_set: int, count: int, writes: int
) -> None:
    _update("vkUpdateIndirectExecutionSetPipelineEXT", device, execution_set, count, writes)


def update_indirect_execution_set_shader(
    device: int, execution_set: int, count: int, writes: int
) -> None:
    _update("vkUpdateIndirectExecutionSetShaderEXT", device, execution_set, count, writes)


def _update(command: str, device: int, execution_set: int, count: int, writes: int) -> None:
    """Either update: its writes have the same index and member words."""
    record = _device(device)
    if record is None:
        return
    getattr(record.next, command)(device, execution_set, count, writes)
    if record.state is not None:
        try:
            execution_sets.post_call_record_update(
                record.state, execution_set, _writes(writes, count)
            )
        except BaseException as error:
            report_error(command, error, record.instance.state)


def destroy_indirect_execution_set(device: int, execution_set: int, allocator: int) -> None:
    record = _device(device)
    if record is None:
        return
    if record.state is not None and execution_set:
        execution_sets.pre_call_record_destroy(record.state, execution_set)
    record.next.vkDestroyIndirectExecutionSetEXT(device, execution_set, allocator)
