"""vkQueueSubmit / vkQueueSubmit2 and the app's waits: submissions are tracked, and read back
when the app's own synchronization shows them finished (see ``queue_submit``).

A submission without instrumented actions costs one look at its command buffers' states."""

from __future__ import annotations

from typing import Any

from vulkan._vulkan import ffi as vkffi

from gpuav.errors import ResourceExhausted
from gpuav.layer import debug_labels, queue_submit
from gpuav.layer.command_buffers import degrade
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, handles_at

ERROR_INITIALIZATION_FAILED = -3


def _submit_info_handles(count: int, submits: int) -> list[int]:
    infos = vkffi.cast("VkSubmitInfo *", submits)
    handles: list[int] = []
    for i in range(count):
        info = infos[i]
        handles.extend(handles_at(address(info.pCommandBuffers), int(info.commandBufferCount)))
    return handles


def _submit_info2_handles(count: int, submits: int) -> list[int]:
    infos = vkffi.cast("VkSubmitInfo2 *", submits)
    return [
        address(infos[i].pCommandBufferInfos[j].commandBuffer)
        for i in range(count)
        for j in range(infos[i].commandBufferInfoCount)
    ]


def _submit(
    command: str, read_handles: Any, queue: int, count: int, submits: int, fence: int
) -> int:
    record = REGISTRY.device_of(queue)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    state = record.state
    to_read = None
    if state is not None and state.enabled:
        try:
            to_read = queue_submit.command_buffers_to_read(state, read_handles(count, submits))
            queue_submit.pre_call_record_queue_submit(state, to_read)
        except BaseException as error:
            report_error(command, error, record.instance.state)
            to_read = None
    result = int(getattr(record.next, command)(queue, count, submits, fence))
    if result == 0 and state is not None and state.queue_labels is not None:
        try:
            debug_labels.post_call_record_queue_submit(state, queue, read_handles(count, submits))
        except BaseException as error:
            report_error(command, error, record.instance.state)
    if result == 0 and state is not None and to_read is not None and (to_read or state.pending):
        try:
            queue_submit.post_call_record_queue_submit(state, queue, to_read, fence)
        except ResourceExhausted as error:  # gpuav's own fence or submit failed
            degrade(state, f"{command}: {error}")
        except BaseException as error:
            report_error(command, error, record.instance.state)
    return result


def queue_submit_hook(queue: int, count: int, submits: int, fence: int) -> int:
    return _submit("vkQueueSubmit", _submit_info_handles, queue, count, submits, fence)


def queue_submit2_hook(queue: int, count: int, submits: int, fence: int) -> int:
    return _submit("vkQueueSubmit2", _submit_info2_handles, queue, count, submits, fence)


# Every way the app can learn that work finished is a read-back point.


def _after_wait(record: DeviceRecord, command: str, **shown_done: Any) -> None:
    state = record.state
    if state is not None and state.pending:
        try:
            queue_submit.read_back_finished(state, **shown_done)
        except BaseException as error:
            report_error(command, error, record.instance.state)


def queue_wait_idle_hook(queue: int) -> int:
    record = REGISTRY.device_of(queue)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkQueueWaitIdle(queue))
    _after_wait(record, "vkQueueWaitIdle", queue=queue if result == 0 else None)
    return result


def device_wait_idle_hook(device: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkDeviceWaitIdle(device))
    _after_wait(record, "vkDeviceWaitIdle", settle_every=result == 0)
    return result


def wait_for_fences_hook(device: int, count: int, fences: int, wait_all: int, timeout: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkWaitForFences(device, count, fences, wait_all, timeout))
    # With waitAll off, some fence signalled, but which is not said: nothing is waited for.
    done = frozenset(handles_at(fences, count)) if result == 0 and wait_all else frozenset()
    _after_wait(record, "vkWaitForFences", app_fences=done)
    return result


def get_fence_status_hook(device: int, fence: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkGetFenceStatus(device, fence))
    _after_wait(record, "vkGetFenceStatus", app_fences=(fence,) if result == 0 else ())
    return result


def wait_semaphores_hook(device: int, wait_info: int, timeout: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkWaitSemaphores(device, wait_info, timeout))
    _after_wait(record, "vkWaitSemaphores")
    return result


def get_semaphore_counter_value_hook(device: int, semaphore: int, value_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    result = int(record.next.vkGetSemaphoreCounterValue(device, semaphore, value_out))
    _after_wait(record, "vkGetSemaphoreCounterValue")
    return result
