"""Buffers and texel-buffer views for tests.

Buffers live in host-visible, coherent memory and stay mapped, so a test reads what a shader
wrote right after the queue goes idle, without staging copies. One usage mask serves every
buffer role (storage, uniform, texel, vertex, index, indirect, transform feedback).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import vulkan as vkapi

from tests.harness.formats import format_info

if TYPE_CHECKING:
    from tests.harness.context import VulkanContext

ffi = vkapi.ffi

_BUFFER_USAGE = (
    vkapi.VK_BUFFER_USAGE_TRANSFER_SRC_BIT
    | vkapi.VK_BUFFER_USAGE_TRANSFER_DST_BIT
    | vkapi.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT
    | vkapi.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
    | vkapi.VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT
    | vkapi.VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT
    | vkapi.VK_BUFFER_USAGE_VERTEX_BUFFER_BIT
    | vkapi.VK_BUFFER_USAGE_INDEX_BUFFER_BIT
    | vkapi.VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT
)
_TRANSFORM_FEEDBACK_USAGE = (
    vkapi.VK_BUFFER_USAGE_TRANSFORM_FEEDBACK_BUFFER_BIT_EXT
    | vkapi.VK_BUFFER_USAGE_TRANSFORM_FEEDBACK_COUNTER_BUFFER_BIT_EXT
)
_HOST_MEMORY = (
    vkapi.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vkapi.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
)

# The package defines VK_WHOLE_SIZE as -1, which cffi refuses for a VkDeviceSize (uint64).
WHOLE_SIZE = (1 << 64) - 1

# Some core enumerants promoted from extensions are missing from the package's Python module
# (e.g. VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT) though its cdef has them: read those from
# `vkapi.lib`, which exposes the cdef's enum constants.

BytesLike = bytes | bytearray | memoryview | np.ndarray


def as_bytes(data: BytesLike) -> bytes:
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data).tobytes()
    return bytes(data)


def allocate_memory(vk: VulkanContext, requirements: Any, flags: int, p_next: Any = None) -> Any:
    info = vkapi.VkMemoryAllocateInfo(
        pNext=p_next,
        allocationSize=requirements.size,
        memoryTypeIndex=vk.memory_type(requirements.memoryTypeBits, flags),
    )
    return vkapi.vkAllocateMemory(vk.device, info, None)


class Buffer:
    """A mapped buffer usable for every buffer role; zero-filled unless ``data`` is given."""

    def __init__(self, vk: VulkanContext, size: int, data: BytesLike | None = None) -> None:
        initial = None if data is None else as_bytes(data)
        if initial is not None and size < len(initial):
            raise ValueError(f"{len(initial)} bytes of data do not fit a {size}-byte buffer")
        self.vk = vk
        self.size = max(size, 4)
        usage = _BUFFER_USAGE
        if vk.has_feature("bufferDeviceAddress"):
            usage |= vkapi.lib.VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT
        if vk.has_feature("transformFeedback"):
            usage |= _TRANSFORM_FEEDBACK_USAGE
        info = vkapi.VkBufferCreateInfo(
            size=self.size, usage=usage, sharingMode=vkapi.VK_SHARING_MODE_EXCLUSIVE
        )
        self.handle = vkapi.vkCreateBuffer(vk.device, info, None)
        requirements = vkapi.vkGetBufferMemoryRequirements(vk.device, self.handle)
        flags_info = None
        if vk.has_feature("bufferDeviceAddress"):
            flags_info = vkapi.VkMemoryAllocateFlagsInfo(
                flags=vkapi.lib.VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT
            )
        self.memory = allocate_memory(vk, requirements, _HOST_MEMORY, flags_info)
        vkapi.vkBindBufferMemory(vk.device, self.handle, self.memory, 0)
        # Map exactly our size: the package wraps the pointer in ffi.buffer(ptr, size), which
        # needs a real length, not VK_WHOLE_SIZE.
        self._mapped = vkapi.vkMapMemory(vk.device, self.memory, 0, self.size, 0)
        self._mapped[0 : self.size] = bytes(self.size)
        if initial is not None:
            self.write(initial)
        vk.own(self)

    def write(self, data: BytesLike, offset: int = 0) -> None:
        raw = as_bytes(data)
        if offset + len(raw) > self.size:
            raise ValueError(f"write of {len(raw)} bytes at {offset} overflows {self.size} bytes")
        self._mapped[offset : offset + len(raw)] = raw

    def read(self, offset: int = 0, size: int | None = None) -> bytes:
        end = self.size if size is None else offset + size
        return bytes(self._mapped[offset:end])

    def array(self, dtype: Any = np.uint32, count: int | None = None, offset: int = 0) -> Any:
        """A copy of the contents as a numpy array of ``dtype``."""
        item = np.dtype(dtype).itemsize
        n = (self.size - offset) // item if count is None else count
        return np.frombuffer(self.read(offset, n * item), dtype=dtype).copy()

    def fill_zero(self) -> None:
        self._mapped[0 : self.size] = bytes(self.size)

    @property
    def device_address(self) -> int:
        info = ffi.new("VkBufferDeviceAddressInfo*")
        info.sType = vkapi.VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO
        info.buffer = self.handle
        # The package's wrapper returns its pInfo argument, not the address: call the C function.
        return int(vkapi.lib.vkGetBufferDeviceAddress(self.vk.device, info))

    def view(self, fmt: str | int, offset: int = 0, size: int | None = None) -> BufferView:
        return BufferView(self, fmt, offset, size)

    def destroy(self) -> None:
        if self.handle is None:
            return
        vkapi.vkUnmapMemory(self.vk.device, self.memory)
        vkapi.vkDestroyBuffer(self.vk.device, self.handle, None)
        vkapi.vkFreeMemory(self.vk.device, self.memory, None)
        self.handle = None
        self.vk.disown(self)


class BufferRange:
    """Part of a buffer for a descriptor; ``size=None`` means to the end (VK_WHOLE_SIZE)."""

    def __init__(self, buffer: Buffer, offset: int = 0, size: int | None = None) -> None:
        self.buffer = buffer
        self.offset = offset
        self.size = size

    @property
    def vk_range(self) -> int:
        return WHOLE_SIZE if self.size is None else self.size


class BufferView:
    """A texel-buffer view of ``buffer``."""

    def __init__(self, buffer: Buffer, fmt: str | int, offset: int = 0, size: int | None = None):
        self.vk = buffer.vk
        self.buffer = buffer
        self.format = format_info(fmt)
        info = vkapi.VkBufferViewCreateInfo(
            buffer=buffer.handle,
            format=self.format.vk_format,
            offset=offset,
            range=WHOLE_SIZE if size is None else size,
        )
        self.handle = vkapi.vkCreateBufferView(self.vk.device, info, None)
        self.vk.own(self)

    def destroy(self) -> None:
        if self.handle is not None:
            vkapi.vkDestroyBufferView(self.vk.device, self.handle, None)
            self.handle = None
            self.vk.disown(self)


def memory_barrier(command_buffer: Any, host_read: bool = False) -> None:
    """Make all earlier writes visible to all later commands (and the host, if asked)."""
    dst_stage = vkapi.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
    dst_access = vkapi.VK_ACCESS_MEMORY_READ_BIT | vkapi.VK_ACCESS_MEMORY_WRITE_BIT
    if host_read:
        dst_stage |= vkapi.VK_PIPELINE_STAGE_HOST_BIT
        dst_access |= vkapi.VK_ACCESS_HOST_READ_BIT
    barrier = vkapi.VkMemoryBarrier(
        srcAccessMask=vkapi.VK_ACCESS_MEMORY_WRITE_BIT, dstAccessMask=dst_access
    )
    vkapi.vkCmdPipelineBarrier(
        command_buffer,
        vkapi.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
        dst_stage,
        0,
        1,
        [barrier],
        0,
        None,
        0,
        None,
    )
