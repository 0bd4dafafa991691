"""The app's live buffers as the layer sees them: sizes, for the bytes a buffer descriptor
really binds (``VK_WHOLE_SIZE``, and ranges clipped by the buffer's end), and the device
addresses of those shaders may reach through ``PhysicalStorageBuffer`` pointers.

A buffer created with ``VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT`` counts for the address
checks once it is bound to memory and its address is known (the layer asks for it when the
buffer is bound, and notes what ``vkGetBufferDeviceAddress`` returns). Destroyed ones are
remembered for a while, so that an access into one can be told as a use after free.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from gpuav.report.address_text import AddressedBuffer

WHOLE_SIZE = 0xFFFF_FFFF_FFFF_FFFF
BUFFER_USAGE_SHADER_DEVICE_ADDRESS = 0x0002_0000
BUFFER_CREATE_SPARSE_BINDING = 0x1
# Destroyed buffers remembered for use-after-free messages.
REMEMBERED_DESTROYED = 4096


@dataclass
class BufferFacts:
    size: int
    usage: int
    bound: bool = False  # to memory (sparse buffers: from creation)
    address: int = 0  # 0 until known


@dataclass(frozen=True)
class BoundBuffer:
    """What a buffer descriptor was written with (VkDescriptorBufferInfo)."""

    buffer: int
    offset: int
    range: int  # as written: WHOLE_SIZE stays WHOLE_SIZE


@dataclass
class BufferTable:
    live: dict[int, BufferFacts] = field(default_factory=dict)
    destroyed: deque[AddressedBuffer] = field(
        default_factory=lambda: deque(maxlen=REMEMBERED_DESTROYED)
    )
    # Changes whenever a buffer's address range starts or stops counting: the layer
    # publishes the shaders' table again at the next submit (``address_ranges``).
    address_generation: int = 0
    published_generation: int = -1  # what the shaders' table shows (address_publishing)
    # Changes whenever a buffer is made or destroyed: what was worked out from ``size_of``
    # holds while it stays the same.
    generation: int = 0

    def create(self, handle: int, size: int, usage: int, flags: int = 0) -> None:
        self.live[handle] = BufferFacts(size, usage, bool(flags & BUFFER_CREATE_SPARSE_BINDING))
        self.generation += 1

    def destroy(self, handle: int) -> None:
        self.generation += 1
        facts = self.live.pop(handle, None)
        if facts is not None and self._counts(facts):
            self.destroyed.append(AddressedBuffer(handle, facts.address, facts.size, True))
            self.address_generation += 1

    def size_of(self, handle: int) -> int | None:
        facts = self.live.get(handle)
        return None if facts is None else facts.size

    def wants_address(self, handle: int) -> bool:
        """Whether the layer should ask for the buffer's device address (it is bound and
        shaders may reach it through one)."""
        facts = self.live.get(handle)
        return (
            facts is not None
            and facts.bound
            and bool(facts.usage & BUFFER_USAGE_SHADER_DEVICE_ADDRESS)
        )

    def bind(self, handle: int) -> None:
        """vkBindBufferMemory(2): the buffer has memory now."""
        facts = self.live.get(handle)
        if facts is not None and not facts.bound:
            facts.bound = True
            if self._counts(facts):
                self.address_generation += 1

    def note_address(self, handle: int, address: int) -> None:
        facts = self.live.get(handle)
        if facts is None or not address or facts.address == address:
            return
        counted = self._counts(facts)
        facts.address = address
        if counted or self._counts(facts):
            self.address_generation += 1

    @staticmethod
    def _counts(facts: BufferFacts) -> bool:
        return (
            facts.bound
            and facts.address != 0
            and bool(facts.usage & BUFFER_USAGE_SHADER_DEVICE_ADDRESS)
        )

    def address_ranges(self) -> list[tuple[int, int]]:
        """(start, size) of every live buffer shaders may reach by device address."""
        return [(f.address, f.size) for f in self.live.values() if self._counts(f)]

    def nearest_to(self, address: int, size: int) -> AddressedBuffer | None:
        """The buffer the span ``[address, address + size)`` falls in or lies nearest to:
        a destroyed buffer it falls in (a use after free) before any live one near it."""
        live = [
            AddressedBuffer(handle, facts.address, facts.size)
            for handle, facts in self.live.items()
            if self._counts(facts)
        ]
        for gone in reversed(self.destroyed):
            if gone.address <= address < gone.end and not any(
                buffer.address <= address < buffer.end for buffer in live
            ):
                return gone
        return min(live, key=lambda b: (b.distance(address, size), b.address), default=None)

    def effective_range(self, bound: BoundBuffer) -> int | None:
        """The bytes the descriptor makes reachable, None when the layer cannot tell (a
        buffer it did not see created, a null descriptor)."""
        if not bound.buffer:
            return None
        size = self.size_of(bound.buffer)
        if size is None:
            return None if bound.range == WHOLE_SIZE else bound.range
        available = max(size - bound.offset, 0)
        return available if bound.range == WHOLE_SIZE else min(bound.range, available)
