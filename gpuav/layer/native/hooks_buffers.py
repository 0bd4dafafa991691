"""Buffer creation, binding and destruction, and device addresses: the sizes behind buffer
descriptors' ranges and the live address ranges behind ``PhysicalStorageBuffer`` pointers."""

from __future__ import annotations

from vulkan._vulkan import ffi as vkffi

from gpuav.layer.buffers import BufferTable
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, find, handles_at, words_at
from gpuav.layer.resource_lifetimes import BUFFER

ERROR_INITIALIZATION_FAILED = -3
STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO = 1000244001
# VkBufferUsageFlags2CreateInfoKHR (maintenance5): its 64-bit usage replaces the create info's.
STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO = 1000470006
_USAGE_2_OFFSET = 16  # after sType and pNext


def _tracked(record: DeviceRecord) -> BufferTable | None:
    state = record.state
    if state is None or not state.enabled or state.descriptors is None:
        return None
    return state.descriptors.buffers


def create_buffer(device: int, create_info: int, allocator: int, buffer_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkCreateBuffer(device, create_info, allocator, buffer_out))
    buffers = _tracked(record)
    if result == 0 and buffers is not None:
        try:
            info = at(create_info, "VkBufferCreateInfo")
            usage = int(info.usage)
            usage_2 = find(address(info.pNext), STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO)
            if usage_2:
                low, high = words_at(usage_2 + _USAGE_2_OFFSET, 2)
                usage = low | high << 32
            handle = handles_at(buffer_out, 1)[0]
            buffers.create(handle, int(info.size), usage, int(info.flags))
            _learn_address(record, device, buffers, handle)  # sparse buffers have one already
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
        state.descriptors.retire(buffer, BUFFER)  # descriptors naming it (08114)
    record.next.vkDestroyBuffer(device, buffer, allocator)


def bind_buffer_memory(device: int, buffer: int, memory: int, offset: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkBindBufferMemory(device, buffer, memory, offset))
    buffers = _tracked(record)
    if result == 0 and buffers is not None:
        try:
            buffers.bind(buffer)
            _learn_address(record, device, buffers, buffer)
            _hangs_on(record, buffer, memory)
        except BaseException as error:
            report_error("vkBindBufferMemory", error, record.instance.state)
    return result


def bind_buffer_memory2(device: int, count: int, infos: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkBindBufferMemory2(device, count, infos))
    buffers = _tracked(record)
    if result == 0 and buffers is not None:
        try:
            array = vkffi.cast("VkBindBufferMemoryInfo *", infos)
            for index in range(count):
                handle = address(array[index].buffer)
                buffers.bind(handle)
                _learn_address(record, device, buffers, handle)
                _hangs_on(record, handle, address(array[index].memory))
        except BaseException as error:
            report_error("vkBindBufferMemory2", error, record.instance.state)
    return result


def get_buffer_device_address(device: int, info: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return 0
    found = int(record.next.vkGetBufferDeviceAddress(device, info))
    buffers = _tracked(record)
    if buffers is not None:
        try:
            buffers.note_address(address(at(info, "VkBufferDeviceAddressInfo").buffer), found)
        except BaseException as error:
            report_error("vkGetBufferDeviceAddress", error, record.instance.state)
    return found


def _hangs_on(record: DeviceRecord, buffer: int, memory: int) -> None:
    """Freeing ``memory`` retires the descriptors naming ``buffer`` (descriptor_sets)."""
    if record.state is not None and record.state.descriptors is not None:
        record.state.descriptors.lifetimes.created(buffer, BUFFER, memory)


def _learn_address(record: DeviceRecord, device: int, buffers: BufferTable, handle: int) -> None:
    """Ask for the address of a buffer shaders may reach by one, as soon as it has one."""
    query = record.next.vkGetBufferDeviceAddress
    if query is None or not buffers.wants_address(handle):
        return
    info = vkffi.new("VkBufferDeviceAddressInfo *")
    info.sType = STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO
    info.buffer = vkffi.cast("VkBuffer", handle)
    buffers.note_address(handle, int(query(device, address(info))))
