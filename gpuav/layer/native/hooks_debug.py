"""Debug-utils messengers, debug-report callbacks and object names: where messages go and
what they call objects."""

from __future__ import annotations

from gpuav.layer.native.dispatch import REGISTRY
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, handles_at, string_at
from gpuav.layer.reporting import Messenger, ReportCallback


def create_debug_utils_messenger(
    instance: int, create_info: int, allocator: int, messenger_out: int
) -> int:
    record = REGISTRY.instance_of(instance)
    if record is None:
        return -3
    result = int(
        record.next.vkCreateDebugUtilsMessengerEXT(instance, create_info, allocator, messenger_out)
    )
    if result == 0:
        try:
            info = at(create_info, "VkDebugUtilsMessengerCreateInfoEXT")
            handle = handles_at(messenger_out, 1)[0]
            record.state.reporter.messengers[handle] = Messenger(
                int(info.messageSeverity),
                int(info.messageType),
                address(info.pfnUserCallback),
                address(info.pUserData),
            )
        except BaseException as error:
            report_error("vkCreateDebugUtilsMessengerEXT", error, record.state)
    return result


def destroy_debug_utils_messenger(instance: int, messenger: int, allocator: int) -> None:
    record = REGISTRY.instance_of(instance)
    if record is None:
        return
    record.state.reporter.messengers.pop(messenger, None)
    record.next.vkDestroyDebugUtilsMessengerEXT(instance, messenger, allocator)


def create_debug_report_callback(
    instance: int, create_info: int, allocator: int, callback_out: int
) -> int:
    record = REGISTRY.instance_of(instance)
    if record is None:
        return -3
    result = int(
        record.next.vkCreateDebugReportCallbackEXT(instance, create_info, allocator, callback_out)
    )
    if result == 0:
        try:
            info = at(create_info, "VkDebugReportCallbackCreateInfoEXT")
            handle = handles_at(callback_out, 1)[0]
            record.state.reporter.report_callbacks[handle] = ReportCallback(
                int(info.flags), address(info.pfnCallback), address(info.pUserData)
            )
        except BaseException as error:
            report_error("vkCreateDebugReportCallbackEXT", error, record.state)
    return result


def destroy_debug_report_callback(instance: int, callback: int, allocator: int) -> None:
    record = REGISTRY.instance_of(instance)
    if record is None:
        return
    record.state.reporter.report_callbacks.pop(callback, None)
    record.next.vkDestroyDebugReportCallbackEXT(instance, callback, allocator)


def set_debug_utils_object_name(device: int, name_info: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return -3
    if record.state is not None:
        try:
            info = at(name_info, "VkDebugUtilsObjectNameInfoEXT")
            name = string_at(address(info.pObjectName))
            if name:
                named = (int(info.objectType), name)
                record.state.object_names[int(info.objectHandle)] = named
            else:
                record.state.object_names.pop(int(info.objectHandle), None)
        except BaseException as error:
            report_error("vkSetDebugUtilsObjectNameEXT", error, record.instance.state)
    return int(record.next.vkSetDebugUtilsObjectNameEXT(device, name_info))
