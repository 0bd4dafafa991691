"""The descriptor-buffer tracker on its own (no Vulkan): what vkGetDescriptorEXT bytes stand
for, a set's words rebuilt from the bytes of a mapped descriptor buffer (written, unwritten,
a buffer's range, bytes the tracker never saw), and where it cannot read them."""

from __future__ import annotations

import ctypes
from array import array

from gpuav.instrument.descriptor_state import (
    ACCESSIBLE,
    binding_size_word,
    binding_table_word,
    range_word,
)
from gpuav.layer import resource_lifetimes
from gpuav.layer.buffers import BUFFER_USAGE_SHADER_DEVICE_ADDRESS, BoundBuffer
from gpuav.layer.calls import StateBufferHandles
from gpuav.layer.descriptor_buffer_memory import DESCRIPTOR_BUFFER_USAGE, Mapping
from gpuav.layer.descriptor_buffers import (
    DESCRIPTOR_TYPE_STORAGE_BUFFER,
    DESCRIPTOR_TYPE_STORAGE_IMAGE,
    DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
    MAX_DESCRIBED,
    DescribedBuffer,
    DescriptorBufferTracker,
    SetLayoutBytes,
    descriptor_word,
)
from gpuav.layer.descriptor_sets import DescriptorTracker
from gpuav.layer.resource_lifetimes import Retired
from gpuav.layer.set_layouts import LayoutBinding
from gpuav.layer.state_buffer import StateBuffer

DESCRIPTOR_SIZE = 16
LAYOUT = 10
BUFFER, MEMORY, ADDRESS = 50, 60, 0x10_0000
FORMAT_R32_UINT = 98


def _descriptor(tag: int) -> bytes:
    return bytes([tag]) * DESCRIPTOR_SIZE


def _descriptors(capacity: int = 4096) -> DescriptorTracker:
    words = memoryview(array("I", [0] * capacity))
    return DescriptorTracker(StateBuffer(StateBufferHandles(1, 2, capacity * 4, words), capacity))


def tracker(memory: ctypes.Array[ctypes.c_char]) -> DescriptorBufferTracker:
    """A tracker with one layout (binding 0: three storage buffers, binding 1: one), and a
    descriptor buffer at ADDRESS whose memory ``memory`` is mapped whole, bound at byte 16."""
    descriptors = _descriptors()
    bindings = [LayoutBinding(0, DESCRIPTOR_TYPE_STORAGE_BUFFER, 3), LayoutBinding(1, 7, 1)]
    descriptors.create_layout(LAYOUT, bindings)
    descriptors.buffers.create(
        BUFFER, len(memory) - 16, DESCRIPTOR_BUFFER_USAGE | BUFFER_USAGE_SHADER_DEVICE_ADDRESS
    )
    descriptors.buffers.bind(BUFFER)
    descriptors.buffers.note_address(BUFFER, ADDRESS)
    buffers = DescriptorBufferTracker(descriptors)
    buffers.create_layout(LAYOUT, SetLayoutBytes(4 * DESCRIPTOR_SIZE, {0: 0, 1: 48}))
    buffers.memory.bind_buffer_memory(BUFFER, MEMORY, 16)
    buffers.memory.map_memory(MEMORY, Mapping(ctypes.addressof(memory), 0, len(memory)))
    return buffers


def _put(memory: ctypes.Array[ctypes.c_char], at: int, data: bytes) -> None:
    ctypes.memmove(ctypes.addressof(memory) + at, data, len(data))


def _words(buffers: DescriptorBufferTracker, address: int, binding: int) -> list[int]:
    place = buffers.place(LAYOUT, address)
    assert place is not None
    words = place.region.words
    table = words[binding_table_word(binding)]
    return words[table : table + words[binding_size_word(binding)]].tolist()


def test_bytes_standing_for_two_ranges_keep_the_larger() -> None:
    buffers = DescriptorBufferTracker(_descriptors())
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_BUFFER, _descriptor(1), range_word(32))
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_BUFFER, _descriptor(1), range_word(64))
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_BUFFER, _descriptor(1), range_word(16))
    assert buffers.described[_descriptor(1)] == range_word(64)
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_BUFFER, _descriptor(1), ACCESSIBLE)
    assert buffers.described[_descriptor(1)] == ACCESSIBLE
    assert buffers.descriptor_sizes == {DESCRIPTOR_TYPE_STORAGE_BUFFER: DESCRIPTOR_SIZE}


