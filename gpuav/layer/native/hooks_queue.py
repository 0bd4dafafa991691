"""vkQueueSubmit / vkQueueSubmit2: submit, then let the engine wait and read the blocks.

A submission without instrumented actions costs one look at its command buffers' states."""

from __future__ import annotations

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.errors import ResourceExhausted
from gpuav.layer import queue_submit
from gpuav.layer.command_buffers import degrade
from gpuav.layer.native.dispatch import REGISTRY
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, find, handles_at

ERROR_INITIALIZATION_FAILED = -3


def _submit_info_handles(count: int, submits: int) -> tuple[list[int], bool]:
    """Command buffers of VkSubmitInfo[], and whether any batch waits on timeline values."""
    infos = vkffi.cast("VkSubmitInfo *", submits)
    handles: list[int] = []
    timeline = False
    for i in range(count):
        info = infos[i]
        handles.extend(handles_at(address(info.pCommandBuffers), int(info.commandBufferCount)))
        if info.waitSemaphoreCount and address(info.pNext):
            chained = find(address(info.pNext), vk.VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO)
            if chained and at(chained, "VkTimelineSemaphoreSubmitInfo").waitSemaphoreValueCount:
                timeline = True
    return handles, timeline


def _submit_info2_handles(count: int, submits: int) -> tuple[list[int], bool]:
    """Command buffers of VkSubmitInfo2[]; a wait with a nonzero value is a timeline wait."""
    infos = vkffi.cast("VkSubmitInfo2 *", submits)
    handles: list[int] = []
    timeline = False
    for i in range(count):
        info = infos[i]
        for j in range(info.commandBufferInfoCount):
            handles.append(address(info.pCommandBufferInfos[j].commandBuffer))
        for j in range(info.waitSemaphoreInfoCount):
            if info.pWaitSemaphoreInfos[j].value:
                timeline = True
    return handles, timeline


def _submit(
    command: str, read_handles: object, queue: int, count: int, submits: int, fence: int
) -> int:
    record = REGISTRY.device_of(queue)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    state = record.state
    to_read = None
    host_wait = False  # timeline values or a host-set event: never wait for the queue then
    if state is not None and state.enabled:
        try:
            handles, timeline = read_handles(count, submits)  # type: ignore[operator]
            host_wait = queue_submit.waits_on_host(state, handles, timeline)
            to_read = queue_submit.command_buffers_to_read(state, handles)
            queue_submit.pre_call_record_queue_submit(state, to_read)
        except BaseException as error:
            report_error(command, error, record.instance.state)
            to_read = None
    result = int(getattr(record.next, command)(queue, count, submits, fence))
    watched = state is not None and (host_wait or bool(state.pending))
    if result == 0 and state is not None and to_read is not None and (to_read or watched):
        try:
            queue_submit.post_call_record_queue_submit(state, queue, to_read, host_wait)
        except ResourceExhausted as error:  # gpuav's own fence or wait failed
            degrade(state, f"{command}: {error}")
        except BaseException as error:
            report_error(command, error, record.instance.state)
    return result


def queue_submit_hook(queue: int, count: int, submits: int, fence: int) -> int:
    return _submit("vkQueueSubmit", _submit_info_handles, queue, count, submits, fence)


def queue_submit2_hook(queue: int, count: int, submits: int, fence: int) -> int:
    return _submit("vkQueueSubmit2", _submit_info2_handles, queue, count, submits, fence)


def _after_wait(record_device: object, command: str) -> None:
    state = getattr(record_device, "state", None)
    if state is not None and state.pending:
        try:
            queue_submit.post_call_record_wait(state)
        except BaseException as error:
            report_error(command, error, record_device.instance.state)  # type: ignore[attr-defined]


def queue_wait_idle_hook(queue: int) -> int:
    record = REGISTRY.device_of(queue)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkQueueWaitIdle(queue))
    _after_wait(record, "vkQueueWaitIdle")
    return result


def device_wait_idle_hook(device: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkDeviceWaitIdle(device))
    _after_wait(record, "vkDeviceWaitIdle")
    return result


def wait_for_fences_hook(device: int, count: int, fences: int, wait_all: int, timeout: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkWaitForFences(device, count, fences, wait_all, timeout))
    _after_wait(record, "vkWaitForFences")
    return result


# The app may learn of a completion by polling too: every way it can is a read-back point.


def get_fence_status_hook(device: int, fence: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkGetFenceStatus(device, fence))
    if result == 0:
        _after_wait(record, "vkGetFenceStatus")
    return result


def wait_semaphores_hook(device: int, wait_info: int, timeout: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkWaitSemaphores(device, wait_info, timeout))
    if result == 0:
        _after_wait(record, "vkWaitSemaphores")
    return result


def get_semaphore_counter_value_hook(device: int, semaphore: int, value_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkGetSemaphoreCounterValue(device, semaphore, value_out))
    _after_wait(record, "vkGetSemaphoreCounterValue")
    return result
