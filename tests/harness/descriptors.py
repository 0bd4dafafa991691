"""Declarative descriptor sets: describe bindings, get layouts, a pool and written sets.

A test says *what* is bound (``Binding(0, "combined_image_sampler", [(view, sampler)] * 4)``)
and the harness makes the Vulkan objects. A ``None`` among the resources leaves that array
element unwritten, which is how partially-bound tests leave holes. Set indices need not be
contiguous: the pipeline layout gets an empty set layout for every gap below the highest index
(e.g. an app set at 0 and the debug output buffer at 7), as the gpuav layer itself does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntFlag
from typing import TYPE_CHECKING, Any

import vulkan as vkapi

from tests.harness.buffers import Buffer, BufferRange, BufferView
from tests.harness.images import GENERAL, ImageView, Sampler

if TYPE_CHECKING:
    from tests.harness.context import VulkanContext


class BindingFlags(IntFlag):
    """VkDescriptorBindingFlagBits, under short names."""

    NONE = 0
    UPDATE_AFTER_BIND = vkapi.VK_DESCRIPTOR_BINDING_UPDATE_AFTER_BIND_BIT
    UPDATE_UNUSED_WHILE_PENDING = vkapi.VK_DESCRIPTOR_BINDING_UPDATE_UNUSED_WHILE_PENDING_BIT
    PARTIALLY_BOUND = vkapi.VK_DESCRIPTOR_BINDING_PARTIALLY_BOUND_BIT
    VARIABLE_COUNT = vkapi.VK_DESCRIPTOR_BINDING_VARIABLE_DESCRIPTOR_COUNT_BIT


PARTIALLY_BOUND = BindingFlags.PARTIALLY_BOUND
VARIABLE_COUNT = BindingFlags.VARIABLE_COUNT
UPDATE_AFTER_BIND = BindingFlags.UPDATE_AFTER_BIND

DESCRIPTOR_TYPES: dict[str, int] = {
    "sampler": vkapi.VK_DESCRIPTOR_TYPE_SAMPLER,
    "combined_image_sampler": vkapi.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
    "sampled_image": vkapi.VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE,
    "storage_image": vkapi.VK_DESCRIPTOR_TYPE_STORAGE_IMAGE,
    "uniform_texel_buffer": vkapi.VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
    "storage_texel_buffer": vkapi.VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER,
    "uniform_buffer": vkapi.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
    "storage_buffer": vkapi.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
    "uniform_buffer_dynamic": vkapi.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC,
    "storage_buffer_dynamic": vkapi.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC,
}
_ALIASES = {
    "dynamic_uniform_buffer": "uniform_buffer_dynamic",
    "dynamic_storage_buffer": "storage_buffer_dynamic",
}
_BUFFER_TYPES = {DESCRIPTOR_TYPES[name] for name in DESCRIPTOR_TYPES if name.endswith("buffer")}
_BUFFER_TYPES |= {
    DESCRIPTOR_TYPES["uniform_buffer_dynamic"],
    DESCRIPTOR_TYPES["storage_buffer_dynamic"],
}
_TEXEL_TYPES = {DESCRIPTOR_TYPES["uniform_texel_buffer"], DESCRIPTOR_TYPES["storage_texel_buffer"]}
_BUFFER_TYPES -= _TEXEL_TYPES

# What one array element of a binding may hold; None leaves the element unwritten.
Resource = (
    Buffer | BufferRange | BufferView | ImageView | Sampler | tuple[ImageView, Sampler] | None
)


def descriptor_type(name: str | int) -> int:
    if isinstance(name, int):
        return name
    key = name.lower().removeprefix("vk_descriptor_type_")
    key = _ALIASES.get(key, key)
    if key not in DESCRIPTOR_TYPES:
        raise KeyError(f"unknown descriptor type {name!r}; known: {sorted(DESCRIPTOR_TYPES)}")
    return DESCRIPTOR_TYPES[key]


@dataclass
class Binding:
    """One binding of a set. ``count`` is the layout's descriptorCount (the upper bound for a
    variable-count binding) and defaults to ``len(resources)``; ``variable_count`` is the count
    allocated for a VARIABLE_COUNT binding and also defaults to ``len(resources)``."""

    binding: int
    type: str | int
    resources: Sequence[Resource] = ()
    count: int | None = None
    flags: BindingFlags | int = BindingFlags.NONE
    stages: int = vkapi.VK_SHADER_STAGE_ALL
    variable_count: int | None = None

    @property
    def vk_type(self) -> int:
        return descriptor_type(self.type)

    @property
    def descriptor_count(self) -> int:
        return self.count if self.count is not None else max(1, len(self.resources))

    @property
    def allocated_count(self) -> int:
        if not self.flags & BindingFlags.VARIABLE_COUNT:
            return self.descriptor_count
        return self.variable_count if self.variable_count is not None else len(self.resources)


@dataclass
class DescriptorSetSpec:
    """A set: its bindings and the dynamic offsets (in binding, then element, order)."""

    bindings: Sequence[Binding]
    dynamic_offsets: Sequence[int] = ()

    @property
    def update_after_bind(self) -> bool:
        return any(b.flags & BindingFlags.UPDATE_AFTER_BIND for b in self.bindings)


SetsArg = Mapping[int, DescriptorSetSpec | Sequence[Binding]]


def normalize_sets(sets: SetsArg | None) -> dict[int, DescriptorSetSpec]:
    """Accept a spec or a plain list of bindings per set index."""
    result: dict[int, DescriptorSetSpec] = {}
    for index, spec in (sets or {}).items():
        result[index] = spec if isinstance(spec, DescriptorSetSpec) else DescriptorSetSpec(spec)
    return result


@dataclass
class DescriptorSets:
    """The Vulkan side of a ``{set index: spec}`` mapping, owned by one pipeline run."""

    vk: VulkanContext
    specs: dict[int, DescriptorSetSpec]
    layouts: list[Any] = field(default_factory=list)  # index = set number, gaps filled
    handles: dict[int, Any] = field(default_factory=dict)
    pool: Any = None

    def __post_init__(self) -> None:
        top = max(self.specs, default=-1)
        empty = DescriptorSetSpec([])
        self.layouts = [self._create_layout(self.specs.get(i, empty)) for i in range(top + 1)]
        if self.specs:
            self._allocate()
            self._write()

    def _create_layout(self, spec: DescriptorSetSpec) -> Any:
        bindings = [
            vkapi.VkDescriptorSetLayoutBinding(
                binding=b.binding,
                descriptorType=b.vk_type,
                descriptorCount=b.descriptor_count,
                stageFlags=b.stages,
            )
            for b in spec.bindings
        ]
        flags_info = None
        if any(b.flags for b in spec.bindings):
            flags_info = vkapi.VkDescriptorSetLayoutBindingFlagsCreateInfo(
                pBindingFlags=[int(b.flags) for b in spec.bindings]
            )
        info = vkapi.VkDescriptorSetLayoutCreateInfo(
            pNext=flags_info,
            flags=(
                vkapi.lib.VK_DESCRIPTOR_SET_LAYOUT_CREATE_UPDATE_AFTER_BIND_POOL_BIT
                if spec.update_after_bind
                else 0
            ),
            pBindings=bindings or None,
        )
        return vkapi.vkCreateDescriptorSetLayout(self.vk.device, info, None)

    def _allocate(self) -> None:
        totals: dict[int, int] = {}
        for spec in self.specs.values():
            for b in spec.bindings:
                totals[b.vk_type] = totals.get(b.vk_type, 0) + b.descriptor_count
        sizes = [vkapi.VkDescriptorPoolSize(type=t, descriptorCount=n) for t, n in totals.items()]
        any_after_bind = any(spec.update_after_bind for spec in self.specs.values())
        info = vkapi.VkDescriptorPoolCreateInfo(
            flags=(
                vkapi.lib.VK_DESCRIPTOR_POOL_CREATE_UPDATE_AFTER_BIND_BIT if any_after_bind else 0
            ),
            maxSets=len(self.specs),
            pPoolSizes=sizes or None,
        )
        self.pool = vkapi.vkCreateDescriptorPool(self.vk.device, info, None)
        for index, spec in self.specs.items():
            variable = [b for b in spec.bindings if b.flags & BindingFlags.VARIABLE_COUNT]
            counts = None
            if variable:
                counts = vkapi.VkDescriptorSetVariableDescriptorCountAllocateInfo(
                    pDescriptorCounts=[variable[0].allocated_count]
                )
            allocate = vkapi.VkDescriptorSetAllocateInfo(
                pNext=counts,
                descriptorPool=self.pool,
                descriptorSetCount=1,
                pSetLayouts=[self.layouts[index]],
            )
            self.handles[index] = vkapi.vkAllocateDescriptorSets(self.vk.device, allocate)[0]

    def _write(self) -> None:
        # Each write and its info array must outlive vkUpdateDescriptorSets: the package copies
        # a list of structs into a new C array but does not keep the Python items alive.
        writes = [
            _write_one(self.handles[index], b, element, resource)
            for index, spec in self.specs.items()
            for b in spec.bindings
            for element, resource in enumerate(b.resources)
            if resource is not None
        ]
        if writes:
            vkapi.vkUpdateDescriptorSets(self.vk.device, len(writes), writes, 0, None)

    def bind(self, command_buffer: Any, bind_point: int, pipeline_layout: Any) -> None:
        for index, spec in sorted(self.specs.items()):
            offsets = list(spec.dynamic_offsets)
            vkapi.vkCmdBindDescriptorSets(
                command_buffer,
                bind_point,
                pipeline_layout,
                index,
                1,
                [self.handles[index]],
                len(offsets),
                offsets or None,
            )

    def buffers(self) -> list[Buffer]:
        """Every buffer the sets reference, directly or through a range or texel view."""
        found: list[Buffer] = []
        for spec in self.specs.values():
            for b in spec.bindings:
                for resource in b.resources:
                    buffer = _buffer_of(resource)
                    if buffer is not None and buffer not in found:
                        found.append(buffer)
        return found

    def destroy(self) -> None:
        if self.pool is not None:
            vkapi.vkDestroyDescriptorPool(self.vk.device, self.pool, None)
            self.pool = None
        for layout in self.layouts:
            vkapi.vkDestroyDescriptorSetLayout(self.vk.device, layout, None)
        self.layouts = []


def _buffer_of(resource: Resource) -> Buffer | None:
    if isinstance(resource, Buffer):
        return resource
    if isinstance(resource, BufferRange | BufferView):
        return resource.buffer
    return None


def _write_one(descriptor_set: Any, b: Binding, element: int, resource: Resource) -> Any:
    kind = b.vk_type
    common = {
        "dstSet": descriptor_set,
        "dstBinding": b.binding,
        "dstArrayElement": element,
        "descriptorCount": 1,
        "descriptorType": kind,
    }
    if kind in _BUFFER_TYPES:
        if isinstance(resource, Buffer):
            resource = BufferRange(resource)
        if not isinstance(resource, BufferRange):
            raise TypeError(
                f"binding {b.binding}: a buffer descriptor needs a Buffer or BufferRange"
            )
        info = vkapi.VkDescriptorBufferInfo(
            buffer=resource.buffer.handle, offset=resource.offset, range=resource.vk_range
        )
        return vkapi.VkWriteDescriptorSet(**common, pBufferInfo=[info])
    if kind in _TEXEL_TYPES:
        if not isinstance(resource, BufferView):
            raise TypeError(f"binding {b.binding}: a texel buffer descriptor needs a BufferView")
        return vkapi.VkWriteDescriptorSet(**common, pTexelBufferView=[resource.handle])
    return vkapi.VkWriteDescriptorSet(**common, pImageInfo=[_image_info(b, kind, resource)])


def _image_info(b: Binding, kind: int, resource: Resource) -> Any:
    view, sampler = None, None
    if kind == vkapi.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER:
        if not (isinstance(resource, tuple) and len(resource) == 2):
            raise TypeError(f"binding {b.binding}: combined image sampler needs (view, sampler)")
        view, sampler = resource
    elif kind == vkapi.VK_DESCRIPTOR_TYPE_SAMPLER:
        if not isinstance(resource, Sampler):
            raise TypeError(f"binding {b.binding}: a sampler descriptor needs a Sampler")
        sampler = resource
    else:
        if not isinstance(resource, ImageView):
            raise TypeError(f"binding {b.binding}: an image descriptor needs an ImageView")
        view = resource
    return vkapi.VkDescriptorImageInfo(
        sampler=None if sampler is None else sampler.handle,
        imageView=None if view is None else view.handle,
        imageLayout=GENERAL,
    )
