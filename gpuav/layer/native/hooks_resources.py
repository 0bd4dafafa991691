"""Image views, samplers, images and memory: what descriptors name, and what those hang on.
When one is destroyed (or memory freed), the descriptors naming it, or an object depending on
it, may not be used any more (``DescriptorTracker.retire``); the destroy call goes down after
the tracker has noted it. Images, views and samplers are also described (``image_views``),
for the checks that a descriptor fits its access."""

from __future__ import annotations

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
    except BaseException as error:
        report_error(command, error, record.instance.state)


def create_image(device: int, create_info: int, allocator: int, image_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkCreateImage(device, create_info, allocator, image_out))
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        try:
            info = at(create_info, "VkImageCreateInfo")
            image = ImageInfo(info.format, info.samples, info.mipLevels, info.arrayLayers)
            tracker.images.create_image(handles_at(image_out, 1)[0], image)
        except BaseException as error:
            report_error("vkCreateImage", error, record.instance.state)
    return result


def create_image_view(device: int, create_info: int, allocator: int, view_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkCreateImageView(device, create_info, allocator, view_out))
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        try:
            info = at(create_info, "VkImageViewCreateInfo")
            image = address(info.image)
            handle = handles_at(view_out, 1)[0]
            tracker.lifetimes.created(handle, IMAGE_VIEW, image)
            span = info.subresourceRange
            view = ViewInfo(
                image, info.viewType, info.format, span.aspectMask, span.levelCount, span.layerCount
            )
            tracker.images.create_view(handle, view)
        except BaseException as error:
            report_error("vkCreateImageView", error, record.instance.state)
    return result


def create_sampler(device: int, create_info: int, allocator: int, sampler_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkCreateSampler(device, create_info, allocator, sampler_out))
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        try:
            unnormalized = bool(at(create_info, "VkSamplerCreateInfo").unnormalizedCoordinates)
            tracker.images.create_sampler(handles_at(sampler_out, 1)[0], unnormalized)
        except BaseException as error:
            report_error("vkCreateSampler", error, record.instance.state)
    return result


def destroy_image_view(device: int, view: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    _retire(record, "vkDestroyImageView", view, IMAGE_VIEW)
    tracker = _tracker(record)
    if tracker is not None:
        tracker.images.destroy_view(view)
    record.next.vkDestroyImageView(device, view, allocator)


def destroy_sampler(device: int, sampler: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    _retire(record, "vkDestroySampler", sampler, SAMPLER)
    tracker = _tracker(record)
    if tracker is not None:
        tracker.images.destroy_sampler(sampler)
    record.next.vkDestroySampler(device, sampler, allocator)


def destroy_image(device: int, image: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    _retire(record, "vkDestroyImage", image, IMAGE)
    tracker = _tracker(record)
    if tracker is not None:
        tracker.images.destroy_image(image)
    record.next.vkDestroyImage(device, image, allocator)


def free_memory(device: int, memory: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    _retire(record, "vkFreeMemory", memory, MEMORY)
    record.next.vkFreeMemory(device, memory, allocator)


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
