"""Descriptor set entry points (issue 8): translate the app's structures for
``gpuav.layer.descriptor_sets`` and call down. Updates are read only while some live set has
a binding whose state the shader checks (every binding but inline uniform blocks and
immutable samplers): which descriptors are written, the objects they name, buffer ranges."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer import command_buffers, notices
from gpuav.layer.buffers import BoundBuffer
from gpuav.layer.calls import (
    PIPELINE_BIND_POINT_COMPUTE,
    PIPELINE_BIND_POINT_GRAPHICS,
    PIPELINE_BIND_POINT_RAY_TRACING,
    SHADER_STAGE_COMPUTE,
    SHADER_STAGE_MESH,
    SHADER_STAGE_TASK,
    SHADER_STAGES_GRAPHICS,
    SHADER_STAGES_RAY_TRACING,
)
from gpuav.layer.descriptor_sets import Bound, DescriptorTracker, Named, PushedWrite, TemplateEntry
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord, Native
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, find, handles_at
from gpuav.layer.resource_lifetimes import BUFFER, BUFFER_VIEW, IMAGE_VIEW, SAMPLER
from gpuav.layer.set_layouts import (
    BUFFER_DESCRIPTOR_TYPES,
    SAMPLER_DESCRIPTOR_TYPES,
    TEXEL_DESCRIPTOR_TYPES,
    LayoutBinding,
)
from gpuav.layer.state import CommandBufferState

ERROR_INITIALIZATION_FAILED = -3


def _tracker(record: DeviceRecord | None) -> DescriptorTracker | None:
    if record is None or record.state is None or not record.state.enabled:
        return None
    return record.state.descriptors


def _report(record: DeviceRecord, command: str, error: BaseException) -> None:
    report_error(command, error, record.instance.state)


# -- set layouts ------------------------------------------------------------------------------


def _layout_bindings(create_info: int) -> list[LayoutBinding]:
    info = at(create_info, "VkDescriptorSetLayoutCreateInfo")
    flags_info = find(
        address(info.pNext), vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO
    )
    flags: list[int] = []
    if flags_info:
        chained = at(flags_info, "VkDescriptorSetLayoutBindingFlagsCreateInfo")
        flags = [int(chained.pBindingFlags[i]) for i in range(chained.bindingCount)]
    bindings = []
    for index in range(info.bindingCount):
        item = info.pBindings[index]
        descriptor_type = int(item.descriptorType)
        count = int(item.descriptorCount)
        # pImmutableSamplers is read for sampler types only: for others the spec ignores it
        samplers = (
            tuple(handles_at(address(item.pImmutableSamplers), count))
            if descriptor_type in SAMPLER_DESCRIPTOR_TYPES
            else ()
        )
        bindings.append(
            LayoutBinding(
                int(item.binding),
                descriptor_type,
                count,
                flags[index] if index < len(flags) else 0,
                samplers,
            )
        )
    return bindings


def create_descriptor_set_layout(
    device: int, create_info: int, allocator: int, layout_out: int
) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(
        record.next.vkCreateDescriptorSetLayout(device, create_info, allocator, layout_out)
    )
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        try:
            tracker.create_layout(handles_at(layout_out, 1)[0], _layout_bindings(create_info))
        except BaseException as error:
            _report(record, "vkCreateDescriptorSetLayout", error)
    return result


def destroy_descriptor_set_layout(device: int, layout: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    tracker = _tracker(record)
    if tracker is not None and layout:
        tracker.destroy_layout(layout)
    record.next.vkDestroyDescriptorSetLayout(device, layout, allocator)


# -- pools and sets ---------------------------------------------------------------------------


def allocate_descriptor_sets(device: int, allocate_info: int, sets_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkAllocateDescriptorSets(device, allocate_info, sets_out))
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        try:
            info = at(allocate_info, "VkDescriptorSetAllocateInfo")
            count = int(info.descriptorSetCount)
            counts: list[int] = []
            chained = find(
                address(info.pNext),
                vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_VARIABLE_DESCRIPTOR_COUNT_ALLOCATE_INFO,
            )
            if chained:
                variable = at(chained, "VkDescriptorSetVariableDescriptorCountAllocateInfo")
                counts = [
                    int(variable.pDescriptorCounts[i]) for i in range(variable.descriptorSetCount)
                ]
            untracked = tracker.allocate_sets(
                address(info.descriptorPool),
                handles_at(address(info.pSetLayouts), count),
                handles_at(sets_out, count),
                counts,
            )
            if untracked and record.state is not None:
                notice = notices.descriptor_state_full(tracker.state.capacity)
                record.state.reporter.emit_once("descriptor-state-full", notice)
        except BaseException as error:
            _report(record, "vkAllocateDescriptorSets", error)
    return result


def free_descriptor_sets(device: int, pool: int, count: int, sets: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    tracker = _tracker(record)
    if tracker is not None:
        try:
            tracker.free_sets(handles_at(sets, count))
        except BaseException as error:
            _report(record, "vkFreeDescriptorSets", error)
    return int(record.next.vkFreeDescriptorSets(device, pool, count, sets))


def reset_descriptor_pool(device: int, pool: int, flags: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    tracker = _tracker(record)
    if tracker is not None:
        try:
            tracker.reset_pool(pool)
        except BaseException as error:
            _report(record, "vkResetDescriptorPool", error)
    return int(record.next.vkResetDescriptorPool(device, pool, flags))


def destroy_descriptor_pool(device: int, pool: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    tracker = _tracker(record)
    if tracker is not None and pool:
        try:
            tracker.destroy_pool(pool)
        except BaseException as error:
            _report(record, "vkDestroyDescriptorPool", error)
    record.next.vkDestroyDescriptorPool(device, pool, allocator)


# -- updates ----------------------------------------------------------------------------------


def _record_writes(tracker: DescriptorTracker, count: int, writes: int) -> None:
    items = vkffi.cast("VkWriteDescriptorSet *", writes)
    for index in range(count):
        write = items[index]
        tracker.write(
            address(write.dstSet),
            int(write.dstBinding),
            int(write.dstArrayElement),
            int(write.descriptorCount),
            _written(tracker, write),
            _named(write),
        )


# VkDescriptorType: those naming a sampler and an image view, an image view alone.
_SAMPLER_TYPES = frozenset({0, 1})
_IMAGE_VIEW_TYPES = frozenset({1, 2, 3, 10})


def _image_named(kind: int, info: Any) -> Named:
    named: Named = ()
    if kind in _SAMPLER_TYPES:
        named += ((SAMPLER, address(info.sampler)),)
    if kind in _IMAGE_VIEW_TYPES:
        named += ((IMAGE_VIEW, address(info.imageView)),)
    return named


def _named(write: Any) -> list[Named] | None:
    """The objects each descriptor of a write names (for destroyed-resource checks)."""
    kind = int(write.descriptorType)
    count = int(write.descriptorCount)
    if kind in TEXEL_DESCRIPTOR_TYPES and write.pTexelBufferView:
        views = handles_at(address(write.pTexelBufferView), count)
        return [((BUFFER_VIEW, view),) for view in views]
    if kind in BUFFER_DESCRIPTOR_TYPES and write.pBufferInfo:
        return [((BUFFER, address(write.pBufferInfo[k].buffer)),) for k in range(count)]
    if (kind in _SAMPLER_TYPES or kind in _IMAGE_VIEW_TYPES) and write.pImageInfo:
        return [_image_named(kind, write.pImageInfo[k]) for k in range(count)]
    return None


def _template_named(data: int) -> Callable[[TemplateEntry], list[Named]]:
    """Reads the objects a template entry's descriptors name from the app's data."""

    def read(entry: TemplateEntry) -> list[Named]:
        kind = entry.descriptor_type
        places = [data + entry.offset + k * entry.stride for k in range(entry.count)]
        if kind in TEXEL_DESCRIPTOR_TYPES:
            return [((BUFFER_VIEW, handles_at(place, 1)[0]),) for place in places]
        if kind in BUFFER_DESCRIPTOR_TYPES:
            infos = [at(place, "VkDescriptorBufferInfo") for place in places]
            return [((BUFFER, address(info.buffer)),) for info in infos]
        if kind in _SAMPLER_TYPES or kind in _IMAGE_VIEW_TYPES:
            infos = [at(place, "VkDescriptorImageInfo") for place in places]
            return [_image_named(kind, info) for info in infos]
        return [() for _ in places]

    return read


def _written(tracker: DescriptorTracker, write: Any) -> list[Bound | None] | None:
    """What each buffer or texel buffer descriptor of a write names; None for other types."""
    kind = int(write.descriptorType)
    count = int(write.descriptorCount)
    if kind in TEXEL_DESCRIPTOR_TYPES and write.pTexelBufferView:
        views = handles_at(address(write.pTexelBufferView), count)
        return [tracker.views.bound(view) for view in views]
    if kind in BUFFER_DESCRIPTOR_TYPES and write.pBufferInfo:
        infos = write.pBufferInfo
        return [_bound(infos[k]) for k in range(count)]
    return None


def _pushed_writes(tracker: DescriptorTracker, count: int, writes: int) -> list[PushedWrite]:
    items = vkffi.cast("VkWriteDescriptorSet *", writes)
    pushed: list[PushedWrite] = []
    for index in range(count):
        write = items[index]
        bounds = _written(tracker, write)
        if bounds is not None:
            pushed.append((int(write.dstBinding), int(write.dstArrayElement), bounds))
    return pushed


def _pushed_with_template(
    tracker: DescriptorTracker, template: int, data: int
) -> list[PushedWrite]:
    read = _template_buffers(tracker, data)
    return [
        (entry.binding, entry.element, read(entry))
        for entry in tracker.templates.get(template, ())
        if entry.descriptor_type in BUFFER_DESCRIPTOR_TYPES
    ]


def _bound(info: Any) -> BoundBuffer:
    return BoundBuffer(address(info.buffer), int(info.offset), int(info.range))


def _template_buffers(
    tracker: DescriptorTracker, data: int
) -> Callable[[TemplateEntry], list[Bound | None]]:
    """Reads a template entry's buffer infos (or buffer views) from the app's data."""

    def read(entry: TemplateEntry) -> list[Bound | None]:
        places = [data + entry.offset + k * entry.stride for k in range(entry.count)]
        if entry.descriptor_type in TEXEL_DESCRIPTOR_TYPES:
            return [tracker.views.bound(handles_at(place, 1)[0]) for place in places]
        return [_bound(at(place, "VkDescriptorBufferInfo")) for place in places]

    return read


def update_descriptor_sets(
    device: int, write_count: int, writes: int, copy_count: int, copies: int
) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    record.next.vkUpdateDescriptorSets(device, write_count, writes, copy_count, copies)
    tracker = _tracker(record)
    if tracker is None or not tracker.tracks_writes:
        return
    try:
        _record_writes(tracker, write_count, writes)
        items = vkffi.cast("VkCopyDescriptorSet *", copies)
        for index in range(copy_count):
            copy = items[index]
            tracker.copy(
                address(copy.srcSet),
                int(copy.srcBinding),
                int(copy.srcArrayElement),
                address(copy.dstSet),
                int(copy.dstBinding),
                int(copy.dstArrayElement),
                int(copy.descriptorCount),
            )
    except BaseException as error:
        _report(record, "vkUpdateDescriptorSets", error)


def create_descriptor_update_template(
    device: int, create_info: int, allocator: int, template_out: int
) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(
        record.next.vkCreateDescriptorUpdateTemplate(device, create_info, allocator, template_out)
    )
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        try:
            info = at(create_info, "VkDescriptorUpdateTemplateCreateInfo")
            entries = [
                TemplateEntry(
                    int(item.dstBinding),
                    int(item.dstArrayElement),
                    int(item.descriptorCount),
                    int(item.descriptorType),
                    int(item.offset),
                    int(item.stride),
                )
                for item in (
                    info.pDescriptorUpdateEntries[i] for i in range(info.descriptorUpdateEntryCount)
                )
            ]
            tracker.create_template(
                handles_at(template_out, 1)[0],
                int(info.templateType),
                entries,
                int(info.pipelineBindPoint),
            )
        except BaseException as error:
            _report(record, "vkCreateDescriptorUpdateTemplate", error)
    return result


def destroy_descriptor_update_template(device: int, template: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    tracker = _tracker(record)
    if tracker is not None and template:
        tracker.destroy_template(template)
    record.next.vkDestroyDescriptorUpdateTemplate(device, template, allocator)


def update_descriptor_set_with_template(
    device: int, descriptor_set: int, template: int, data: int
) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    record.next.vkUpdateDescriptorSetWithTemplate(device, descriptor_set, template, data)
    tracker = _tracker(record)
    if tracker is not None and tracker.tracks_writes:
        try:
            tracker.write_with_template(
                descriptor_set, template, _template_buffers(tracker, data), _template_named(data)
            )
        except BaseException as error:
            _report(record, "vkUpdateDescriptorSetWithTemplate", error)


# -- recording --------------------------------------------------------------------------------


def _command_buffer(
    command_buffer: int,
) -> tuple[DeviceRecord | None, CommandBufferState | None]:
    record = REGISTRY.devices.get(Native.lib.gpuav_dispatch_key(command_buffer))
    if record is None or record.state is None:
        return record, None
    return record, record.state.command_buffers.get(command_buffer)


def cmd_bind_descriptor_sets(
    command_buffer: int, bind_point: int, layout: int, first_set: int, count: int, sets: int,
    dynamic_count: int, dynamic_offsets: int,
) -> None:  # fmt: skip
    """After layer.c called down (prototypes.RECORDED_AROUND_GOING_DOWN)."""
    record, state = _command_buffer(command_buffer)
    if record is None:
        return
    if state is not None:
        try:
            command_buffers.post_call_record_cmd_bind_descriptor_sets(
                state,
                bind_point,
                first_set,
                handles_at(sets, count),
            )
        except BaseException as error:
            _report(record, "vkCmdBindDescriptorSets", error)


def cmd_push_descriptor_set(
    command_buffer: int, bind_point: int, layout: int, set_index: int, count: int, writes: int
) -> None:
    """After layer.c called down (prototypes.RECORDED_AROUND_GOING_DOWN)."""
    record, state = _command_buffer(command_buffer)
    if record is None:
        return
    if state is not None and state.device.descriptors is not None:
        try:
            pushed = _pushed_writes(state.device.descriptors, count, writes)
            command_buffers.post_call_record_cmd_push_descriptor_set(
                state, bind_point, layout, set_index, pushed
            )
        except BaseException as error:
            _report(record, "vkCmdPushDescriptorSetKHR", error)


def cmd_push_descriptor_set_with_template(
    command_buffer: int, template: int, layout: int, set_index: int, data: int
) -> None:
    """After layer.c called down (prototypes.RECORDED_AROUND_GOING_DOWN)."""
    record, state = _command_buffer(command_buffer)
    if record is None:
        return
    if state is not None and state.device.descriptors is not None:
        try:
            tracker = state.device.descriptors
            bind_point = tracker.push_templates.get(template, 0)
            pushed = _pushed_with_template(tracker, template, data)
            command_buffers.post_call_record_cmd_push_descriptor_set(
                state, bind_point, layout, set_index, pushed
            )
        except BaseException as error:
            _report(record, "vkCmdPushDescriptorSetWithTemplateKHR", error)


def cmd_bind_descriptor_sets2(command_buffer: int, bind_info: int) -> None:
    """VK_KHR_maintenance6: the stages name the bind points the sets are bound for. After
    layer.c called down (prototypes.RECORDED_AROUND_GOING_DOWN)."""
    record, state = _command_buffer(command_buffer)
    if record is None:
        return
    if state is not None:
        try:
            info = at(bind_info, "VkBindDescriptorSetsInfoKHR")
            handles = handles_at(address(info.pDescriptorSets), int(info.descriptorSetCount))
            for bind_point in bind_points(int(info.stageFlags)):
                command_buffers.post_call_record_cmd_bind_descriptor_sets(
                    state, bind_point, int(info.firstSet), handles
                )
        except BaseException as error:
            _report(record, "vkCmdBindDescriptorSets2KHR", error)


def bind_points(stages: int) -> list[int]:
    """The bind points whose sets the stages of a maintenance6 command name."""
    points = []
    if stages & (SHADER_STAGES_GRAPHICS | SHADER_STAGE_TASK | SHADER_STAGE_MESH):
        points.append(PIPELINE_BIND_POINT_GRAPHICS)
    if stages & SHADER_STAGE_COMPUTE:
        points.append(PIPELINE_BIND_POINT_COMPUTE)
    if stages & SHADER_STAGES_RAY_TRACING:
        points.append(PIPELINE_BIND_POINT_RAY_TRACING)
    return points
