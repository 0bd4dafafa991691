"""The debug output buffer of seed 000, bound by the test itself instead of the layer.

``DebugOutputBuffer`` allocates ``{uint DataWrittenLength; uint Data[];}`` zero-filled, gives the
binding for (set N, binding 0), and decodes the complete records the shaders wrote, following
the layout in ``gpuav/instrument/record.py``: records are read until a size of 0 or until the
next record would not fit in ``Data``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from gpuav.instrument import record
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage
from tests.harness.buffers import Buffer
from tests.harness.descriptors import Binding, DescriptorSetSpec

if TYPE_CHECKING:
    from tests.harness.context import VulkanContext

DEFAULT_SET = 7


def decode_records(words: np.ndarray | list[int]) -> list[ErrorRecord]:
    """Complete records in a whole output buffer (DataWrittenLength first)."""
    data = [int(w) for w in words[record.DATA_FIRST_WORD :]]
    records: list[ErrorRecord] = []
    position = 0
    while position < len(data):
        size = data[position]
        if size == 0 or position + size > len(data):
            break
        records.append(decode_record(data[position : position + size]))
        position += size
    return records


def decode_record(words: list[int]) -> ErrorRecord:
    """One record; ValueError when its size does not match its error code."""
    code = ErrorCode(words[record.ERROR_CODE])
    if words[record.RECORD_SIZE] != record.record_size(code) or len(words) != record.record_size(
        code
    ):
        raise ValueError(f"record of {len(words)} words does not fit error {code.name}: {words}")
    return ErrorRecord(
        shader_id=words[record.SHADER_ID],
        instruction_index=words[record.INSTRUCTION_INDEX],
        stage=Stage(words[record.STAGE]),
        stage_words=(words[record.STAGE_WORD_0], words[record.STAGE_WORD_1]),
        error_code=code,
        descriptor_index=words[record.DESCRIPTOR_INDEX],
        array_length=(words[record.ARRAY_LENGTH] if code in record.DESCRIPTOR_ERRORS else None),
        details=(
            tuple(w for w in words[record.DESCRIPTOR_SET_BINDING :] if w != record.NO_SET_BINDING)
            if code in record.DESCRIPTOR_ERRORS
            else tuple(words[record.DESCRIPTOR_INDEX + 1 :])
        ),
    )


class DebugOutputBuffer:
    """``1 + capacity_words`` zero-filled uints, bound as a storage buffer at (set, 0)."""

    def __init__(
        self, vk: VulkanContext, capacity_words: int = 1024, set_index: int = DEFAULT_SET
    ) -> None:
        self.capacity_words = capacity_words
        self.set_index = set_index
        self.buffer = Buffer(vk, 4 * (record.DATA_FIRST_WORD + capacity_words))

    def binding(self) -> Binding:
        return Binding(binding=0, type="storage_buffer", resources=[self.buffer])

    def set_spec(self) -> DescriptorSetSpec:
        return DescriptorSetSpec([self.binding()])

    def sets(self) -> dict[int, DescriptorSetSpec]:
        """``{set_index: spec}``, to merge into a run's sets: ``{**app_sets, **dbg.sets()}``."""
        return {self.set_index: self.set_spec()}

    def words(self) -> np.ndarray:
        return np.asarray(self.buffer.array(np.uint32), dtype=np.uint32)

    @property
    def written_length(self) -> int:
        """DataWrittenLength: words the shaders tried to claim (may exceed the capacity)."""
        return int(self.words()[record.WRITTEN_LENGTH_WORD])

    def records(self) -> list[ErrorRecord]:
        return decode_records(self.words())

    def reset(self) -> None:
        """Zero everything again, as the protocol requires before the next use."""
        self.buffer.fill_zero()

    def destroy(self) -> None:
        self.buffer.destroy()