def test_bytes_standing_for_two_images_keep_no_facts() -> None:
    """An image descriptor's word carries the view's facts: bytes that stood for two views
    (a driver that does not encode what differs) check none of them."""
    buffers = DescriptorBufferTracker(_descriptors())
    two_d, three_d = ACCESSIBLE | 1 << 2, ACCESSIBLE | 1 << 3
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_IMAGE, _descriptor(1), two_d)
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_IMAGE, _descriptor(1), two_d)
    assert buffers.described[_descriptor(1)] == two_d
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_IMAGE, _descriptor(1), three_d)
    assert buffers.described[_descriptor(1)] == ACCESSIBLE


def test_descriptor_words() -> None:
    assert descriptor_word(DESCRIPTOR_TYPE_STORAGE_BUFFER, 64, 0) == range_word(64)
    assert descriptor_word(DESCRIPTOR_TYPE_STORAGE_BUFFER, None, 0) == ACCESSIBLE  # null
    texels = descriptor_word(DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, 64, FORMAT_R32_UINT)
    assert texels == range_word(16)


def test_set_words_follow_the_mapped_bytes_at_each_refresh() -> None:
    memory = ctypes.create_string_buffer(16 + 8 * DESCRIPTOR_SIZE)
    buffers = tracker(memory)
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_BUFFER, _descriptor(1), range_word(64))
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_BUFFER, _descriptor(2), range_word(32))
    set_at = 16 + DESCRIPTOR_SIZE  # the set's first byte in ``memory``
    _put(memory, set_at, _descriptor(1))
    _put(memory, set_at + 2 * DESCRIPTOR_SIZE, _descriptor(9))  # unseen
    _put(memory, set_at + 48, _descriptor(2))
    place = buffers.place(LAYOUT, ADDRESS + DESCRIPTOR_SIZE)
    assert place is not None
    assert _words(buffers, place.address, 0) == [ACCESSIBLE] * 3  # until read
    assert buffers.refresh(place)
    assert _words(buffers, place.address, 0) == [range_word(64), 0, 0]
    assert _words(buffers, place.address, 1) == [range_word(32)]
    buffers.descriptors.state.flush()
    mapped = buffers.descriptors.state.handles.words
    offset = place.region.offset
    assert mapped[offset : offset + len(place.region.words)].tolist() == place.region.words.tolist()
    _put(memory, set_at + DESCRIPTOR_SIZE, _descriptor(2))
    assert buffers.refresh(place)
    assert _words(buffers, place.address, 0) == [range_word(64), range_word(32), 0]
    assert buffers.descriptors.state.dirty == [place.region]


def test_bytes_never_seen_read_accessible_once_the_tracker_forgets() -> None:
    memory = ctypes.create_string_buffer(16 + 8 * DESCRIPTOR_SIZE)
    buffers = tracker(memory)
    for tag in range(MAX_DESCRIBED + 1):
        tag_bytes = tag.to_bytes(4, "little") * (DESCRIPTOR_SIZE // 4)
        buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_BUFFER, tag_bytes, range_word(64))
    assert buffers.saturated
    place = buffers.place(LAYOUT, ADDRESS)
    assert place is not None and buffers.refresh(place)
    assert _words(buffers, ADDRESS, 0) == [range_word(64)] * 3  # zeros: tag 0, remembered
    _put(memory, 16, _descriptor(0xEE))
    assert buffers.refresh(place)
    assert _words(buffers, ADDRESS, 0) == [ACCESSIBLE, range_word(64), range_word(64)]


def test_bytes_are_read_only_where_the_app_mapped_them() -> None:
    memory = ctypes.create_string_buffer(16 + 8 * DESCRIPTOR_SIZE)
    buffers = tracker(memory)
    assert buffers.memory.read(ADDRESS, 8 * DESCRIPTOR_SIZE) is not None
    assert buffers.memory.read(ADDRESS + 1, 8 * DESCRIPTOR_SIZE) is None  # past the buffer
    assert buffers.memory.read(ADDRESS - 1, 4) is None  # before it
    buffers.memory.map_memory(MEMORY, Mapping(ctypes.addressof(memory) + 32, 32, 64))
    assert buffers.memory.read(ADDRESS + 16, 64) is not None
    assert buffers.memory.read(ADDRESS, 16) is None  # before the mapping
    assert buffers.memory.read(ADDRESS + 16, 65) is None  # past it
    buffers.memory.written_by_command(BUFFER + 1)  # not a descriptor buffer
    assert buffers.memory.read(ADDRESS + 16, 64) is not None
    buffers.memory.written_by_command(BUFFER)  # a copy into it: its bytes come later
    assert buffers.memory.read(ADDRESS + 16, 64) is None
    buffers.memory.unmap_memory(MEMORY)
    place = buffers.place(LAYOUT, ADDRESS)
    assert place is not None and not buffers.refresh(place)
    assert _words(buffers, ADDRESS, 0) == [ACCESSIBLE] * 3  # indices only
    buffers.memory.free_memory(MEMORY)
    assert buffers.memory.buffer_memory == {}


