"""Descriptor set layouts as the layer tracks them: each binding's type, size and flags,
which bindings' words follow writes (and which carry buffer ranges or image facts), and the
words of a new set's region (``gpuav.instrument.descriptor_state``)."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

from gpuav.instrument.descriptor_state import binding_size_word, binding_table_word

# VkDescriptorBindingFlagBits
BINDING_PARTIALLY_BOUND = 0x4
BINDING_VARIABLE_DESCRIPTOR_COUNT = 0x8
DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK = 1000138000
DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER = 4
DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER = 5
DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC = 9
TEXEL_DESCRIPTOR_TYPES = frozenset({4, 5})
# Texel buffers, uniform and storage buffers (dynamic too): their words carry a range.
BUFFER_DESCRIPTOR_TYPES = frozenset(
    range(DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC + 1)
)
DESCRIPTOR_TYPE_SAMPLER = 0
# The types whose bindings can hold immutable samplers (plain and combined).
SAMPLER_DESCRIPTOR_TYPES = frozenset({0, 1})
# Samplers, combined image samplers, sampled and storage images, input attachments: their
# words carry the fact bits of what they name (gpuav.instrument.image_facts).
IMAGE_DESCRIPTOR_TYPES = frozenset({0, 1, 2, 3, 10})


@dataclass(frozen=True)
class LayoutBinding:
    binding: int
    descriptor_type: int
    count: int
    flags: int = 0
    immutable_samplers: tuple[int, ...] = ()  # handles, one per descriptor


@dataclass(slots=True, eq=False)
class SetLayoutState:
    handle: int
    sizes: dict[int, int]
    partially_bound: frozenset[int]
    variable_binding: int | None
    types: dict[int, int] = field(default_factory=dict)  # binding -> VkDescriptorType
    buffer_bindings: frozenset[int] = frozenset()
    image_bindings: frozenset[int] = frozenset()
    tracked: frozenset[int] = frozenset()  # bindings whose descriptor words follow writes
    ready: frozenset[int] = frozenset()  # bindings whose descriptors are valid unwritten
    # bindings with immutable samplers -> the samplers, one per descriptor
    immutable: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def from_bindings(cls, handle: int, bindings: Iterable[LayoutBinding]) -> SetLayoutState:
        sizes: dict[int, int] = {}
        partial: set[int] = set()
        types: dict[int, int] = {}
        ready: set[int] = set()
        immutable: dict[int, tuple[int, ...]] = {}
        variable = None
        for item in bindings:
            types[item.binding] = item.descriptor_type
            # An inline uniform block's count is its size in bytes; it is one descriptor.
            is_inline = item.descriptor_type == DESCRIPTOR_TYPE_INLINE_UNIFORM_BLOCK
            sizes[item.binding] = min(item.count, 1) if is_inline else item.count
            if item.flags & BINDING_PARTIALLY_BOUND and not is_inline:
                partial.add(item.binding)
            if item.immutable_samplers:
                immutable[item.binding] = item.immutable_samplers
            if is_inline or (
                item.immutable_samplers and item.descriptor_type == DESCRIPTOR_TYPE_SAMPLER
            ):
                ready.add(item.binding)
            if item.flags & BINDING_VARIABLE_DESCRIPTOR_COUNT:
                variable = item.binding
        buffers = frozenset(b for b, kind in types.items() if kind in BUFFER_DESCRIPTOR_TYPES)
        images = frozenset(b for b, kind in types.items() if kind in IMAGE_DESCRIPTOR_TYPES)
        tracked = frozenset(sizes) - ready
        return cls(
            handle,
            sizes,
            frozenset(partial),
            variable,
            types,
            buffers,
            images,
            tracked,
            frozenset(ready),
            immutable,
        )

    def region_words(self, variable_count: int) -> array[int]:
        """The region of a new set: sizes, tables of 0 (unwritten), except those ``ready``."""
        slots = max(self.sizes, default=-1) + 1
        words = array("I", bytes(4 * (1 + 2 * slots)))
        words[0] = slots
        for binding in range(slots):
            size = self.sizes.get(binding, 0)
            if binding == self.variable_binding:
                size = min(size, variable_count)
            words[binding_table_word(binding)] = len(words)
            words[binding_size_word(binding)] = size
            fill = 1 if binding in self.ready else 0
            words.extend(array("I", [fill]) * size)
        return words
