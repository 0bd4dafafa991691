"""Image views, samplers, images and memory: what descriptors name, and what those hang on.
When one is destroyed (or memory freed), the descriptors naming it, or an object depending on
it, may not be used any more (``DescriptorTracker.retire``); the destroy call goes down after
the tracker has noted it. Images, views and samplers are also described (``image_views``),
for the checks that a descriptor fits its access."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vulkan._vulkan import ffi as vkffi

from gpuav.layer.descriptor_sets import DescriptorTracker
from gpuav.layer.image_views import ImageInfo, ViewInfo
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, handles_at
from gpuav.layer.resource_lifetimes import IMAGE, IMAGE_VIEW, MEMORY, SAMPLER

ERROR_INITIALIZATION_FAILED = -3


def _tracker(record: DeviceRecord) -> DescriptorTracker | None:
    state = record.state
    if state is None or not state.enabled:
        return None
    return state.descriptors


def _retire(record: DeviceRecord, command: str, handle: int, kind: str) -> None:
    tracker = _tracker(record)
    if tracker is None or not handle:
        return
    try:
        tracker.retire(handle, kind)
        tracker.images.forget(kind, handle)
    except BaseException as error:
        report_error(command, error, record.instance.state)


def _destroy(device: int, handle: int, allocator: int, command: str, kind: str) -> None:
    """The tracker notes ``handle`` going, then the destroy (or free) goes down."""
    record = REGISTRY.device_of(device)
    if record is None:
        return
    _retire(record, command, handle, kind)
    getattr(record.next, command)(device, handle, allocator)


def _create(
    device: int,
    create_info: int,
    allocator: int,
    created_out: int,
    command: str,
    note: Callable[[DescriptorTracker, Any, int], None],
) -> int:
    """The create goes down; where it succeeded, ``note`` tells the tracker (create info,
    handle)."""
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(getattr(record.next, command)(device, create_info, allocator, created_out))
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        try:
            note(tracker, create_info, handles_at(created_out, 1)[0])
        except BaseException as error:
            report_error(command, error, record.instance.state)
    return result


def _note_image(tracker: DescriptorTracker, create_info: int, handle: int) -> None:
    info = at(create_info, "VkImageCreateInfo")
    tracker.images.create_image(
        handle, ImageInfo(info.format, info.samples, info.mipLevels, info.arrayLayers)
    )


def _note_view(tracker: DescriptorTracker, create_info: int, handle: int) -> None:
    info = at(create_info, "VkImageViewCreateInfo")
    image = address(info.image)
    tracker.lifetimes.created(handle, IMAGE_VIEW, image)
    span = info.subresourceRange
    tracker.images.create_view(
        handle,
        ViewInfo(
            image, info.viewType, info.format, span.aspectMask, span.levelCount, span.layerCount
        ),
    )


def _note_sampler(tracker: DescriptorTracker, create_info: int, handle: int) -> None:
    unnormalized = bool(at(create_info, "VkSamplerCreateInfo").unnormalizedCoordinates)
    tracker.images.create_sampler(handle, unnormalized)


def create_image(device: int, create_info: int, allocator: int, image_out: int) -> int:
    return _create(device, create_info, allocator, image_out, "vkCreateImage", _note_image)


def create_image_view(device: int, create_info: int, allocator: int, view_out: int) -> int:
    return _create(device, create_info, allocator, view_out, "vkCreateImageView", _note_view)


def create_sampler(device: int, create_info: int, allocator: int, sampler_out: int) -> int:
    return _create(device, create_info, allocator, sampler_out, "vkCreateSampler", _note_sampler)


def destroy_image_view(device: int, view: int, allocator: int) -> None:
    _destroy(device, view, allocator, "vkDestroyImageView", IMAGE_VIEW)


def destroy_sampler(device: int, sampler: int, allocator: int) -> None:
    _destroy(device, sampler, allocator, "vkDestroySampler", SAMPLER)


def destroy_image(device: int, image: int, allocator: int) -> None:
    _destroy(device, image, allocator, "vkDestroyImage", IMAGE)


def free_memory(device: int, memory: int, allocator: int) -> None:
    _destroy(device, memory, allocator, "vkFreeMemory", MEMORY)


def bind_image_memory(device: int, image: int, memory: int, offset: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkBindImageMemory(device, image, memory, offset))
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        tracker.lifetimes.created(image, IMAGE, memory)
    return result


def bind_image_memory2(device: int, count: int, infos: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkBindImageMemory2(device, count, infos))
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        try:
            items = vkffi.cast("VkBindImageMemoryInfo *", infos)
            for index in range(count):
                image = address(items[index].image)
                tracker.lifetimes.created(image, IMAGE, address(items[index].memory))
        except BaseException as error:
            report_error("vkBindImageMemory2", error, record.instance.state)
    return result
