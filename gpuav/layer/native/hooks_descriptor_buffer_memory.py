"""Memory and object-lifetime entry points for descriptor buffers (issue 16), wrapped around
the hooks that already follow them (``hooks_buffers``, ``hooks_resources``): the app's
mappings, where its descriptor buffers' bytes are read at submit, and the buffers, images,
views and memory whose destruction makes the descriptors naming them unusable."""

from __future__ import annotations

from vulkan._vulkan import ffi as vkffi

from gpuav.layer import descriptor_buffers
from gpuav.layer.descriptor_buffer_memory import Mapping
from gpuav.layer.descriptor_buffers import DescriptorBufferTracker
from gpuav.layer.native import hooks_buffers, hooks_resources
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord, Native
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, handles_at
from gpuav.layer.resource_lifetimes import BUFFER, IMAGE, IMAGE_VIEW, MEMORY

ERROR_INITIALIZATION_FAILED = -3


def _tracker(record: DeviceRecord | None) -> DescriptorBufferTracker | None:
    if record is None or record.state is None:
        return None
    return descriptor_buffers.tracker_of(record.state)


def _report(record: DeviceRecord, command: str, error: BaseException) -> None:
    report_error(command, error, record.instance.state)


# -- mappings: where a descriptor buffer's bytes can be read -----------------------------------


def map_memory(device: int, memory: int, offset: int, size: int, flags: int, data_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkMapMemory(device, memory, offset, size, flags, data_out))
    if result == 0:
        _mapped(record, "vkMapMemory", memory, offset, size, data_out)
    return result


def map_memory2(device: int, info: int, data_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkMapMemory2KHR(device, info, data_out))
    if result == 0:
        given = at(info, "VkMemoryMapInfoKHR")
        memory, offset, size = address(given.memory), int(given.offset), int(given.size)
        _mapped(record, "vkMapMemory2KHR", memory, offset, size, data_out)
    return result


def _mapped(
    record: DeviceRecord, command: str, memory: int, offset: int, size: int, data_out: int
) -> None:
    tracker = _tracker(record)
    if tracker is None or not data_out:
        return
    try:
        pointer = int(vkffi.cast("uintptr_t *", data_out)[0])
        tracker.memory.map_memory(memory, Mapping(pointer, offset, size))
    except BaseException as error:
        _report(record, command, error)


