"""Descriptor set state for the instrumented shaders (issue 8; layout in seed 002's spirit).

The layer half of ``gpuav.instrument.descriptor_state``: set layouts (``set_layouts``), sets
(pool, variable count, region), and which descriptors were written, from
vkUpdateDescriptorSets writes and copies and from update templates. Every binding tracks
which descriptors were written (VUID-...-None-08114: a descriptor a shader uses must be
valid), except those valid from the start (inline uniform blocks, immutable samplers);
uniform and storage buffer bindings track the range each descriptor binds (``range_word`` of
its bytes; of its texels for texel buffers), for the shaders' range checks, and the buffer it
names, for the messages; image and sampler bindings the fact bits of the view and sampler
each descriptor names (``image_views``), for the shaders' checks that they fit the access.
Each descriptor also remembers the objects it names (image view, sampler, buffer, buffer
view): when one is destroyed, or what it hangs on (its image, buffer
or memory), the descriptor's word goes back to 0 and the set keeps why (``Retired``).
Changes land in the set's host words and reach the device at the next submit
(``StateBuffer.flush``), which is what UPDATE_AFTER_BIND needs: the state at submit time
counts.

Per command buffer and bind point, ``bound_words`` holds the region offset of the set bound at
each index; every action copies it beside its output block (``command_buffers``).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from gpuav.instrument.descriptor_state import (
    ACCESSIBLE,
    MAX_TRACKED_SETS,
    NO_STATE,
    UNKNOWN_SET_TABLES,
    binding_size_word,
    binding_table_word,
    bound_area,
    range_word,
)
from gpuav.layer.buffer_views import BoundTexels, BufferViewTable, texel_count
from gpuav.layer.buffers import BoundBuffer, BufferTable
from gpuav.layer.image_views import ImageTable
from gpuav.layer.resource_lifetimes import SAMPLER, ResourceLifetimes, Retired
from gpuav.layer.set_layouts import BUFFER_DESCRIPTOR_TYPES, LayoutBinding, SetLayoutState
from gpuav.layer.state_buffer import Region, StateBuffer
from gpuav.layer.static_descriptors import StaticDescriptorChecks

DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET = 0

Bound = BoundBuffer | BoundTexels
# (binding, first element, what each pushed descriptor was written with)
PushedWrite = tuple[int, int, Sequence[Bound | None]]
# The objects one descriptor names: (kind, handle) pairs (resource_lifetimes' kinds).
Named = tuple[tuple[str, int], ...]
# (set, binding, element) of a descriptor
DescriptorKey = tuple[int, int, int]
MAX_PUSHED_REGIONS = 1024

NO_STATE_WORDS = array("I", [NO_STATE] * MAX_TRACKED_SETS)
# The bound-sets area of an action that no tracked set is bound for.
NO_STATE_AREA = array("I", bound_area(NO_STATE_WORDS, lambda region: UNKNOWN_SET_TABLES))


@dataclass(slots=True, eq=False)
class DescriptorSetState:
    handle: int
    pool: int
    layout: SetLayoutState
    region: Region
    # (binding, element) -> the buffer (or view) a descriptor was last written with
    buffers: dict[tuple[int, int], Bound] = field(default_factory=dict)
    # (binding, element) -> the objects a descriptor names, and why one may not be used
    named: dict[tuple[int, int], Named] = field(default_factory=dict)
    retired: dict[tuple[int, int], Retired] = field(default_factory=dict)

    def elements(self, binding: int, element: int, count: int) -> Iterator[tuple[int, int, int]]:
        """(binding, first element, count) runs of a ``count``-descriptor update, rolling over
        into the following bindings (Vulkan "consecutive binding updates")."""
        words = self.region.words
        slots = words[0]
        while count > 0 and binding < slots:
            size = words[binding_size_word(binding)]
            if element < size:
                run = min(count, size - element)
                yield binding, element, run
                count -= run
                element = 0
            else:
                element -= size
            binding += 1

    def table(self, binding: int) -> int:
        return self.region.words[binding_table_word(binding)]


@dataclass(frozen=True)
class TemplateEntry:
    binding: int
    element: int
    count: int
    descriptor_type: int = 0
    offset: int = 0  # of the first VkDescriptorBufferInfo (etc.) in the template's data
    stride: int = 0


@dataclass
class DescriptorTracker:
    """Everything a device tracks about the app's descriptor sets."""

    state: StateBuffer
    buffers: BufferTable = field(default_factory=BufferTable)
    views: BufferViewTable = field(default_factory=BufferViewTable)
    images: ImageTable = field(default_factory=ImageTable)
    layouts: dict[int, SetLayoutState] = field(default_factory=dict)
    sets: dict[int, DescriptorSetState] = field(default_factory=dict)
    pools: dict[int, set[int]] = field(default_factory=dict)
    templates: dict[int, tuple[TemplateEntry, ...]] = field(default_factory=dict)
    # by set layout and the pushed ranges ((word, value) pairs)
    push_regions: dict[tuple[int, tuple[tuple[int, int], ...]], Region] = field(
        default_factory=dict
    )
    push_templates: dict[int, int] = field(default_factory=dict)  # template -> bind point
    tracked_sets: int = 0  # live sets whose layout has a binding that tracks writes
    lifetimes: ResourceLifetimes = field(default_factory=ResourceLifetimes)
    # object handle -> the descriptors that name it (checked against the set when used)
    users: dict[int, set[DescriptorKey]] = field(default_factory=dict)
    # Counts changes to the sets' words (and frees): what was found in them stays true while
    # it stays the same (static_descriptors).
    generation: int = 0
    static_uses: StaticDescriptorChecks = field(default_factory=StaticDescriptorChecks)

    # -- layouts, pools, sets ---------------------------------------------------------------

    def create_layout(self, handle: int, bindings: Iterable[LayoutBinding]) -> None:
        self.layouts[handle] = SetLayoutState.from_bindings(handle, bindings)

    def destroy_layout(self, handle: int) -> None:
        self.layouts.pop(handle, None)  # live sets keep their own reference
        for key in [key for key in self.push_regions if key[0] == handle]:
            self.state.release(self.push_regions.pop(key))

    def push_region(self, layout_handle: int, writes: Sequence[PushedWrite] = ()) -> int:
        """The region for descriptors pushed with a set layout (vkCmdPushDescriptorSetKHR):
        its sizes, every descriptor accessible (unwritten pushed descriptors are not tracked),
        and the ranges of the buffer descriptors ``writes`` pushed. Regions are made once per
        layout and distinct ranges, and kept while the layout lives (recorded command buffers
        may use them); past MAX_PUSHED_REGIONS, pushes share the layout's region without
        ranges (their buffer accesses are not checked)."""
        layout = self.layouts.get(layout_handle)
        if layout is None:
            return NO_STATE
        plain = SetLayoutState(
            layout.handle, layout.sizes, frozenset(), None, ready=frozenset(layout.sizes)
        )
        words = plain.region_words(0)
        ranges = self._pushed_ranges(layout, words, writes)
        key = (layout_handle, ranges)
        region = self.push_regions.get(key)
        if region is None and ranges and len(self.push_regions) >= MAX_PUSHED_REGIONS:
            key = (layout_handle, ())
            region = self.push_regions.get(key)
            words = plain.region_words(0)
        if region is None:
            region = self.push_regions[key] = self.state.allocate(words)
        return region.offset

    def _pushed_ranges(
        self, layout: SetLayoutState, words: array[int], writes: Sequence[PushedWrite]
    ) -> tuple[tuple[int, int], ...]:
        """Write the pushed buffer descriptors' range words into ``words``; (word, value)
        of each, the region's identity beside its layout."""
        if not writes or not layout.buffer_bindings:
            return ()
        holder = DescriptorSetState(0, 0, layout, Region(0, words))
        changed: dict[int, int] = {}
        for binding, element, bounds in writes:
            position = 0
            for run_binding, first, run in holder.elements(binding, element, len(bounds)):
                for offset in range(run):
                    bound = bounds[position + offset]
                    known = self._reachable(bound)
                    if run_binding in layout.buffer_bindings and known is not None:
                        at = holder.table(run_binding) + first + offset
                        words[at] = changed[at] = range_word(known)
                position += run
        return tuple(sorted(changed.items()))

    def allocate_sets(
        self, pool: int, layouts: Sequence[int], handles: Sequence[int], counts: Sequence[int]
    ) -> int:
        """``counts``: the variable descriptor count of each set (0 when not given). Returns
        how many of the sets got no region (the state buffer is full)."""
        untracked = 0
        members = self.pools.setdefault(pool, set())
        for index, (layout_handle, handle) in enumerate(zip(layouts, handles, strict=True)):
            layout = self.layouts.get(layout_handle)
            if layout is None or not handle:
                continue
            count = counts[index] if index < len(counts) else 0
            region = self.state.allocate(layout.region_words(count))
            untracked += region.offset == NO_STATE
            self.sets[handle] = DescriptorSetState(handle, pool, layout, region)
            members.add(handle)
            if layout.tracked:
                self.tracked_sets += 1
        return untracked

    def free_sets(self, handles: Iterable[int]) -> None:
        self.generation += 1
        for handle in handles:
            tracked = self.sets.pop(handle, None)
            if tracked is not None:
                self.state.release(tracked.region)
                self.pools.get(tracked.pool, set()).discard(handle)
                if tracked.layout.tracked:
                    self.tracked_sets -= 1

    def reset_pool(self, pool: int) -> None:
        self.free_sets(list(self.pools.get(pool, ())))

    def destroy_pool(self, pool: int) -> None:
        self.reset_pool(pool)
        self.pools.pop(pool, None)

    def region_of(self, handle: int) -> int:
        tracked = self.sets.get(handle)
        return NO_STATE if tracked is None else tracked.region.offset

    # -- writes -----------------------------------------------------------------------------

    def _changed(self, region: Region, low: int, high: int) -> None:
        """Words ``[low, high)`` of a set's region changed: to the device at the next flush."""
        self.generation += 1
        self.state.mark(region, low, high)

    @property
    def tracks_writes(self) -> bool:
        """Whether any update can change a region (hooks skip reading updates otherwise)."""
        return self.tracked_sets > 0

    def _mark_written(
        self,
        target: DescriptorSetState,
        binding: int,
        element: int,
        count: int,
        buffers: Sequence[Bound | None] | None,
        named: Sequence[Named] | None = None,
    ) -> None:
        layout = target.layout
        tracked = layout.tracked
        buffer_bindings = layout.buffer_bindings
        words = target.region.words
        position = 0
        for run_binding, first, run in target.elements(binding, element, count):
            given = buffers[position : position + run] if buffers is not None else None
            objects = named[position : position + run] if named is not None else None
            position += run
            if run_binding not in tracked:
                continue
            for offset in range(run):
                key = (run_binding, first + offset)
                target.retired.pop(key, None)
                self._name(target, key, objects[offset] if objects is not None else ())
            start = target.table(run_binding) + first
            if run_binding in buffer_bindings and given is not None:
                for offset, bound in enumerate(given):
                    key = (run_binding, first + offset)
                    if bound is None:
                        target.buffers.pop(key, None)
                    else:
                        target.buffers[key] = bound
                    known = self._reachable(bound)
                    words[start + offset] = ACCESSIBLE if known is None else range_word(known)
            elif run_binding in layout.image_bindings:
                for offset in range(run):
                    named_here = target.named.get((run_binding, first + offset), ())
                    words[start + offset] = self.images.word(named_here)
            else:
                words[start : start + run] = array("I", [ACCESSIBLE]) * run
            self._changed(target.region, start, start + run)

    def _name(self, target: DescriptorSetState, key: tuple[int, int], objects: Named) -> None:
        """Remember the objects a descriptor names. The sampler of an immutable-sampler
        binding is the layout's, not the write's: it is named (its facts go into the word, and
        messages name it) but not followed, the layout holding it as long as the set lives."""
        immutable = target.layout.immutable.get(key[0])
        if immutable is not None:
            objects = tuple(item for item in objects if item[0] != SAMPLER)
        objects = tuple(item for item in objects if item[1])
        for _, handle in objects:
            self.users.setdefault(handle, set()).add((target.handle, *key))
        if immutable is not None and key[1] < len(immutable) and immutable[key[1]]:
            objects += ((SAMPLER, immutable[key[1]]),)
        if objects:
            target.named[key] = objects
        else:
            target.named.pop(key, None)

    def retire(self, handle: int, kind: str) -> None:
        """``handle`` was destroyed or freed: every descriptor naming it, or an object that
        hangs on it, may not be used any more (word 0), and its set keeps why."""
        for gone, reason in self.lifetimes.gone(handle, kind):
            for set_handle, binding, element in self.users.pop(gone, ()):
                target = self.sets.get(set_handle)
                key = (binding, element)
                if target is None or all(h != gone for _, h in target.named.get(key, ())):
                    continue  # freed, or written with something else since
                at = target.table(binding) + element
                target.region.words[at] = 0
                target.retired[key] = reason
                self._changed(target.region, at, at + 1)

    def retired(
        self, handles: Sequence[int], set_index: int, binding: int, element: int
    ) -> Retired | None:
        """Why a descriptor of the sets bound for an action may not be used, if its
        resource was destroyed (None: unwritten, or not known)."""
        if not 0 <= set_index < len(handles):
            return None
        tracked = self.sets.get(handles[set_index])
        return None if tracked is None else tracked.retired.get((binding, element))

    def named_objects(
        self, handles: Sequence[int], set_index: int, binding: int, element: int
    ) -> Named:
        """The objects a descriptor of the sets bound for an action names (as written)."""
        if not 0 <= set_index < len(handles):
            return ()
        tracked = self.sets.get(handles[set_index])
        return () if tracked is None else tracked.named.get((binding, element), ())

    def _reachable(self, bound: Bound | None) -> int | None:
        """Bytes (texels for a view) the descriptor reaches, None when unknown."""
        if isinstance(bound, BoundTexels):
            return texel_count(self.buffers, bound)
        return None if bound is None else self.buffers.effective_range(bound)

    def write(
        self,
        set_handle: int,
        binding: int,
        element: int,
        count: int,
        buffers: Sequence[Bound | None] | None = None,
        named: Sequence[Named] | None = None,
    ) -> None:
        """A VkWriteDescriptorSet (or a template entry) wrote these descriptors; ``buffers``:
        what a buffer descriptor write gave, one per descriptor; ``named``: the objects each
        descriptor names."""
        target = self.sets.get(set_handle)
        if target is not None and target.layout.tracked:
            self._mark_written(target, binding, element, count, buffers, named)

    def copy(
        self,
        source_handle: int,
        source_binding: int,
        source_element: int,
        target_handle: int,
        target_binding: int,
        target_element: int,
        count: int,
    ) -> None:
        """A VkCopyDescriptorSet: the targets are written where the sources were."""
        target = self.sets.get(target_handle)
        if target is None or not target.layout.tracked:
            return
        source = self.sets.get(source_handle)
        if source is None or not source.layout.tracked:
            self._mark_written(target, target_binding, target_element, count, None)
            return
        copied = [
            (
                source.region.words[source.table(binding) + first + offset],
                source.buffers.get((binding, first + offset)),
                source.named.get((binding, first + offset), ()),
                source.retired.get((binding, first + offset)),
            )
            for binding, first, run in source.elements(source_binding, source_element, count)
            for offset in range(run)
        ]
        position = 0
        words = target.region.words
        for binding, first, run in target.elements(target_binding, target_element, len(copied)):
            values = copied[position : position + run]
            position += run
            if binding not in target.layout.tracked:
                continue
            start = target.table(binding) + first
            words[start : start + run] = array("I", [value[0] for value in values])
            for offset, (_, bound, objects, reason) in enumerate(values):
                key = (binding, first + offset)
                if bound is None:
                    target.buffers.pop(key, None)
                else:
                    target.buffers[key] = bound
                self._name(target, key, objects)
                if reason is None:
                    target.retired.pop(key, None)
                else:
                    target.retired[key] = reason
            self._changed(target.region, start, start + run)

    def create_template(
        self,
        handle: int,
        template_type: int,
        entries: Iterable[TemplateEntry],
        bind_point: int = 0,
    ) -> None:
        self.templates[handle] = tuple(entries)
        if template_type != DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET:
            self.push_templates[handle] = bind_point

    def destroy_template(self, handle: int) -> None:
        self.templates.pop(handle, None)
        self.push_templates.pop(handle, None)

    def write_with_template(
        self,
        set_handle: int,
        template: int,
        read_buffers: Callable[[TemplateEntry], Sequence[Bound | None]] | None = None,
        read_named: Callable[[TemplateEntry], Sequence[Named]] | None = None,
    ) -> None:
        """``read_buffers`` reads a buffer entry's descriptor infos from the app's data,
        ``read_named`` the objects each descriptor of an entry names."""
        for entry in self.templates.get(template, ()):
            buffers = None
            if read_buffers is not None and entry.descriptor_type in BUFFER_DESCRIPTOR_TYPES:
                buffers = read_buffers(entry)
            named = None if read_named is None else read_named(entry)
            self.write(set_handle, entry.binding, entry.element, entry.count, buffers, named)

    def bound_buffer(
        self, handles: Sequence[int], set_index: int, binding: int, element: int
    ) -> tuple[int, Bound | None] | None:
        """(descriptor type, buffer written there) of a descriptor of the sets bound for an
        action, None when the layer does not track that set or binding."""
        if not 0 <= set_index < len(handles):
            return None
        tracked = self.sets.get(handles[set_index])
        if tracked is None or binding not in tracked.layout.types:
            return None
        return tracked.layout.types[binding], tracked.buffers.get((binding, element))

    def binding_sizes(self, handles: Sequence[int]) -> dict[tuple[int, int], int]:
        """(set index, binding) -> actual array size of the sets bound for an action."""
        sizes: dict[tuple[int, int], int] = {}
        for index, handle in enumerate(handles):
            tracked = self.sets.get(handle)
            if tracked is None:
                continue
            words = tracked.region.words
            for binding in range(words[0]):
                sizes[(index, binding)] = words[binding_size_word(binding)]
        return sizes
