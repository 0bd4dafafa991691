"""VK_EXT_descriptor_buffer entry points (issue 16): translate the app's structures for
``gpuav.layer.descriptor_buffers`` and call down. Set layouts are wrapped around the hooks
that already follow them (``hooks_descriptors``); the layer learns where a descriptor-buffer
set's bytes are and what ``vkGetDescriptorEXT`` bytes stand for. Memory and object lifetimes:
``hooks_descriptor_buffer_memory``."""

from __future__ import annotations

from typing import Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer import command_buffers, descriptor_buffers
from gpuav.layer.descriptor_buffers import (
    DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
    DESCRIPTOR_TYPE_SAMPLED_IMAGE,
    DESCRIPTOR_TYPE_SAMPLER,
    DESCRIPTOR_TYPE_STORAGE_BUFFER,
    DESCRIPTOR_TYPE_STORAGE_IMAGE,
    DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER,
    DESCRIPTOR_TYPE_UNIFORM_BUFFER,
    DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
    SET_LAYOUT_DESCRIPTOR_BUFFER,
    SET_LAYOUT_PUSH_DESCRIPTOR,
    DescriptorBufferTracker,
    SetLayoutBytes,
)
from gpuav.layer.descriptor_sets import Named
from gpuav.layer.native import (
    enabled_features,
    hooks_action_checks,
    hooks_descriptors,
)
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord, Native
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, bytes_at, handles_at
from gpuav.layer.resource_lifetimes import IMAGE_VIEW, SAMPLER
from gpuav.layer.state import CommandBufferState

ERROR_INITIALIZATION_FAILED = -3
# The VkDescriptorDataEXT member each image type is given through (a VkDescriptorImageInfo).
_IMAGE_MEMBERS = {
    DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER: "pCombinedImageSampler",
    DESCRIPTOR_TYPE_SAMPLED_IMAGE: "pSampledImage",
    DESCRIPTOR_TYPE_STORAGE_IMAGE: "pStorageImage",
}
# The VkDescriptorDataEXT member each buffer type is given through.
_ADDRESS_MEMBERS = {
    DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER: "pUniformTexelBuffer",
    DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER: "pStorageTexelBuffer",
    DESCRIPTOR_TYPE_UNIFORM_BUFFER: "pUniformBuffer",
    DESCRIPTOR_TYPE_STORAGE_BUFFER: "pStorageBuffer",
}


def _tracker(record: DeviceRecord | None) -> DescriptorBufferTracker | None:
    if record is None or record.state is None:
        return None
    return descriptor_buffers.tracker_of(record.state)


def _command_buffer(
    command_buffer: int,
) -> tuple[DeviceRecord | None, CommandBufferState | None]:
    record = REGISTRY.devices.get(Native.lib.gpuav_dispatch_key(command_buffer))
    if record is None or record.state is None:
        return record, None
    return record, record.state.command_buffers.get(command_buffer)


def _report(record: DeviceRecord, command: str, error: BaseException) -> None:
    report_error(command, error, record.instance.state)


# -- device -----------------------------------------------------------------------------------


def create_device(physical_device: int, create_info: int, allocator: int, device_out: int) -> int:
    """Whether the app enabled descriptorBuffer decides which pipeline layouts keep gpuav's
    set out (``DescriptorBufferTracker.keeps_layout_unpatched``)."""
    result = hooks_action_checks.create_device(physical_device, create_info, allocator, device_out)
    if result != 0:
        return result
    record = REGISTRY.device_of(handles_at(device_out, 1)[0])
    tracker = _tracker(record)
    if record is not None and tracker is not None:
        try:
            features = enabled_features.enabled_feature_names(create_info)
            tracker.feature_enabled = "descriptorBuffer" in features
            if tracker.feature_enabled:
                tracker.combined_single_array = _combined_single_array(record, physical_device)
        except BaseException as error:
            _report(record, "vkCreateDevice (descriptor buffers)", error)
    return result


