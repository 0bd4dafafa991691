"""Buffer creation and destruction: the sizes behind buffer descriptors' ranges."""

from __future__ import annotations

from gpuav.layer.native.dispatch import REGISTRY
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import at, handles_at

ERROR_INITIALIZATION_FAILED = -3


def create_buffer(device: int, create_info: int, allocator: int, buffer_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkCreateBuffer(device, create_info, allocator, buffer_out))
    state = record.state
    if result == 0 and state is not None and state.enabled and state.descriptors is not None:
        try:
            info = at(create_info, "VkBufferCreateInfo")
            state.descriptors.buffers.create(
                handles_at(buffer_out, 1)[0], int(info.size), int(info.usage)
            )
        except BaseException as error:
            report_error("vkCreateBuffer", error, record.instance.state)
    return result


def destroy_buffer(device: int, buffer: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    state = record.state
    if state is not None and state.descriptors is not None and buffer:
        state.descriptors.buffers.destroy(buffer)
    record.next.vkDestroyBuffer(device, buffer, allocator)
