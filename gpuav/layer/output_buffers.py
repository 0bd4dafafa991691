"""The device memory and descriptor manager for the instrumentation's output blocks.

Seed 000 gives each draw its own memory block and its own descriptor set. We keep the first
half of that (a block per action, so an error names its command buffer and draw) but make it
cheap: memory comes in chunks, each one host-coherent buffer that stays mapped, cut into
equal blocks; each chunk has ONE descriptor set whose binding 0 is a
``STORAGE_BUFFER_DYNAMIC`` of one block's size, and the dynamic offset given when binding
selects the action's block. Recording an action therefore allocates nothing and updates no
descriptor. A block is ``{uint DataWrittenLength; uint Data[];}`` (``gpuav.instrument.record``).

Block 0 of the first chunk is the spill block: when no more memory can be had, actions of
instrumented pipelines bind it so the shaders still have somewhere valid to write.
"""

from __future__ import annotations

import threading
from array import array
from dataclasses import dataclass

from gpuav.instrument.record import DATA_FIRST_WORD, MAX_RECORD_WORDS, WRITTEN_LENGTH_WORD
from gpuav.layer.calls import DeviceCalls, OutputChunkHandles, PhysicalDeviceFacts

RECORDS_PER_BLOCK = 16
DEFAULT_BLOCKS_PER_CHUNK = 512


def round_up(value: int, alignment: int) -> int:
    return (value + alignment - 1) // alignment * alignment


def block_size_bytes(facts: PhysicalDeviceFacts, records: int = RECORDS_PER_BLOCK) -> int:
    """Bytes per block: the header word plus room for ``records`` of the largest record, rounded
    to the dynamic-offset alignment (VUID-vkCmdBindDescriptorSets-pDynamicOffsets-01972)."""
    alignment = max(16, facts.min_storage_buffer_offset_alignment)
    wanted = round_up((DATA_FIRST_WORD + records * MAX_RECORD_WORDS) * 4, alignment)
    limit = facts.max_storage_buffer_range // alignment * alignment
    return max(alignment, min(wanted, limit))


@dataclass(slots=True, eq=False)
class Chunk:
    handles: OutputChunkHandles
    words: memoryview


@dataclass(slots=True, eq=False)
class Block:
    chunk: Chunk
    word_offset: int
    dynamic_offset: int
    descriptor_set: int
    spill: bool = False


class OutputBuffers:
    """Hands out zeroed output blocks; reads and re-zeroes them after a submit."""

    def __init__(
        self,
        calls: DeviceCalls,
        facts: PhysicalDeviceFacts,
        set_layout: int,
        blocks_per_chunk: int = DEFAULT_BLOCKS_PER_CHUNK,
    ) -> None:
        self._calls = calls
        self._facts = facts
        self._set_layout = set_layout
        self.block_bytes = block_size_bytes(facts)
        self.block_words = self.block_bytes // 4
        self.data_words = self.block_words - DATA_FIRST_WORD
        self._blocks_per_chunk = max(2, blocks_per_chunk)
        self._chunks: list[Chunk] = []
        self._free: list[Block] = []
        self._grow_lock = threading.Lock()
        self._zeros = memoryview(array("I", bytes(self.block_bytes)))
        self.exhausted = False
        self._add_chunk()  # raises: the device then runs without GPU-AV
        self.spill = self._free.pop(0)
        self.spill.spill = True

    def _add_chunk(self) -> Chunk:
        size = self.block_bytes * self._blocks_per_chunk
        handles = self._calls.create_output_chunk(
            size, self._facts.memory_type_flags, self._set_layout, self.block_bytes
        )
        chunk = Chunk(handles, handles.words)
        self._chunks.append(chunk)
        self._free.extend(
            Block(chunk, index * self.block_words, index * self.block_bytes, handles.descriptor_set)
            for index in range(self._blocks_per_chunk)
        )
        return chunk

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

    def release(self, block: Block) -> None:
        if block.spill:
            return
        if block.chunk.words[block.word_offset + WRITTEN_LENGTH_WORD]:
            self._clear(block)
        self._free.append(block)

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
