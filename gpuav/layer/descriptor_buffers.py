"""Descriptors that live in descriptor buffers (VK_EXT_descriptor_buffer), for the shaders'
descriptor checks (issue 16).

A descriptor-buffer set has no VkDescriptorSet and no update to follow: its descriptors are
bytes the app wrote with vkGetDescriptorEXT into a buffer of its own, bound with
vkCmdBindDescriptorBuffersEXT and placed per set index with vkCmdSetDescriptorBufferOffsetsEXT.
The bytes are the driver's; the layer learns what they mean by remembering, for every
vkGetDescriptorEXT, the bytes it returned and the descriptor word they stand for (a buffer's
range, an image's facts, or accessible) and what they name (``descriptor_buffer_objects``).
Each (set layout, set address) bound for an action gets a region of the state buffer
(``gpuav.instrument.descriptor_state``) with the layout's array sizes; at submit its
descriptor words are rebuilt from the bytes the app's mapped memory holds then
(``descriptor_buffer_memory``): bytes no vkGetDescriptorEXT returned (zeros: never written),
or naming a destroyed object, read 0, so the shader reports the descriptor as unusable
(VUID-vkCmd*-None-08116), and buffer descriptors read their range. Where the bytes cannot be
read (the memory is not mapped by the app), every descriptor reads accessible and only array
indices are checked (said once).

The pipelines reach gpuav's own buffers through the pushed context address (issue 8):
a pipeline layout of descriptor-buffer set layouts may not take gpuav's classic set
(VUID-VkPipelineLayoutCreateInfo-pSetLayouts-08008), nor may gpuav bind one for such a
pipeline (VUID-vkCmdDispatch-None-08115).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuav.instrument.descriptor_state import (
    ACCESSIBLE,
    NO_STATE,
    binding_size_word,
    binding_table_word,
    range_word,
)
from gpuav.layer import notices
from gpuav.layer.buffer_views import BoundTexels, texel_bytes
from gpuav.layer.buffers import BoundBuffer
from gpuav.layer.descriptor_buffer_memory import DescriptorBufferMemory
from gpuav.layer.descriptor_buffer_objects import DescribedObjects
from gpuav.layer.descriptor_sets import Bound, DescriptorTracker
from gpuav.layer.resource_lifetimes import Retired
from gpuav.layer.set_layouts import SetLayoutState
from gpuav.layer.state import CommandBufferState, DeviceState
from gpuav.layer.state_buffer import Region

# VkDescriptorSetLayoutCreateFlagBits
SET_LAYOUT_PUSH_DESCRIPTOR = 0x1
SET_LAYOUT_DESCRIPTOR_BUFFER = 0x10
WHOLE_SIZE = 0xFFFF_FFFF_FFFF_FFFF

DESCRIPTOR_TYPE_SAMPLER = 0
DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER = 1
DESCRIPTOR_TYPE_SAMPLED_IMAGE = 2
DESCRIPTOR_TYPE_STORAGE_IMAGE = 3
DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER = 4
DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER = 5
DESCRIPTOR_TYPE_UNIFORM_BUFFER = 6
DESCRIPTOR_TYPE_STORAGE_BUFFER = 7
# Types whose descriptors are one vkGetDescriptorEXT result each, side by side in an array
# (combined image samplers too where the device keeps them in one array; input attachments'
# and acceleration structures' words stay accessible).
READ_TYPES = frozenset(
    {
        DESCRIPTOR_TYPE_SAMPLER,
        DESCRIPTOR_TYPE_SAMPLED_IMAGE,
        DESCRIPTOR_TYPE_STORAGE_IMAGE,
        DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
        DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER,
        DESCRIPTOR_TYPE_UNIFORM_BUFFER,
        DESCRIPTOR_TYPE_STORAGE_BUFFER,
    }
)
TEXEL_TYPES = frozenset(
    {DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER}
)
# Types whose words are a range (of bytes, or texels); the others' carry image facts.
RANGE_TYPES = TEXEL_TYPES | {DESCRIPTOR_TYPE_UNIFORM_BUFFER, DESCRIPTOR_TYPE_STORAGE_BUFFER}
# Past this many distinct descriptors, new ones are not remembered and bytes the layer does
# not know read accessible (a forgotten descriptor must never look unwritten).
MAX_DESCRIBED = 1 << 16
# Past this many (layout, address) places, further sets are not tracked (NO_STATE).
MAX_PLACES = 4096


@dataclass(frozen=True)
class SetLayoutBytes:
    """Where a descriptor-buffer set layout's bindings lie in the set's bytes."""

    size: int  # vkGetDescriptorSetLayoutSizeEXT
    offsets: dict[int, int]  # binding -> vkGetDescriptorSetLayoutBindingOffsetEXT


@dataclass(frozen=True)
class DescribedBuffer:
    """What a buffer descriptor got with vkGetDescriptorEXT points at, for the messages."""

    address: int
    range: int
    texel: int = 0  # bytes per texel of a texel buffer's format


@dataclass(slots=True, eq=False)
class SetPlace:
    """A descriptor-buffer set as bound: its layout, its address, its region, and the bytes
    its words were last built from."""

    layout: SetLayoutState
    layout_bytes: SetLayoutBytes
    address: int
    region: Region
    contents: bytes | None = None
    generation: int = -1  # the tracker's, when the words were built
    # (binding, element) -> why a descriptor names something gone, as at the last refresh
    retired: dict[tuple[int, int], Retired] = field(default_factory=dict)


@dataclass
class DescriptorBufferBindings:
    """Per command buffer: the descriptor buffers bound (addresses by index) and the sets
    its actions use, whose words are rebuilt when it is submitted."""

    addresses: tuple[int, ...] = ()
    places: set[SetPlace] = field(default_factory=set)


@dataclass
class DescriptorBufferTracker:
    """Everything a device tracks about the app's descriptor buffers."""

    descriptors: DescriptorTracker
    feature_enabled: bool = False  # the app enabled descriptorBuffer
    combined_single_array: bool = False  # combinedImageSamplerDescriptorSingleArray
    layouts: dict[int, SetLayoutBytes] = field(default_factory=dict)
    # descriptor bytes -> the word they stand for; descriptor type -> its size in bytes
    described: dict[bytes, int] = field(default_factory=dict)
    described_buffers: dict[bytes, DescribedBuffer] = field(default_factory=dict)
    descriptor_sizes: dict[int, int] = field(default_factory=dict)
    saturated: bool = False
    generation: int = 0  # grows whenever what some bytes stand for may have changed
    memory: DescriptorBufferMemory = field(init=False)
    objects: DescribedObjects = field(init=False)  # what descriptors name, and what is gone
    places: dict[tuple[int, int], SetPlace] = field(default_factory=dict)
    places_by_region: dict[int, SetPlace] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.memory = DescriptorBufferMemory(self.descriptors.buffers)
        self.objects = DescribedObjects(self.descriptors.buffers, self.descriptors.lifetimes)

    # -- set layouts ------------------------------------------------------------------------

    def create_layout(self, handle: int, layout_bytes: SetLayoutBytes) -> None:
        self.layouts[handle] = layout_bytes

    def destroy_layout(self, handle: int) -> None:
        """Its places go with it (command buffers recorded with it may not be submitted)."""
        self.layouts.pop(handle, None)
        for key in [key for key in self.places if key[0] == handle]:
            place = self.places.pop(key)
            self.places_by_region.pop(place.region.offset, None)
            self.descriptors.state.release(place.region)

    def keeps_layout_unpatched(self, set_layouts: Sequence[int]) -> bool:
        """Whether a pipeline layout of these set layouts may serve descriptor-buffer
        pipelines: one of its set layouts is a descriptor-buffer one, or it has none at all
        (with descriptorBuffer on, a pipeline of VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT
        may use it, and gpuav's classic set may not be bound for that pipeline)."""
        if not set_layouts:
            return self.feature_enabled
        return any(handle in self.layouts for handle in set_layouts)

    # -- descriptors ------------------------------------------------------------------------

    def got_descriptor(
        self,
        descriptor_type: int,
        contents: bytes,
        word: int,
        buffer: DescribedBuffer | None = None,
        views: tuple[int, ...] = (),
    ) -> None:
        """vkGetDescriptorEXT returned ``contents`` for a descriptor the shaders see as
        ``word``. Bytes that stand for two words keep the one that reports less: the larger
        range (a driver may not encode a buffer's range), or no facts of an image."""
        if buffer is not None and (
            contents in self.described_buffers or len(self.described_buffers) < MAX_DESCRIBED
        ):
            self.described_buffers[contents] = buffer
        if self.objects.note(contents, 0 if buffer is None else buffer.address, views):
            self.generation += 1
        known = self.described.get(contents)
        if known == word and self.descriptor_sizes.get(descriptor_type) == len(contents):
            return
        self.generation += 1
        self.descriptor_sizes[descriptor_type] = len(contents)
        if known is not None:
            ranged = descriptor_type in RANGE_TYPES and ACCESSIBLE not in (known, word)
            self.described[contents] = max(known, word) if ranged else ACCESSIBLE
        elif len(self.described) < MAX_DESCRIBED:
            self.described[contents] = word
        else:
            self.saturated = True

    # -- what descriptors name --------------------------------------------------------------

    def object_gone(self, handle: int, kind: str) -> None:
        """``handle`` is about to be destroyed or freed: descriptors naming it, or what goes
        with it, are unusable from the next submit (VUID-vkCmd*-None-08116)."""
        if self.objects.gone(handle, kind):
            self.generation += 1

    def object_made(self, handle: int) -> None:
        """A buffer bound to memory, or an image view made, where a gone one was."""
        if self.objects.made(handle):
            self.generation += 1

    # -- binding ----------------------------------------------------------------------------

    def place(self, layout_handle: int, address: int) -> SetPlace | None:
        """The set of ``layout_handle`` at ``address`` (one region per pair, kept while the
        layout lives); None when the layout is not a descriptor-buffer one the layer knows."""
        key = (layout_handle, address)
        found = self.places.get(key)
        if found is not None:
            return found
        layout = self.descriptors.layouts.get(layout_handle)
        layout_bytes = self.layouts.get(layout_handle)
        if layout is None or layout_bytes is None or len(self.places) >= MAX_PLACES:
            return None
        # A variable-count binding has no allocated count here: its layout count bounds it.
        words = layout.region_words(max(layout.sizes.values(), default=0))
        for binding in layout.tracked:
            table = words[binding_table_word(binding)]
            size = words[binding_size_word(binding)]
            words[table : table + size] = array("I", [ACCESSIBLE]) * size
        region = self.descriptors.state.allocate(words)
        if region.offset == NO_STATE:
            return None
        found = self.places[key] = SetPlace(layout, layout_bytes, address, region)
        self.places_by_region[region.offset] = found
        return found

    def bound_buffer(
        self, regions: Sequence[int], set_index: int, binding: int, element: int
    ) -> tuple[int, Bound | None] | None:
        """(descriptor type, the buffer it points at) of a buffer descriptor of an action's
        descriptor-buffer set (``regions``: the action's bound-set words), as its bytes were at
        the submit; None when that is not such a set or binding."""
        place = self.places_by_region.get(regions[set_index]) if set_index < len(regions) else None
        if place is None or binding not in place.layout.types:
            return None
        descriptor_type = place.layout.types[binding]
        size = self.descriptor_sizes.get(descriptor_type)
        offset = place.layout_bytes.offsets.get(binding)
        if size is None or offset is None or place.contents is None:
            return descriptor_type, None
        start = offset + element * size
        described = self.described_buffers.get(place.contents[start : start + size])
        buffer = None if described is None else self._buffer_at(described.address)
        if described is None or buffer is None:
            return descriptor_type, None
        handle, buffer_offset = buffer
        bound = BoundBuffer(handle, buffer_offset, described.range)
        if described.texel:
            return descriptor_type, BoundTexels(0, bound, described.texel)
        return descriptor_type, bound

    def _buffer_at(self, address: int) -> tuple[int, int] | None:
        """(buffer, offset in it) of the live buffer holding device ``address``."""
        for handle, facts in self.descriptors.buffers.live.items():
            if facts.address and facts.address <= address < facts.address + facts.size:
                return handle, address - facts.address
        return None

    def refresh(self, place: SetPlace) -> bool:
        """Rebuild the set's descriptor words from the bytes its memory holds now; False when
        they cannot be read (the words then stay as they are)."""
        contents = self.memory.read(place.address, place.layout_bytes.size)
        if contents is None:
            return False
        if contents == place.contents and place.generation == self.generation:
            return True
        place.contents = contents
        place.generation = self.generation
        layout = place.layout
        words = place.region.words
        fresh = array("I", words)
        place.retired.clear()
        for binding in layout.tracked:
            table = words[binding_table_word(binding)]
            count = words[binding_size_word(binding)]
            offset = place.layout_bytes.offsets.get(binding)
            fresh[table : table + count] = self._binding_words(
                contents, layout.types[binding], offset, count
            )
            if self.objects.any_gone and offset is not None:
                fresh[table : table + count] = self._retire_words(
                    place, contents, binding, offset, fresh[table : table + count]
                )
        if fresh != words:
            words[:] = fresh
            self.descriptors.state.mark(place.region, 0, len(words))
        return True

    def _retire_words(
        self, place: SetPlace, contents: bytes, binding: int, offset: int, words: array[int]
    ) -> array[int]:
        """``words`` with 0 where a descriptor names a gone object, noted in the place."""
        size = self.descriptor_sizes.get(place.layout.types[binding], 0)
        for element in range(len(words) if size else 0):
            start = offset + element * size
            reason = self.objects.reason(contents[start : start + size])
            if reason is not None:
                words[element] = 0
                place.retired[(binding, element)] = reason
        return words

    def retired(
        self, regions: Sequence[int], set_index: int, binding: int, element: int
    ) -> Retired | None:
        """Why a descriptor of an action's descriptor-buffer set named something gone, as
        at the submit (None: it did not, or not such a set)."""
        place = self.places_by_region.get(regions[set_index]) if set_index < len(regions) else None
        return None if place is None else place.retired.get((binding, element))

    def _binding_words(
        self, contents: bytes, descriptor_type: int, offset: int | None, count: int
    ) -> array[int]:
        size = self.descriptor_sizes.get(descriptor_type)
        read = descriptor_type in READ_TYPES or (
            descriptor_type == DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER and self.combined_single_array
        )
        if not read or size is None or offset is None:
            # Never gotten: no descriptor of this type can have been written, but without
            # its size the layer cannot say which bytes are whose.
            return array("I", [ACCESSIBLE]) * count
        unknown = ACCESSIBLE if self.saturated else 0
        described = self.described
        return array(
            "I",
            [
                described.get(contents[start : start + size], unknown)
                if start + size <= len(contents)
                else ACCESSIBLE
                for start in range(offset, offset + count * size, size)
            ],
        )


