"""Image views, samplers, images and memory: what descriptors name, and what those hang on.
When one is destroyed (or memory freed), the descriptors naming it, or an object depending on
it, may not be used any more (``DescriptorTracker.retire``); the destroy call goes down after
the tracker has noted it."""

from __future__ import annotations

from vulkan._vulkan import ffi as vkffi

from gpuav.layer.descriptor_sets import DescriptorTracker
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


def create_image_view(device: int, create_info: int, allocator: int, view_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkCreateImageView(device, create_info, allocator, view_out))
    tracker = _tracker(record)
    if result == 0 and tracker is not None:
        try:
            image = address(at(create_info, "VkImageViewCreateInfo").image)
            tracker.lifetimes.created(handles_at(view_out, 1)[0], IMAGE_VIEW, image)
        except BaseException as error:
            report_error("vkCreateImageView", error, record.instance.state)
    return result


def destroy_image_view(device: int, view: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    _retire(record, "vkDestroyImageView", view, IMAGE_VIEW)
    record.next.vkDestroyImageView(device, view, allocator)


def destroy_sampler(device: int, sampler: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    _retire(record, "vkDestroySampler", sampler, SAMPLER)
    record.next.vkDestroySampler(device, sampler, allocator)


def destroy_image(device: int, image: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    _retire(record, "vkDestroyImage", image, IMAGE)
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
