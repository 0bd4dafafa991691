"""The device memory and descriptor manager for the instrumentation's output blocks.

Seed 000 gives each draw its own memory block and its own descriptor set, allocated and
written per draw. We keep a block per action (so an error names its command buffer and draw)
but make it cheap: memory comes in chunks, each one host-coherent buffer that stays mapped,
cut into equal blocks, and each block has its own descriptor set (binding 0, a storage buffer
covering just that block) allocated and written once, when the chunk is made. Recording an
action allocates nothing and updates no descriptor: it binds the block's set.

(One ``STORAGE_BUFFER_DYNAMIC`` set per chunk, the block chosen by the dynamic offset, needs
fewer sets, but lavapipe pays about 10 us of execution per bind with a dynamic offset against
almost nothing for a plain set: 200 dispatches took 5.5 ms instead of 3.5 ms.)

A block is ``{uint DataWrittenLength; uint Data[];}`` (``gpuav.instrument.record``). Each
block also owns a bound-sets area (issue 8: the region offset of each set the app had bound,
copied there when the action is recorded), in a second buffer of the chunk that the host only
writes (device-local where it can be, ``calls.ChunkLayout``), and its set's binding 2 is the
descriptor-state buffer (``state_buffer``); all three written once.

Block 0 of the first chunk is the spill block: when no more memory can be had, actions of
instrumented pipelines bind it so the shaders still have somewhere valid to write.
"""

from __future__ import annotations

import mmap
from _thread import allocate_lock  # threading.Lock, without importing threading
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

from gpuav.errors import ResourceExhausted
from gpuav.instrument.descriptor_state import BOUND_AREA_WORDS
from gpuav.instrument.record import (
    DATA_FIRST_WORD,
    MAX_RECORD_WORDS,
    RESERVED_TAIL_WORDS,
    WRITTEN_LENGTH_WORD,
)
from gpuav.layer import address_space, faults
from gpuav.layer.calls import ChunkLayout, DeviceCalls, OutputChunkHandles, PhysicalDeviceFacts

RECORDS_PER_BLOCK = 16
DEFAULT_BLOCKS_PER_CHUNK = 256


def round_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def block_size_bytes(
    facts: PhysicalDeviceFacts, records: int = RECORDS_PER_BLOCK, printf_bytes: int = 0
) -> int:
    """Bytes per block: the header word plus room for ``records`` of the largest record, the
    printf buffer and the count of printf lines lost (``RESERVED_TAIL_WORDS``), rounded to the
    storage-buffer offset alignment (VUID-VkWriteDescriptorSet-descriptorType-00328)."""
    alignment = max(16, facts.min_storage_buffer_offset_alignment)
    words = DATA_FIRST_WORD + records * MAX_RECORD_WORDS + RESERVED_TAIL_WORDS
    wanted = round_up(words * 4 + printf_bytes, alignment)
    limit = facts.max_storage_buffer_range // alignment * alignment
    return max(alignment, min(wanted, limit))


# The largest minUniformBufferOffsetAlignment a device may have: the bound-sets areas are
# bound as uniform buffers at multiples of it.
UNIFORM_OFFSET_ALIGNMENT_LIMIT = 256


def bound_sets_size_bytes(facts: PhysicalDeviceFacts) -> int:
    """Bytes of a bound-sets area (BOUND_AREA_WORDS words), aligned for a uniform buffer."""
    alignment = max(UNIFORM_OFFSET_ALIGNMENT_LIMIT, facts.min_storage_buffer_offset_alignment)
    return round_up(BOUND_AREA_WORDS * 4, alignment)


@dataclass(slots=True, eq=False)
class Chunk:
    handles: OutputChunkHandles
    words: memoryview  # the blocks
    area_words: memoryview  # the bound-sets areas (written only: device-local memory)


@dataclass(slots=True, eq=False)
class Block:
    chunk: Chunk
    word_offset: int
    descriptor_set: int
    bound_sets_offset: int  # word offset of the block's bound-sets area in area_words
    context_address: int = 0  # device address of the block's context (0: none)
    spill: bool = False
    # The bound-sets area last copied into the block, all but its verdict word (None: not
    # known): a block drawn again with the same area needs no copy.
    area: array[int] | None = None