def _combined_single_array(record: DeviceRecord, physical_device: int) -> bool:
    """combinedImageSamplerDescriptorSingleArray: whether an array of combined image samplers
    is one array of vkGetDescriptorEXT results (else images first, then samplers)."""
    chained = vkffi.new("VkPhysicalDeviceDescriptorBufferPropertiesEXT *")
    chained.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DESCRIPTOR_BUFFER_PROPERTIES_EXT
    properties = vkffi.new("VkPhysicalDeviceProperties2 *")
    properties.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
    properties.pNext = chained
    record.instance.next.vkGetPhysicalDeviceProperties2(physical_device, address(properties))
    return bool(chained.combinedImageSamplerDescriptorSingleArray)


# -- set layouts ------------------------------------------------------------------------------


def create_descriptor_set_layout(
    device: int, create_info: int, allocator: int, layout_out: int
) -> int:
    result = hooks_descriptors.create_descriptor_set_layout(
        device, create_info, allocator, layout_out
    )
    record = REGISTRY.device_of(device)
    tracker = _tracker(record)
    if result != 0 or record is None or tracker is None:
        return result
    try:
        info = at(create_info, "VkDescriptorSetLayoutCreateInfo")
        flags = int(info.flags)
        if flags & SET_LAYOUT_DESCRIPTOR_BUFFER:
            handle = int(vkffi.cast("uintptr_t *", layout_out)[0])
            bindings = [int(info.pBindings[i].binding) for i in range(info.bindingCount)]
            # Pushed descriptors (descriptorBufferPushDescriptors) lie in no buffer of the app's.
            pushed = flags & SET_LAYOUT_PUSH_DESCRIPTOR
            layout_bytes = (
                SetLayoutBytes(0, {}) if pushed else _layout_bytes(record, device, handle, bindings)
            )
            tracker.create_layout(handle, layout_bytes)
    except BaseException as error:
        _report(record, "vkCreateDescriptorSetLayout", error)
    return result


def _layout_bytes(
    record: DeviceRecord, device: int, layout: int, bindings: list[int]
) -> SetLayoutBytes:
    value = vkffi.new("uint64_t *")
    record.next.vkGetDescriptorSetLayoutSizeEXT(device, layout, address(value))
    size = int(value[0])
    offsets = {}
    for binding in bindings:
        record.next.vkGetDescriptorSetLayoutBindingOffsetEXT(
            device, layout, binding, address(value)
        )
        offsets[binding] = int(value[0])
    return SetLayoutBytes(size, offsets)


def destroy_descriptor_set_layout(device: int, layout: int, allocator: int) -> None:
    tracker = _tracker(REGISTRY.device_of(device))
    if tracker is not None and layout:
        tracker.destroy_layout(layout)
    hooks_descriptors.destroy_descriptor_set_layout(device, layout, allocator)


# -- descriptors ------------------------------------------------------------------------------


