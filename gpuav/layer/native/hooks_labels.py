"""Debug-utils label regions of command buffers and queues (see ``debug_labels``): recorded,
then passed down whatever happened."""

from __future__ import annotations

from gpuav.layer import debug_labels
from gpuav.layer.native.dispatch import REGISTRY, Native
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, string_at


def _label_name(label_info: int) -> str:
    return string_at(address(at(label_info, "VkDebugUtilsLabelEXT").pLabelName))


def cmd_begin_debug_utils_label(command_buffer: int, label_info: int) -> None:
    record = REGISTRY.devices.get(Native.lib.gpuav_dispatch_key(command_buffer))
    if record is None:
        return
    if record.state is not None:
        try:
            state = record.state.command_buffers.get(command_buffer)
            if state is not None:
                debug_labels.cmd_begin_label(state, _label_name(label_info))
        except BaseException as error:
            report_error("vkCmdBeginDebugUtilsLabelEXT", error, record.instance.state)
    record.next.vkCmdBeginDebugUtilsLabelEXT(command_buffer, label_info)


def cmd_end_debug_utils_label(command_buffer: int) -> None:
    record = REGISTRY.devices.get(Native.lib.gpuav_dispatch_key(command_buffer))
    if record is None:
        return
    if record.state is not None:
        try:
            state = record.state.command_buffers.get(command_buffer)
            if state is not None:
                debug_labels.cmd_end_label(state)
        except BaseException as error:
            report_error("vkCmdEndDebugUtilsLabelEXT", error, record.instance.state)
    record.next.vkCmdEndDebugUtilsLabelEXT(command_buffer)


def queue_begin_debug_utils_label(queue: int, label_info: int) -> None:
    record = REGISTRY.device_of(queue)
    if record is None:
        return
    if record.state is not None:
        try:
            debug_labels.queue_begin_label(record.state, queue, _label_name(label_info))
        except BaseException as error:
            report_error("vkQueueBeginDebugUtilsLabelEXT", error, record.instance.state)
    record.next.vkQueueBeginDebugUtilsLabelEXT(queue, label_info)


def queue_end_debug_utils_label(queue: int) -> None:
    record = REGISTRY.device_of(queue)
    if record is None:
        return
    if record.state is not None:
        try:
            debug_labels.queue_end_label(record.state, queue)
        except BaseException as error:
            report_error("vkQueueEndDebugUtilsLabelEXT", error, record.instance.state)
    record.next.vkQueueEndDebugUtilsLabelEXT(queue)