def unmap_memory(device: int, memory: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    _unmapped(record, "vkUnmapMemory", memory)
    record.next.vkUnmapMemory(device, memory)


def unmap_memory2(device: int, info: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    if info:
        _unmapped(record, "vkUnmapMemory2KHR", address(at(info, "VkMemoryUnmapInfoKHR").memory))
    return int(record.next.vkUnmapMemory2KHR(device, info))


def _unmapped(record: DeviceRecord, command: str, memory: int) -> None:
    tracker = _tracker(record)
    if tracker is not None:
        try:
            tracker.memory.unmap_memory(memory)
        except BaseException as error:
            _report(record, command, error)


# -- lifetimes: descriptors naming a gone buffer or image view ------------------------------


def _gone(device: int, command: str, handle: int, kind: str) -> None:
    """Before the hook that forgets ``handle`` and what hangs on it (resource_lifetimes)."""
    record = REGISTRY.device_of(device)
    tracker = _tracker(record)
    if record is None or tracker is None or not handle:
        return
    try:
        tracker.object_gone(handle, kind)
        if kind == MEMORY:
            tracker.memory.free_memory(handle)
        elif kind == BUFFER:
            tracker.memory.destroy_buffer(handle)
    except BaseException as error:
        _report(record, command, error)


def free_memory(device: int, memory: int, allocator: int) -> None:
    _gone(device, "vkFreeMemory", memory, MEMORY)
    hooks_resources.free_memory(device, memory, allocator)


def destroy_buffer(device: int, buffer: int, allocator: int) -> None:
    _gone(device, "vkDestroyBuffer", buffer, BUFFER)
    hooks_buffers.destroy_buffer(device, buffer, allocator)


def destroy_image(device: int, image: int, allocator: int) -> None:
    _gone(device, "vkDestroyImage", image, IMAGE)
    hooks_resources.destroy_image(device, image, allocator)


def destroy_image_view(device: int, view: int, allocator: int) -> None:
    _gone(device, "vkDestroyImageView", view, IMAGE_VIEW)
    hooks_resources.destroy_image_view(device, view, allocator)


def create_image_view(device: int, create_info: int, allocator: int, view_out: int) -> int:
    result = hooks_resources.create_image_view(device, create_info, allocator, view_out)
    record = REGISTRY.device_of(device)
    tracker = _tracker(record)
    if result == 0 and record is not None and tracker is not None:
        tracker.object_made(handles_at(view_out, 1)[0])
    return result


def bind_buffer_memory(device: int, buffer: int, memory: int, offset: int) -> int:
    result = hooks_buffers.bind_buffer_memory(device, buffer, memory, offset)
    record = REGISTRY.device_of(device)
    tracker = _tracker(record)
    if result == 0 and record is not None and tracker is not None:
        try:
            tracker.memory.bind_buffer_memory(buffer, memory, offset)
            tracker.object_made(buffer)
        except BaseException as error:
            _report(record, "vkBindBufferMemory", error)
    return result


def bind_buffer_memory2(device: int, count: int, infos: int) -> int:
    result = hooks_buffers.bind_buffer_memory2(device, count, infos)
    record = REGISTRY.device_of(device)
    tracker = _tracker(record)
    if result == 0 and record is not None and tracker is not None:
        try:
            bound = vkffi.cast("VkBindBufferMemoryInfo *", infos)
            for index in range(count):
                buffer = address(bound[index].buffer)
                memory, offset = address(bound[index].memory), int(bound[index].memoryOffset)
                tracker.memory.bind_buffer_memory(buffer, memory, offset)
                tracker.object_made(buffer)
        except BaseException as error:
            _report(record, "vkBindBufferMemory2", error)
    return result


# -- transfers: descriptor buffers whose bytes commands write -----------------------------------


def _written(command_buffer: int, command: str, buffer: int) -> None:
    """A transfer command writes ``buffer``; one look at a dict when no descriptor buffer is."""
    record = _next(command_buffer)
    tracker = _tracker(record)
    if record is None or tracker is None or not tracker.memory.buffer_memory:
        return
    try:
        tracker.memory.written_by_command(buffer)
    except BaseException as error:
        _report(record, command, error)


def _next(command_buffer: int) -> DeviceRecord | None:
    """The device record of a command buffer (whose next layer gets the call)."""
    return REGISTRY.devices.get(Native.lib.gpuav_dispatch_key(command_buffer))


def cmd_copy_buffer(
    command_buffer: int, source: int, destination: int, count: int, regions: int
) -> None:
    record = _next(command_buffer)
    if record is None:
        return
    record.next.vkCmdCopyBuffer(command_buffer, source, destination, count, regions)
    _written(command_buffer, "vkCmdCopyBuffer", destination)


def cmd_copy_buffer2(command_buffer: int, info: int) -> None:
    _copy2(command_buffer, info, "vkCmdCopyBuffer2", "VkCopyBufferInfo2")


def cmd_copy_image_to_buffer(
    command_buffer: int, image: int, layout: int, destination: int, count: int, regions: int
) -> None:
    record = _next(command_buffer)
    if record is None:
        return
    record.next.vkCmdCopyImageToBuffer(command_buffer, image, layout, destination, count, regions)
    _written(command_buffer, "vkCmdCopyImageToBuffer", destination)


def cmd_copy_image_to_buffer2(command_buffer: int, info: int) -> None:
    _copy2(command_buffer, info, "vkCmdCopyImageToBuffer2", "VkCopyImageToBufferInfo2")


def _copy2(command_buffer: int, info: int, command: str, info_type: str) -> None:
    """A copy whose one info structure names the destination buffer (``dstBuffer``)."""
    record = _next(command_buffer)
    if record is None:
        return
    getattr(record.next, command)(command_buffer, info)
    if info:
        _written(command_buffer, command, address(at(info, info_type).dstBuffer))


def cmd_update_buffer(
    command_buffer: int, destination: int, offset: int, size: int, data: int
) -> None:
    record = _next(command_buffer)
    if record is None:
        return
    record.next.vkCmdUpdateBuffer(command_buffer, destination, offset, size, data)
    _written(command_buffer, "vkCmdUpdateBuffer", destination)


def cmd_fill_buffer(
    command_buffer: int, destination: int, offset: int, size: int, data: int
) -> None:
    record = _next(command_buffer)
    if record is None:
        return
    record.next.vkCmdFillBuffer(command_buffer, destination, offset, size, data)
    _written(command_buffer, "vkCmdFillBuffer", destination)