def get_descriptor(device: int, info: int, data_size: int, descriptor: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    record.next.vkGetDescriptorEXT(device, info, data_size, descriptor)
    tracker = _tracker(record)
    if tracker is None or not descriptor or not data_size:
        return
    try:
        get_info = at(info, "VkDescriptorGetInfoEXT")
        descriptor_type = int(get_info.type)
        buffer_range, texel_format, buffer = None, 0, None
        member = _ADDRESS_MEMBERS.get(descriptor_type)
        if member is not None:
            described = getattr(get_info.data, member)
            if described != vkffi.NULL and int(described.address):
                buffer_range, texel_format = int(described.range), int(described.format)
                buffer = descriptor_buffers.described_buffer(
                    descriptor_type, int(described.address), buffer_range, texel_format
                )
        word = descriptor_buffers.descriptor_word(descriptor_type, buffer_range, texel_format)
        named = _image_named(descriptor_type, get_info.data)
        if named:
            word = tracker.descriptors.images.word(named)
        contents = bytes_at(descriptor, data_size)
        views = tuple(handle for kind, handle in named if kind == IMAGE_VIEW)
        tracker.got_descriptor(descriptor_type, contents, word, buffer, views)
    except BaseException as error:
        _report(record, "vkGetDescriptorEXT", error)


def _image_named(descriptor_type: int, data: Any) -> Named:
    """The sampler and image view an image or sampler descriptor names, for its fact bits
    (``gpuav.instrument.image_facts``); () for the other types."""
    if descriptor_type == DESCRIPTOR_TYPE_SAMPLER:
        sampler = data.pSampler
        return () if sampler == vkffi.NULL else ((SAMPLER, address(sampler[0])),)
    member = _IMAGE_MEMBERS.get(descriptor_type)
    if member is None:
        return ()
    info = getattr(data, member)
    if info == vkffi.NULL:
        return ()
    named: Named = ((IMAGE_VIEW, address(info.imageView)),)
    if descriptor_type == DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER:
        named += ((SAMPLER, address(info.sampler)),)
    return named


# -- binding ----------------------------------------------------------------------------------


def cmd_bind_descriptor_buffers(command_buffer: int, count: int, infos: int) -> None:
    record, state = _command_buffer(command_buffer)
    if record is None:
        return
    record.next.vkCmdBindDescriptorBuffersEXT(command_buffer, count, infos)
    if state is not None and state.device.enabled:
        try:
            bound = vkffi.cast("VkDescriptorBufferBindingInfoEXT *", infos)
            addresses = [int(bound[i].address) for i in range(count)]
            descriptor_buffers.post_call_record_cmd_bind_descriptor_buffers(state, addresses)
        except BaseException as error:
            _report(record, "vkCmdBindDescriptorBuffersEXT", error)


def cmd_set_descriptor_buffer_offsets(
    command_buffer: int, bind_point: int, layout: int, first_set: int, count: int,
    buffer_indices: int, offsets: int,
) -> None:  # fmt: skip
    record, state = _command_buffer(command_buffer)
    if record is None:
        return
    record.next.vkCmdSetDescriptorBufferOffsetsEXT(
        command_buffer, bind_point, layout, first_set, count, buffer_indices, offsets
    )
    if state is not None and state.device.enabled and count:
        try:
            indices = list(vkffi.unpack(vkffi.cast("uint32_t *", buffer_indices), count))
            places = list(vkffi.unpack(vkffi.cast("uint64_t *", offsets), count))
            descriptor_buffers.post_call_record_cmd_set_descriptor_buffer_offsets(
                state, bind_point, layout, first_set, indices, places
            )
        except BaseException as error:
            _report(record, "vkCmdSetDescriptorBufferOffsetsEXT", error)


def cmd_set_descriptor_buffer_offsets2(command_buffer: int, info: int) -> None:
    """VK_KHR_maintenance6: the stages name the bind points the offsets are set for."""
    record, state = _command_buffer(command_buffer)
    if record is None:
        return
    record.next.vkCmdSetDescriptorBufferOffsets2EXT(command_buffer, info)
    if state is not None and state.device.enabled:
        try:
            given = at(info, "VkSetDescriptorBufferOffsetsInfoEXT")
            count = int(given.setCount)
            indices = list(vkffi.unpack(given.pBufferIndices, count)) if count else []
            places = list(vkffi.unpack(given.pOffsets, count)) if count else []
            for bind_point in hooks_descriptors.bind_points(int(given.stageFlags)):
                descriptor_buffers.post_call_record_cmd_set_descriptor_buffer_offsets(
                    state, bind_point, address(given.layout), int(given.firstSet), indices, places
                )
        except BaseException as error:
            _report(record, "vkCmdSetDescriptorBufferOffsets2EXT", error)


def cmd_bind_descriptor_buffer_embedded_samplers(
    command_buffer: int, bind_point: int, layout: int, set_index: int
) -> None:
    """A set of embedded immutable samplers only: nothing to check there (NO_STATE)."""
    record, state = _command_buffer(command_buffer)
    if record is None:
        return
    record.next.vkCmdBindDescriptorBufferEmbeddedSamplersEXT(
        command_buffer, bind_point, layout, set_index
    )
    if state is not None and state.device.enabled:
        try:
            command_buffers.post_call_record_cmd_bind_descriptor_sets(
                state, bind_point, set_index, [0]
            )
        except BaseException as error:
            _report(record, "vkCmdBindDescriptorBufferEmbeddedSamplersEXT", error)