class OutputBuffers:
    """Hands out zeroed output blocks; reads and re-zeroes them after a submit."""

    def __init__(
        self,
        calls: DeviceCalls,
        facts: PhysicalDeviceFacts,
        set_layout: int,
        blocks_per_chunk: int = DEFAULT_BLOCKS_PER_CHUNK,
        state_buffer: int = 0,
        state_address: int = 0,
        printf_bytes: int = 0,
    ) -> None:
        self._calls = calls
        self._facts = facts
        self._set_layout = set_layout
        self._state_buffer = state_buffer
        self._state_address = state_address
        self.block_bytes = block_size_bytes(facts, printf_bytes=printf_bytes)
        self.printf_bytes = printf_bytes
        self.bound_sets_bytes = bound_sets_size_bytes(facts)
        self.block_words = self.block_bytes // 4
        self.data_words = self.block_words - DATA_FIRST_WORD
        self._blocks_per_chunk = max(2, blocks_per_chunk)
        self._chunks: list[Chunk] = []
        self._free: list[Block] = []
        self._grow_lock = allocate_lock()
        self._zeros = memoryview(array("I", bytes(self.block_bytes)))
        self._lengths_end = self._blocks_per_chunk * self.block_words
        self._no_lengths = bytes(4 * self._blocks_per_chunk)
        self.exhausted = False
        self._add_chunk()  # raises: the device then runs without GPU-AV
        self.spill = self._free.pop(0)
        self.spill.spill = True

    def _add_chunk(self) -> Chunk:
        if self._chunks:
            faults.check("output_chunk")
            if not address_space.room_for(self._chunk_address_space()):
                raise ResourceExhausted("no address space left for more output memory")
        layout = ChunkLayout(
            self._blocks_per_chunk,
            self.block_bytes,
            self.bound_sets_bytes,
            self._set_layout,
            self._facts.memory_type_flags,
            self._state_buffer,
            self._state_address,
        )
        handles = self._calls.create_output_chunk(layout)
        chunk = Chunk(handles, handles.words, handles.area_words)
        self._chunks.append(chunk)
        bound_words = self.bound_sets_bytes // 4
        contexts = handles.context_addresses or (0,) * len(handles.descriptor_sets)
        self._free.extend(
            Block(
                chunk,
                index * self.block_words,
                descriptor_set,
                index * bound_words,
                context_address,
            )
            for index, (descriptor_set, context_address) in enumerate(
                zip(handles.descriptor_sets, contexts, strict=True)
            )
        )
        return chunk

    def _chunk_address_space(self) -> int:
        """Address space a chunk takes: its memory, and a page per descriptor set (lavapipe
        maps each set)."""
        blocks = self._blocks_per_chunk
        return blocks * (self.block_bytes + self.bound_sets_bytes) + blocks * mmap.PAGESIZE

    def acquire(self) -> Block:
        """A zeroed block; the spill block (and ``exhausted`` set) once memory runs out."""
        try:
            return self._free.pop()
        except IndexError:
            pass
        with self._grow_lock:
            if not self._free and not self.exhausted:
                try:
                    self._add_chunk()
                except Exception:
                    self.exhausted = True
            if self._free:
                return self._free.pop()
        return self.spill

    def release(self, blocks: Iterable[Block]) -> None:
        """Give blocks back, zeroing any a shader wrote since it was last read."""
        free = self._free
        for block in blocks:
            if block.spill:
                continue
            if block.chunk.words[block.word_offset + WRITTEN_LENGTH_WORD]:
                self._clear(block)
            free.append(block)

    def written_in(self, chunk: Chunk) -> bool:
        """Whether any block of the chunk holds records: its blocks' first words, at a stride,
        compared with zeros in one C-level copy and compare."""
        lengths = chunk.words[WRITTEN_LENGTH_WORD : self._lengths_end : self.block_words]
        return lengths.tobytes() != self._no_lengths

    def take_words(self, block: Block) -> list[int] | None:
        """The block's words if a shader wrote anything, zeroing it for the next run."""
        words = block.chunk.words
        base = block.word_offset
        if not words[base + WRITTEN_LENGTH_WORD]:
            return None
        content = words[base : base + self.block_words].tolist()
        self._clear(block)
        return content

    def _clear(self, block: Block) -> None:
        base = block.word_offset
        written = block.chunk.words[base + WRITTEN_LENGTH_WORD]
        count = DATA_FIRST_WORD + min(written, self.data_words)
        block.chunk.words[base : base + count] = self._zeros[:count]

    def destroy(self) -> None:
        for chunk in self._chunks:
            self._calls.destroy_output_chunk(chunk.handles)
        self._chunks.clear()
        self._free.clear()
