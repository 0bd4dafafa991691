"""The descriptor tracker and state buffer on their own (no Vulkan): regions as the contract
lays them out, written flags from writes, copies and templates, consecutive-binding roll-over
against a brute-force model, dirty-range flushes, region reuse, descriptors retired when the
objects they name (or what those hang on) are destroyed."""

from __future__ import annotations

from array import array

from hypothesis import given
from hypothesis import strategies as st

from gpuav.instrument.descriptor_state import NO_STATE, range_from_word, region_words
from gpuav.layer.buffers import WHOLE_SIZE, BoundBuffer
from gpuav.layer.calls import StateBufferHandles
from gpuav.layer.descriptor_sets import DescriptorTracker, TemplateEntry
from gpuav.layer.resource_lifetimes import (
    BUFFER,
    IMAGE,
    IMAGE_VIEW,
    MEMORY,
    SAMPLER,
    Retired,
)
from gpuav.layer.set_layouts import (
    BINDING_PARTIALLY_BOUND,
    BINDING_VARIABLE_DESCRIPTOR_COUNT,
    LayoutBinding,
)
from gpuav.layer.state_buffer import StateBuffer

SAMPLER_TYPE = 0
COMBINED_IMAGE_SAMPLER = 1
INLINE_UNIFORM_BLOCK = 1000138000
STORAGE_BUFFER = 7
PARTIAL = BINDING_PARTIALLY_BOUND
VARIABLE = BINDING_VARIABLE_DESCRIPTOR_COUNT


def tracker(capacity: int = 4096) -> DescriptorTracker:
    words = memoryview(array("I", [0xDEAD] * capacity))
    return DescriptorTracker(StateBuffer(StateBufferHandles(1, 2, capacity * 4, words), capacity))


def mapped(descriptors: DescriptorTracker, handle: int) -> list[int]:
    region = descriptors.sets[handle].region
    start = region.offset
    return descriptors.state.handles.words[start : start + len(region.words)].tolist()


def test_region_of_a_plain_layout_is_the_contract_region() -> None:
    descriptors = tracker()
    bindings = [LayoutBinding(0, STORAGE_BUFFER, 3), LayoutBinding(2, STORAGE_BUFFER, 2)]
    descriptors.create_layout(10, bindings)
    descriptors.allocate_sets(5, [10], [100], [])
    descriptors.state.flush()
    unwritten = region_words({0: 3, 2: 2})
    first_table = unwritten[1]
    unwritten[first_table:] = [0] * (len(unwritten) - first_table)  # nothing written yet
    assert mapped(descriptors, 100) == unwritten


def test_partially_bound_variable_binding_starts_unwritten_at_its_allocated_count() -> None:
    descriptors = tracker()
    bindings = [LayoutBinding(0, STORAGE_BUFFER, 1), LayoutBinding(1, 7, 64, PARTIAL | VARIABLE)]
    descriptors.create_layout(10, bindings)
    descriptors.allocate_sets(5, [10, 10], [100, 101], [3])
    descriptors.state.flush()
    assert mapped(descriptors, 100) == [2, 5, 1, 6, 3, 0, 0, 0, 0]
    assert mapped(descriptors, 101)[4] == 0  # no count given: a variable count of zero
    descriptors.write(100, 1, 1, 2)
    assert descriptors.state.flush() == 2  # only the changed words travel
    assert mapped(descriptors, 100)[6:] == [0, 1, 1]


def test_writes_roll_over_into_the_next_binding_like_the_model() -> None:
    descriptors = tracker()
    bindings = [LayoutBinding(b, STORAGE_BUFFER, 2, PARTIAL) for b in (0, 1, 3)]
    descriptors.create_layout(10, bindings)
    descriptors.allocate_sets(5, [10], [100], [])
    descriptors.write(100, 0, 1, 4)  # 0[1], 1[0], 1[1], then binding 2 is empty: 3[0]
    descriptors.state.flush()
    words = mapped(descriptors, 100)
    tables = {b: words[words[1 + 2 * b] : words[1 + 2 * b] + words[2 + 2 * b]] for b in range(4)}
    assert tables == {0: [0, 1], 1: [1, 1], 2: [], 3: [1, 0]}


