"""Instance-creation entry points: the first calls into the layer's Python side.

The first vkCreateInstance starts Python, so what it imports is what an app pays before its
instance exists (start-up cost): this module reads the create info through the layer's own
declarations (``instance_info``), not the ``vulkan`` package, and the device-level engine is
imported with the first device (``hooks_device``).

Each entry point calls down the chain exactly once. Engine work before the call may only
change what is passed down; engine work after it may only record. Either failing is reported
and the app's call proceeds as if the layer were absent.
"""

from __future__ import annotations

from gpuav.layer.api_versions import API_VERSION_1_1
from gpuav.layer.instance_state import post_call_record_create_instance
from gpuav.layer.message_delivery import Reporter
from gpuav.layer.native import callbacks, instance_info
from gpuav.layer.native.dispatch import (
    INSTANCE_COMMANDS,
    REGISTRY,
    InstanceRecord,
    Native,
    NextFunctions,
    dispatch_key,
    register_table,
    take_link,
)
from gpuav.layer.native.errors import report_error
from gpuav.layer.settings import Settings

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up cost)
if TYPE_CHECKING:
    from typing import Any

STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO = 47  # vk_layer.h
ERROR_INITIALIZATION_FAILED = -3


def create_instance(create_info: int, allocator: int, instance_out: int) -> int:
    link = take_link(
        create_info,
        STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO,
        "struct gpuav_layer_instance_link *",
    )
    if link is None:
        return ERROR_INITIALIZATION_FAILED
    ffi = Native.ffi
    get_proc_addr = ffi.cast("gpuav_PFN_GetProcAddr", link.pfnNextGetInstanceProcAddr)
    create = ffi.cast("gpuav_PFN_vkCreateInstance", get_proc_addr(0, b"vkCreateInstance"))
    settings, api_version = Settings(), 0
    keep: list[Any] = []
    passed_info = create_info
    try:
        settings, api_version = instance_info.instance_settings(create_info)
        if settings.enabled and api_version < API_VERSION_1_1:
            # GPU-AV needs Vulkan 1.1 (SPIR-V 1.3); a 1.0 app on a newer loader and driver gets
            # 1.1 as the Khronos layer gives it, and is told so at device creation.
            passed_info = instance_info.with_api_version(create_info, API_VERSION_1_1, keep)
    except BaseException as error:
        report_error("vkCreateInstance (settings)", error)
        passed_info = create_info
    result = int(create(passed_info, allocator, instance_out))
    if result != 0:
        return result
    instance = int(ffi.cast("uintptr_t *", instance_out)[0])
    register_table(instance, get_proc_addr, False, settings.enabled, settings.reserve_binding_slot)
    reporter = Reporter(
        deliver_utils=callbacks.safe(callbacks.deliver_utils),
        deliver_report=callbacks.safe(callbacks.deliver_report),
    )
    raised = passed_info != create_info
    state = post_call_record_create_instance(
        instance, settings, API_VERSION_1_1 if raised else api_version, reporter
    )
    if raised:
        state.asked_api_version = api_version
    if not settings.enabled:
        return result  # layer.c passes everything of this instance through
    REGISTRY.instances[dispatch_key(instance)] = InstanceRecord(
        instance, state, get_proc_addr, NextFunctions(get_proc_addr, instance, INSTANCE_COMMANDS)
    )
    return result


def destroy_instance(instance: int, allocator: int) -> None:
    record = REGISTRY.instances.pop(dispatch_key(instance), None)
    Native.lib.gpuav_unregister_table(instance)
    if record is not None:
        record.next.vkDestroyInstance(instance, allocator)