def described_buffer(
    descriptor_type: int, address: int, buffer_range: int, texel_format: int
) -> DescribedBuffer:
    texel = texel_bytes(texel_format) if descriptor_type in TEXEL_TYPES else 0
    return DescribedBuffer(address, buffer_range, texel or 0)


def descriptor_word(descriptor_type: int, buffer_range: int | None, texel_format: int) -> int:
    """The word a descriptor got with vkGetDescriptorEXT stands for: a buffer's range (in
    texels for a texel buffer), accessible when none is known (a null descriptor too)."""
    if buffer_range is None or buffer_range == WHOLE_SIZE:
        return ACCESSIBLE
    if descriptor_type in TEXEL_TYPES:
        texel = texel_bytes(texel_format)
        return ACCESSIBLE if texel is None else range_word(buffer_range // texel)
    return range_word(buffer_range)


def tracker_of(device: DeviceState) -> DescriptorBufferTracker | None:
    """The device's tracker, made on first use; None while descriptor state is not tracked."""
    if not device.enabled or device.descriptors is None:
        return None
    if device.descriptor_buffers is None:
        device.descriptor_buffers = DescriptorBufferTracker(device.descriptors)
    return device.descriptor_buffers


def post_call_record_cmd_bind_descriptor_buffers(
    state: CommandBufferState, addresses: Sequence[int]
) -> None:
    bindings = state.descriptor_buffers
    if bindings is None:
        bindings = state.descriptor_buffers = DescriptorBufferBindings()
    bindings.addresses = tuple(addresses)


def post_call_record_cmd_set_descriptor_buffer_offsets(
    state: CommandBufferState,
    bind_point: int,
    layout: int,
    first_set: int,
    buffer_indices: Sequence[int],
    offsets: Sequence[int],
) -> None:
    """The sets ``first_set``... now lie at these offsets of the bound descriptor buffers:
    their regions become the action's bound-set words (NO_STATE where none can be had)."""
    from gpuav.layer import command_buffers

    device = state.device
    tracker = tracker_of(device)
    command_buffers.post_call_record_cmd_bind_descriptor_sets(
        state, bind_point, first_set, [0] * len(offsets)
    )
    words = state.bound_words.get(bind_point)
    if tracker is None or words is None:
        return
    bindings = state.descriptor_buffers
    pipeline_layout = device.pipeline_layouts.get(layout)
    set_layouts = () if pipeline_layout is None else pipeline_layout.set_layouts
    for set_index, (buffer_index, offset) in enumerate(
        zip(buffer_indices, offsets, strict=True), first_set
    ):
        if set_index >= len(words):
            break
        place = None
        if (
            bindings is not None
            and buffer_index < len(bindings.addresses)
            and set_index < len(set_layouts)
        ):
            address = bindings.addresses[buffer_index] + offset
            place = tracker.place(set_layouts[set_index], address)
        words[set_index] = NO_STATE if place is None else place.region.offset
        if place is not None and bindings is not None:
            bindings.places.add(place)


def pre_call_record_queue_submit(
    device: DeviceState, command_buffers: Sequence[CommandBufferState]
) -> None:
    """Rebuild the words of every descriptor-buffer set these command buffers use from the
    bytes the app's memory holds now (the state at submit time counts)."""
    tracker = device.descriptor_buffers
    if tracker is None:
        return
    places: set[SetPlace] = set()
    for state in command_buffers:
        for member in (state, *state.executed):
            if member.descriptor_buffers is not None:
                places |= member.descriptor_buffers.places
    for place in places:
        if not tracker.refresh(place):
            device.reporter.emit_once(
                "descriptor-buffer-unread", notices.descriptor_buffer_unread(place.address)
            )