@given(
    sizes=st.lists(st.integers(0, 4), min_size=1, max_size=5),
    binding=st.integers(0, 4),
    element=st.integers(0, 5),
    count=st.integers(1, 12),
)
def test_roll_over_agrees_with_a_brute_force_walk(
    sizes: list[int], binding: int, element: int, count: int
) -> None:
    descriptors = tracker()
    bindings = [LayoutBinding(b, STORAGE_BUFFER, size, PARTIAL) for b, size in enumerate(sizes)]
    descriptors.create_layout(10, bindings)
    descriptors.allocate_sets(5, [10], [100], [])
    descriptors.write(100, binding, element, count)
    # The model: every descriptor of the set in binding order; the update starts at
    # (binding, element) and, while it lasts, takes the next descriptors in that order.
    order = [(b, i) for b, size in enumerate(sizes) for i in range(size)]
    written: set[tuple[int, int]] = set()
    if binding < len(sizes):
        start = sum(sizes[:binding]) + element
        written = set(order[start : start + count])
    words = descriptors.sets[100].region.words
    for b, i in order:
        assert words[words[1 + 2 * b] + i] == int((b, i) in written), (b, i)


def test_copies_carry_written_flags_and_templates_write_their_entries() -> None:
    descriptors = tracker()
    descriptors.create_layout(10, [LayoutBinding(0, STORAGE_BUFFER, 4, PARTIAL)])
    descriptors.allocate_sets(5, [10, 10], [100, 101], [])
    descriptors.write(100, 0, 1, 1)
    descriptors.copy(100, 0, 0, 101, 0, 0, 3)  # flags 0, 1, 0
    descriptors.create_template(7, 0, [TemplateEntry(0, 3, 1)])
    descriptors.write_with_template(101, 7)
    descriptors.state.flush()
    assert mapped(descriptors, 101)[3:] == [0, 1, 0, 1]


def test_freed_regions_are_reused_and_a_full_buffer_gives_no_state() -> None:
    descriptors = tracker(capacity=12)
    descriptors.create_layout(10, [LayoutBinding(0, STORAGE_BUFFER, 3)])  # 6 words a set
    descriptors.allocate_sets(5, [10, 10, 10], [100, 101, 102], [])
    assert [descriptors.region_of(h) for h in (100, 101, 102)] == [0, 6, NO_STATE]
    descriptors.reset_pool(5)
    assert descriptors.sets == {}
    descriptors.allocate_sets(5, [10], [103], [])
    assert descriptors.region_of(103) in (0, 6)
    assert descriptors.region_of(999) == NO_STATE


def test_every_binding_tracks_writes_but_inline_blocks_and_immutable_samplers() -> None:
    descriptors = tracker()
    bindings = [
        LayoutBinding(0, COMBINED_IMAGE_SAMPLER, 3),
        LayoutBinding(1, SAMPLER_TYPE, 2, immutable_samplers=(0x5A, 0x5B)),
        LayoutBinding(2, INLINE_UNIFORM_BLOCK, 16),
    ]
    descriptors.create_layout(10, bindings)
    descriptors.allocate_sets(5, [10], [100], [])
    assert descriptors.tracks_writes
    descriptors.state.flush()
    assert mapped(descriptors, 100)[7:] == [0, 0, 0, 1, 1, 1]  # valid unwritten: 1
    descriptors.write(100, 0, 1, 2)
    assert descriptors.state.flush() == 2
    assert mapped(descriptors, 100)[7:10] == [0, 1, 1]


def test_immutable_samplers_are_named_not_the_writes_and_not_followed() -> None:
    descriptors = tracker()
    layout = [LayoutBinding(0, COMBINED_IMAGE_SAMPLER, 2, immutable_samplers=(0x5A, 0x5B))]
    descriptors.create_layout(10, layout)
    descriptors.allocate_sets(5, [10], [100], [])
    named = [((SAMPLER, 0x99), (IMAGE_VIEW, 0x71)), ((SAMPLER, 0), (IMAGE_VIEW, 0x72))]
    descriptors.write(100, 0, 0, 2, None, named)
    assert descriptors.named_objects([100], 0, 0, 0) == ((IMAGE_VIEW, 0x71), (SAMPLER, 0x5A))
    assert descriptors.named_objects([100], 0, 0, 1) == ((IMAGE_VIEW, 0x72), (SAMPLER, 0x5B))
    descriptors.retire(0x5A, SAMPLER)  # the layout's: the set keeps a usable descriptor
    descriptors.state.flush()
    assert mapped(descriptors, 100)[3:] == [1, 1]
    assert descriptors.retired([100], 0, 0, 0) is None


