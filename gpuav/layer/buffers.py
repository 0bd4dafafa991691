"""The app's live buffers as the layer sees them: sizes, for the bytes a buffer descriptor
really binds (``VK_WHOLE_SIZE``, and ranges clipped by the buffer's end)."""

from __future__ import annotations

from dataclasses import dataclass, field

WHOLE_SIZE = 0xFFFF_FFFF_FFFF_FFFF


@dataclass(frozen=True)
class BufferFacts:
    size: int
    usage: int


@dataclass(frozen=True)
class BoundBuffer:
    """What a buffer descriptor was written with (VkDescriptorBufferInfo)."""

    buffer: int
    offset: int
    range: int  # as written: WHOLE_SIZE stays WHOLE_SIZE


@dataclass
class BufferTable:
    live: dict[int, BufferFacts] = field(default_factory=dict)

    def create(self, handle: int, size: int, usage: int) -> None:
        self.live[handle] = BufferFacts(size, usage)

    def destroy(self, handle: int) -> None:
        self.live.pop(handle, None)

    def size_of(self, handle: int) -> int | None:
        facts = self.live.get(handle)
        return None if facts is None else facts.size

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
