"""The device-address table at submit time: the live address ranges as the shaders' checks
read them (``gpuav.instrument.address_table``), published again whenever a buffer with a
device address was bound, had its address taken, or was destroyed since the last submit."""

from __future__ import annotations

from array import array

from gpuav.instrument.address_table import table_words
from gpuav.layer.buffers import BufferTable
from gpuav.layer.state_buffer import StateBuffer


def publish_addresses(buffers: BufferTable, state: StateBuffer) -> None:
    """Publish the table if it changed (the first submit publishes one, empty or not)."""
    if buffers.published_generation == buffers.address_generation:
        return
    state.publish_table(array("I", table_words(buffers.address_ranges())))
    buffers.published_generation = buffers.address_generation
