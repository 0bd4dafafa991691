"""The descriptor-state buffer: one mapped device buffer holding every tracked set's region.

Regions (``gpuav.instrument.descriptor_state``) are carved from a fixed-capacity buffer by a
bump allocator with exact-size free lists (sets of one layout have one size, so freed regions
are reused as they are). A set keeps its region's words in a host array; changes mark a dirty
word range, and ``flush`` copies only those ranges into the mapped memory at submit time, so
a submit costs in proportion to what changed since the last one, not to the descriptor count.

When the buffer is full a set gets no region: actions see ``NO_STATE`` for it and the shader
skips the state checks there (``GPUAV_STATE_WORDS`` raises the capacity).

There is one buffer, not one per submission: a submission the layer has not waited for
(host-event and timeline waits, read back later) may see words flushed for a later submit.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field

from gpuav.instrument.address_table import TABLE_OFFSET_WORD
from gpuav.instrument.descriptor_state import NO_STATE, UNKNOWN_SET_TABLES, set_tables
from gpuav.layer.calls import DeviceCalls, PhysicalDeviceFacts, StateBufferHandles

DEFAULT_STATE_WORDS = 1 << 20  # 4 MiB


def state_words_setting() -> int:
    """``GPUAV_STATE_WORDS``: capacity of the state buffer in 32-bit words."""
    value = os.environ.get("GPUAV_STATE_WORDS", "")
    return int(value) if value.isdigit() and int(value) >= 16 else DEFAULT_STATE_WORDS


@dataclass(slots=True, eq=False)
class Region:
    """A set's words: ``offset`` in the buffer (NO_STATE when it got none), a dirty range,
    and how many times its words have changed (what an action table's summaries were made
    from, ``binding_summaries``)."""

    offset: int
    words: array[int]
    dirty_low: int = 0
    dirty_high: int = 0
    changes: int = 0

    def touch(self, low: int, high: int) -> bool:
        """Widen the dirty range to [low, high); True when the region was clean before."""
        was_clean = self.dirty_low >= self.dirty_high
        if was_clean:
            self.dirty_low, self.dirty_high = low, high
        else:
            self.dirty_low = min(self.dirty_low, low)
            self.dirty_high = max(self.dirty_high, high)
        return was_clean


@dataclass
class StateBuffer:
    handles: StateBufferHandles
    capacity: int
    next_free: int = 0
    free: dict[int, list[int]] = field(default_factory=dict)
    dirty: list[Region] = field(default_factory=list)
    # The device-address table (gpuav.instrument.address_table): word TABLE_OFFSET_WORD and
    # the regions published, the last two kept (a submission still running may read the one
    # before).
    table_head: Region | None = None
    tables: list[Region] = field(default_factory=list)
    # Regions by offset, and the action tables of those that sets were bound with, with the
    # region's change count they were made at.
    live: dict[int, Region] = field(default_factory=dict)
    action_tables: dict[int, tuple[int, list[int]]] = field(default_factory=dict)

    @classmethod
    def create(
        cls,
        calls: DeviceCalls,
        facts: PhysicalDeviceFacts,
        words: int | None = None,
        device_address: bool = False,
    ) -> StateBuffer:
        capacity = words or state_words_setting()
        capacity = min(capacity, facts.max_storage_buffer_range // 4)
        handles = calls.create_state_buffer(capacity * 4, facts.memory_type_flags, device_address)
        # Regions start after the address table's offset word.
        return cls(handles, capacity, next_free=TABLE_OFFSET_WORD + 1)

    def allocate(self, words: array[int]) -> Region:
        """A region holding ``words``, written at the next flush (NO_STATE when full)."""
        size = len(words)
        reusable = self.free.get(size)
        if reusable:
            offset = reusable.pop()
        elif self.next_free + size <= self.capacity:
            offset = self.next_free
            self.next_free += size
        else:
            return Region(NO_STATE, words)
        region = self.live[offset] = Region(offset, words)
        self.mark(region, 0, size)
        return region

    def release(self, region: Region) -> None:
        if region.offset != NO_STATE:
            self.free.setdefault(len(region.words), []).append(region.offset)
            self.live.pop(region.offset, None)
            self.action_tables.pop(region.offset, None)
            region.offset = NO_STATE
            region.dirty_low = region.dirty_high = 0

    def set_tables(self, offset: int, summarized: dict[Region, int]) -> list[int]:
        """The action table entries of the set whose region starts at ``offset``
        (``descriptor_state.set_tables``), made again only after its words changed; the
        region and the change count its summaries were made at go into ``summarized``
        (the first count stays)."""
        region = self.live.get(offset)
        if region is None:
            return UNKNOWN_SET_TABLES
        made = self.action_tables.get(offset)
        if made is None or made[0] != region.changes:
            # The count is read before the words: a change made meanwhile makes it stale.
            changes = region.changes
            made = self.action_tables[offset] = (changes, set_tables(offset, region.words))
        summarized.setdefault(region, made[0])
        return made[1]

    def mark(self, region: Region, low: int, high: int) -> None:
        if region.offset != NO_STATE:
            region.changes += 1
            if region.touch(low, high):
                self.dirty.append(region)

    def publish_table(self, words: array[int]) -> None:
        """Make ``words`` the device-address table at the next flush (no table, so that the
        checks pass, when the buffer is full)."""
        region = self.allocate(words)
        if self.table_head is None:
            self.table_head = Region(TABLE_OFFSET_WORD, array("I", [0]))
        self.table_head.words[0] = 0 if region.offset == NO_STATE else region.offset
        self.mark(self.table_head, 0, 1)
        self.tables.append(region)
        if len(self.tables) > 2:
            self.release(self.tables.pop(0))

    def flush(self) -> int:
        """Copy every dirty range into the mapped buffer; returns the words copied."""
        if not self.dirty:
            return 0
        dirty, self.dirty = self.dirty, []  # marks made meanwhile wait for the next flush
        mapped = self.handles.words
        copied = 0
        for region in dirty:
            low, high = region.dirty_low, region.dirty_high
            if region.offset != NO_STATE and low < high:
                base = region.offset
                mapped[base + low : base + high] = memoryview(region.words)[low:high]
                copied += high - low
            region.dirty_low = region.dirty_high = 0
        return copied

    def destroy(self, calls: DeviceCalls) -> None:
        calls.destroy_state_buffer(self.handles)
