"""Which memory gpuav's own buffers go in: the blocks the host reads back in host-cached
memory, the bound-sets areas every action's shaders read first in device-local memory where a
host-visible kind exists (on an H100, shaders reading them across the bus cost about 2 µs a
draw: benchmarks/RESULTS_frame_loop.md)."""

from __future__ import annotations

import pytest

from gpuav.layer.calls import (
    MEMORY_PROPERTY_DEVICE_LOCAL,
    MEMORY_PROPERTY_HOST_CACHED,
    MEMORY_PROPERTY_HOST_COHERENT,
    MEMORY_PROPERTY_HOST_VISIBLE,
    VulkanCallFailed,
)
from gpuav.layer.native.device_calls import choose_memory_type

LOCAL = MEMORY_PROPERTY_DEVICE_LOCAL
HOST = MEMORY_PROPERTY_HOST_VISIBLE | MEMORY_PROPERTY_HOST_COHERENT
CACHED = HOST | MEMORY_PROPERTY_HOST_CACHED

# A discrete GPU's types: device-local only, host memory (coherent, then cached), and the
# host-visible window on device memory.
DISCRETE = (LOCAL, HOST, CACHED, LOCAL | HOST)


def test_memory_the_host_reads_is_cached_and_memory_it_only_writes_is_device_local() -> None:
    every = (1 << len(DISCRETE)) - 1
    assert choose_memory_type(every, DISCRETE) == 2
    assert choose_memory_type(every, DISCRETE, device_local=True) == 3


def test_without_a_host_visible_device_local_kind_areas_go_where_blocks_go() -> None:
    every = (1 << 3) - 1
    assert choose_memory_type(every, DISCRETE[:3], device_local=True) == 2
    # A type the buffer cannot use is never chosen.
    assert choose_memory_type(0b0110, DISCRETE, device_local=True) == 2


def test_a_buffer_no_host_visible_type_can_hold_is_refused() -> None:
    with pytest.raises(VulkanCallFailed):
        choose_memory_type(0b0001, DISCRETE, device_local=True)
