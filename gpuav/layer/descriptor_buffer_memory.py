"""Where the app's descriptor buffers' bytes can be read on the host (VK_EXT_descriptor_buffer,
issue 16): each descriptor buffer's memory binding and the app's mappings of that memory
(vkMapMemory, vkMapMemory2), so that a set's bytes at a device address are read as the app
left them at the submit, only where they lie inside the buffer and a live mapping. A
descriptor buffer that commands write (a copy from a staging buffer, an update, a fill) is
never read: at submit its bytes may not be there yet.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuav.layer.buffers import BufferTable

# VkBufferUsageFlagBits that make a buffer a descriptor buffer.
DESCRIPTOR_BUFFER_USAGE = 0x0020_0000 | 0x0040_0000 | 0x0400_0000


@dataclass(frozen=True)
class Mapping:
    """A vkMapMemory the app made: ``size`` bytes of the memory from ``offset`` at ``pointer``."""

    pointer: int
    offset: int
    size: int


@dataclass(frozen=True)
class BufferMemory:
    """A descriptor buffer's memory binding."""

    memory: int
    offset: int


@dataclass
class DescriptorBufferMemory:
    buffers: BufferTable
    mappings: dict[int, Mapping] = field(default_factory=dict)  # memory -> app's mapping
    buffer_memory: dict[int, BufferMemory] = field(default_factory=dict)  # descriptor buffers
    device_written: set[int] = field(default_factory=set)  # descriptor buffers commands write

    def map_memory(self, memory: int, mapping: Mapping) -> None:
        self.mappings[memory] = mapping

    def unmap_memory(self, memory: int) -> None:
        self.mappings.pop(memory, None)

    def free_memory(self, memory: int) -> None:
        self.mappings.pop(memory, None)
        for buffer in [b for b, bound in self.buffer_memory.items() if bound.memory == memory]:
            del self.buffer_memory[buffer]

    def bind_buffer_memory(self, buffer: int, memory: int, offset: int) -> None:
        """Remember where a descriptor buffer's bytes are (only descriptor buffers count)."""
        facts = self.buffers.live.get(buffer)
        if facts is not None and facts.usage & DESCRIPTOR_BUFFER_USAGE:
            self.buffer_memory[buffer] = BufferMemory(memory, offset)

    def destroy_buffer(self, buffer: int) -> None:
        self.buffer_memory.pop(buffer, None)
        self.device_written.discard(buffer)

    def written_by_command(self, buffer: int) -> None:
        """A transfer command writes ``buffer``: if a descriptor buffer, its bytes are not
        read from now on."""
        if buffer in self.buffer_memory:
            self.device_written.add(buffer)

    def read(self, address: int, size: int) -> bytes | None:
        """The ``size`` bytes at device ``address`` of a descriptor buffer, None when they do
        not lie in memory the app has mapped."""
        live = self.buffers.live
        for buffer, bound in self.buffer_memory.items():
            facts = live.get(buffer)
            if facts is None or not facts.address:
                continue
            start = address - facts.address
            if start < 0 or start + size > facts.size:
                continue
            mapping = self.mappings.get(bound.memory)
            if mapping is None or buffer in self.device_written:
                return None
            at = bound.offset + start - mapping.offset
            if at < 0 or at + size > mapping.size:
                return None
            import ctypes  # here: only apps with descriptor buffers pay for its import

            return ctypes.string_at(mapping.pointer + at, size)
        return None