def test_destroyed_objects_retire_the_descriptors_naming_them() -> None:
    descriptors = tracker()
    descriptors.create_layout(10, [LayoutBinding(0, COMBINED_IMAGE_SAMPLER, 2)])
    descriptors.allocate_sets(5, [10, 10], [100, 101], [])
    descriptors.lifetimes.created(0x1A, IMAGE, 0x3E)  # image on memory
    descriptors.lifetimes.created(0x71, IMAGE_VIEW, 0x1A)  # its view
    named = [((SAMPLER, 0x5A), (IMAGE_VIEW, 0x71)), ((SAMPLER, 0x5B), (IMAGE_VIEW, 0x72))]
    descriptors.write(100, 0, 0, 2, None, named)
    descriptors.copy(100, 0, 0, 101, 0, 0, 2)
    descriptors.retire(0x5B, SAMPLER)
    descriptors.state.flush()
    assert mapped(descriptors, 100)[3:] == [1, 0]
    assert descriptors.retired([100], 0, 0, 1) == Retired(SAMPLER, 0x5B)
    assert descriptors.retired([100], 0, 0, 0) is None
    descriptors.retire(0x3E, MEMORY)  # memory under the image under the view
    descriptors.state.flush()
    assert mapped(descriptors, 100)[3:] == [0, 0] and mapped(descriptors, 101)[3:] == [0, 0]
    assert descriptors.retired([0, 101], 1, 0, 0) == Retired(MEMORY, 0x3E, IMAGE_VIEW, 0x71)
    descriptors.write(100, 0, 1, 1, None, [((SAMPLER, 0x5C), (IMAGE_VIEW, 0x73))])
    descriptors.state.flush()
    assert mapped(descriptors, 100)[3:] == [0, 1]  # written again: usable, nothing retired
    assert descriptors.retired([100], 0, 0, 1) is None
    descriptors.retire(0x5B, SAMPLER)  # no descriptor names it any more
    descriptors.retire(0xB0, BUFFER)  # one no descriptor ever named
    assert descriptors.state.flush() == 0


def test_pushed_descriptors_share_one_all_accessible_region_per_layout() -> None:
    descriptors = tracker()
    descriptors.create_layout(10, [LayoutBinding(0, STORAGE_BUFFER, 3, PARTIAL | VARIABLE)])
    first = descriptors.push_region(10)
    assert descriptors.push_region(10) == first
    descriptors.state.flush()
    words = descriptors.state.handles.words
    assert words[first : first + 6].tolist() == [1, 3, 3, 1, 1, 1]
    assert descriptors.push_region(11) == NO_STATE
    descriptors.destroy_layout(10)
    assert descriptors.push_regions == {}


def test_buffer_descriptors_carry_their_bound_range() -> None:
    descriptors = tracker()
    descriptors.buffers.create(0xB1, size=256, usage=0)
    descriptors.create_layout(10, [LayoutBinding(0, STORAGE_BUFFER, 3)])
    descriptors.allocate_sets(5, [10], [100], [])
    assert descriptors.tracks_writes
    unseen = BoundBuffer(0xB2, 0, WHOLE_SIZE)  # a buffer created before the layer saw it
    descriptors.write(
        100,
        0,
        0,
        3,
        [BoundBuffer(0xB1, 64, WHOLE_SIZE), BoundBuffer(0xB1, 16, 1000), unseen],
    )
    descriptors.state.flush()
    table = mapped(descriptors, 100)[3:6]
    assert [range_from_word(word) for word in table] == [192, 240, None]
    assert descriptors.bound_buffer([100], 0, 0, 1) == (
        STORAGE_BUFFER,
        BoundBuffer(0xB1, 16, 1000),
    )
    descriptors.allocate_sets(5, [10], [101], [])
    descriptors.copy(100, 0, 0, 101, 0, 1, 2)
    descriptors.state.flush()
    assert mapped(descriptors, 101)[3:6] == [0, table[0], table[1]]
    assert descriptors.bound_buffer([0, 101], 1, 0, 2) == (
        STORAGE_BUFFER,
        BoundBuffer(0xB1, 16, 1000),
    )