def test_a_buffer_descriptor_names_the_buffer_at_its_address_as_at_the_submit() -> None:
    memory = ctypes.create_string_buffer(16 + 8 * DESCRIPTOR_SIZE)
    buffers = tracker(memory)
    data, data_address = 70, 0x20_0000
    buffers.descriptors.buffers.create(data, 256, BUFFER_USAGE_SHADER_DEVICE_ADDRESS)
    buffers.descriptors.buffers.bind(data)
    buffers.descriptors.buffers.note_address(data, data_address)
    described = DescribedBuffer(data_address + 128, 32)
    buffers.got_descriptor(
        DESCRIPTOR_TYPE_STORAGE_BUFFER, _descriptor(1), range_word(32), described
    )
    _put(memory, 16 + DESCRIPTOR_SIZE, _descriptor(1))
    place = buffers.place(LAYOUT, ADDRESS)
    assert place is not None and buffers.refresh(place)
    regions = [place.region.offset]
    expected = BoundBuffer(data, 128, 32)
    assert buffers.bound_buffer(regions, 0, 0, 1) == (DESCRIPTOR_TYPE_STORAGE_BUFFER, expected)
    assert buffers.bound_buffer(regions, 0, 0, 0) == (DESCRIPTOR_TYPE_STORAGE_BUFFER, None)
    assert buffers.bound_buffer(regions, 1, 0, 0) is None  # not a descriptor-buffer set
    assert buffers.bound_buffer([0xFFFF_FFFF], 0, 0, 0) is None


def test_descriptors_naming_a_gone_buffer_read_unusable_with_the_reason() -> None:
    memory = ctypes.create_string_buffer(16 + 8 * DESCRIPTOR_SIZE)
    buffers = tracker(memory)
    lifetimes = buffers.descriptors.lifetimes
    data, data_memory, data_address = 70, 80, 0x20_0000
    buffers.descriptors.buffers.create(data, 256, BUFFER_USAGE_SHADER_DEVICE_ADDRESS)
    buffers.descriptors.buffers.bind(data)
    buffers.descriptors.buffers.note_address(data, data_address)
    lifetimes.created(data, resource_lifetimes.BUFFER, data_memory)
    described = DescribedBuffer(data_address, 64)
    buffers.got_descriptor(
        DESCRIPTOR_TYPE_STORAGE_BUFFER, _descriptor(1), range_word(64), described
    )
    _put(memory, 16, _descriptor(1))
    place = buffers.place(LAYOUT, ADDRESS)
    assert place is not None and buffers.refresh(place)
    regions = [place.region.offset]
    assert _words(buffers, ADDRESS, 0)[0] == range_word(64)
    buffers.object_gone(data_memory, resource_lifetimes.MEMORY)  # the buffer's memory is freed
    assert buffers.refresh(place)
    assert _words(buffers, ADDRESS, 0)[0] == 0
    assert buffers.retired(regions, 0, 0, 0) == Retired(
        resource_lifetimes.MEMORY, data_memory, resource_lifetimes.BUFFER, data
    )
    assert buffers.retired(regions, 0, 0, 1) is None
    buffers.object_made(data)  # the handle names a live buffer again
    assert buffers.refresh(place)
    assert _words(buffers, ADDRESS, 0)[0] == range_word(64)
    assert buffers.retired(regions, 0, 0, 0) is None


def test_descriptors_naming_a_view_of_a_destroyed_image_read_unusable() -> None:
    memory = ctypes.create_string_buffer(16 + 8 * DESCRIPTOR_SIZE)
    buffers = tracker(memory)
    image, view = 90, 91
    buffers.descriptors.lifetimes.created(view, resource_lifetimes.IMAGE_VIEW, image)
    buffers.got_descriptor(DESCRIPTOR_TYPE_STORAGE_IMAGE, _descriptor(5), ACCESSIBLE, None, (view,))
    buffers.object_gone(image, resource_lifetimes.IMAGE)
    assert buffers.objects.reason(_descriptor(5)) == Retired(
        resource_lifetimes.IMAGE, image, resource_lifetimes.IMAGE_VIEW, view
    )
    buffers.object_made(view)  # a new view with the old handle
    assert buffers.objects.reason(_descriptor(5)) is None
