"""Physical-device and device entry points: the reserve-binding-slot limit, the features
GPU-AV adds at vkCreateDevice, and the engine's device state (``hooks_instance`` has the
instance's, kept apart so that the first vkCreateInstance imports none of this).

Each entry point calls down the chain exactly once. Engine work before the call may only
change what is passed down; engine work after it may only record. Either failing is reported
and the app's call proceeds as if the layer were absent.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer import device_setup, module_cache, notices, recording_site, shader_validation
from gpuav.layer.calls import (
    API_VERSION_1_2,
    STAGE_EXTENSIONS,
    FeatureRequest,
    PhysicalDeviceFacts,
)
from gpuav.layer.native import enabled_features
from gpuav.layer.native.device_calls import NativeDeviceCalls
from gpuav.layer.native.dispatch import (
    DEVICE_COMMANDS,
    REGISTRY,
    DeviceRecord,
    InstanceRecord,
    Native,
    NextFunctions,
    dispatch_key,
    forget_recording,
    register_table,
    take_link,
)
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import (
    STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO,
    address,
    at,
    copy_struct,
    find,
    handles_at,
    replace_in_chain,
    string_at,
)

ERROR_INITIALIZATION_FAILED = -3
# With either on, an out-of-range buffer access is defined behaviour: reported as a warning.
ROBUST_BUFFER_FEATURES = frozenset({"robustBufferAccess", "robustBufferAccess2"})


def _adjust_limits(physical_device: int, limits: Any) -> None:
    record = REGISTRY.instance_of(physical_device)
    if record is None:
        return
    limits.maxBoundDescriptorSets = device_setup.post_call_record_get_physical_device_properties(
        record.state, int(limits.maxBoundDescriptorSets)
    )


def get_physical_device_properties(physical_device: int, properties: int) -> None:
    record = REGISTRY.instance_of(physical_device)
    if record is None:
        return
    record.next.vkGetPhysicalDeviceProperties(physical_device, properties)
    try:
        _adjust_limits(physical_device, at(properties, "VkPhysicalDeviceProperties").limits)
    except BaseException as error:
        report_error("vkGetPhysicalDeviceProperties", error, record.state)


def get_physical_device_properties2(physical_device: int, properties: int) -> None:
    record = REGISTRY.instance_of(physical_device)
    if record is None:
        return
    record.next.vkGetPhysicalDeviceProperties2(physical_device, properties)
    try:
        chained = at(properties, "VkPhysicalDeviceProperties2")
        _adjust_limits(physical_device, chained.properties.limits)
    except BaseException as error:
        report_error("vkGetPhysicalDeviceProperties2", error, record.state)


def _physical_device_facts(record: InstanceRecord, physical_device: int) -> PhysicalDeviceFacts:
    properties = vkffi.new("VkPhysicalDeviceProperties *")
    record.next.vkGetPhysicalDeviceProperties(physical_device, address(properties))
    features = vkffi.new("VkPhysicalDeviceFeatures *")
    record.next.vkGetPhysicalDeviceFeatures(physical_device, address(features))
    memory = vkffi.new("VkPhysicalDeviceMemoryProperties *")
    record.next.vkGetPhysicalDeviceMemoryProperties(physical_device, address(memory))
    limits = properties.limits
    buffer_device_address = False
    if (
        int(properties.apiVersion) >= API_VERSION_1_2
        and record.state.api_version >= API_VERSION_1_2
        and record.next.vkGetPhysicalDeviceFeatures2 is not None
    ):
        features12 = vkffi.new("VkPhysicalDeviceVulkan12Features *")
        features12.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES
        features2 = vkffi.new("VkPhysicalDeviceFeatures2 *")
        features2.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2
        features2.pNext = features12
        record.next.vkGetPhysicalDeviceFeatures2(physical_device, address(features2))
        buffer_device_address = bool(features12.bufferDeviceAddress)
    return PhysicalDeviceFacts(
        api_version=int(properties.apiVersion),
        max_bound_descriptor_sets=int(limits.maxBoundDescriptorSets),
        min_storage_buffer_offset_alignment=int(limits.minStorageBufferOffsetAlignment),
        max_storage_buffer_range=int(limits.maxStorageBufferRange),
        memory_type_flags=tuple(
            int(memory.memoryTypes[index].propertyFlags) for index in range(memory.memoryTypeCount)
        ),
        fragment_stores_and_atomics=bool(features.fragmentStoresAndAtomics),
        vertex_pipeline_stores_and_atomics=bool(features.vertexPipelineStoresAndAtomics),
        buffer_device_address=buffer_device_address,
        max_push_constants_size=int(limits.maxPushConstantsSize),
        shader_int64=bool(features.shaderInt64),
        cpu=int(properties.deviceType) == vk.VK_PHYSICAL_DEVICE_TYPE_CPU,
    )


def _extension_stages(create_info: int) -> int:
    """The shader stages that the device's enabled extensions bring (mesh, ray tracing)."""
    info = at(create_info, "VkDeviceCreateInfo")
    stages = 0
    for index in range(info.enabledExtensionCount):
        name = string_at(address(info.ppEnabledExtensionNames[index]))
        stages |= STAGE_EXTENSIONS.get(name, 0)
    return stages


def _turn_on(features: Any, request: FeatureRequest) -> None:
    if request.fragment_stores_and_atomics:
        features.fragmentStoresAndAtomics = 1
    if request.vertex_pipeline_stores_and_atomics:
        features.vertexPipelineStoresAndAtomics = 1
    if request.shader_int64:
        features.shaderInt64 = 1


# The structures that can carry bufferDeviceAddress, by sType.
_ADDRESS_FEATURE_STRUCTURES = (
    (vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, "VkPhysicalDeviceVulkan12Features"),
    (
        vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES,
        "VkPhysicalDeviceBufferDeviceAddressFeatures",
    ),
)


def _with_buffer_device_address(create_info: int, keep: list[Any]) -> int:
    """``create_info`` (already ours or the app's) with bufferDeviceAddress on.

    The feature goes where the app put its Vulkan 1.2 features, if anywhere (chaining both
    structures is invalid: VUID-VkDeviceCreateInfo-pNext-02830); otherwise a
    VkPhysicalDeviceBufferDeviceAddressFeatures is put at the head of the chain.
    """
    info = at(create_info, "VkDeviceCreateInfo")
    first = address(info.pNext)
    for structure_type, type_name in _ADDRESS_FEATURE_STRUCTURES:
        chained = find(first, structure_type)
        if not chained:
            continue
        if at(chained, type_name).bufferDeviceAddress:
            return create_info
        replacement = copy_struct(chained, type_name, keep)
        replacement.bufferDeviceAddress = 1
        head = replace_in_chain(first, chained, address(replacement), keep)
        if head is None:
            return create_info
        copy = copy_struct(create_info, "VkDeviceCreateInfo", keep)
        copy.pNext = vkffi.cast("void *", head)
        return address(copy)
    added = vkffi.new("VkPhysicalDeviceBufferDeviceAddressFeatures *")
    keep.append(added)
    added.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_BUFFER_DEVICE_ADDRESS_FEATURES
    added.bufferDeviceAddress = 1
    added.pNext = info.pNext
    copy = copy_struct(create_info, "VkDeviceCreateInfo", keep)
    copy.pNext = added
    return address(copy)


def _enables_buffer_device_address(create_info: int) -> bool:
    """Whether the device was created with bufferDeviceAddress and shaderInt64 on."""
    info = at(create_info, "VkDeviceCreateInfo")
    first = address(info.pNext)
    if info.pEnabledFeatures != vkffi.NULL:
        int64 = bool(info.pEnabledFeatures.shaderInt64)
    else:
        features2 = find(first, vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)
        int64 = bool(features2) and bool(
            at(features2, "VkPhysicalDeviceFeatures2").features.shaderInt64
        )
    if not int64:
        return False
    for structure_type, type_name in _ADDRESS_FEATURE_STRUCTURES:
        chained = find(first, structure_type)
        if chained and at(chained, type_name).bufferDeviceAddress:
            return True
    return False


def _with_features(create_info: int, request: FeatureRequest, keep: list[Any]) -> int | None:
    """The create info with our features on; None if nothing to change."""
    changed = _with_stores(create_info, request, keep)
    if request.buffer_device_address:
        return _with_buffer_device_address(changed or create_info, keep)
    return changed


def _with_stores(create_info: int, request: FeatureRequest, keep: list[Any]) -> int | None:
    """A copy of the VkDeviceCreateInfo with our VkPhysicalDeviceFeatures on; None if nothing
    to change.

    Seed 000 (GpuPreCallRecordCreateDevice) modifies pEnabledFeatures; apps may instead chain
    VkPhysicalDeviceFeatures2, which then gets a modified copy in a copied chain.
    """
    info = at(create_info, "VkDeviceCreateInfo")
    if info.pEnabledFeatures != vkffi.NULL:
        current = info.pEnabledFeatures
        if (
            (current.fragmentStoresAndAtomics or not request.fragment_stores_and_atomics)
            and (
                current.vertexPipelineStoresAndAtomics
                or not request.vertex_pipeline_stores_and_atomics
            )
            and (current.shaderInt64 or not request.shader_int64)
        ):
            return None
        copy = copy_struct(create_info, "VkDeviceCreateInfo", keep)
        features = copy_struct(address(info.pEnabledFeatures), "VkPhysicalDeviceFeatures", keep)
        _turn_on(features, request)
        copy.pEnabledFeatures = features
        return address(copy)
    first = address(info.pNext)
    chained = find(first, vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2)
    copy = copy_struct(create_info, "VkDeviceCreateInfo", keep)
    if not chained:
        features = vkffi.new("VkPhysicalDeviceFeatures *")
        keep.append(features)
        _turn_on(features, request)
        copy.pEnabledFeatures = features
        return address(copy)
    features2 = copy_struct(chained, "VkPhysicalDeviceFeatures2", keep)
    _turn_on(features2.features, request)
    head = replace_in_chain(first, chained, address(features2), keep)
    if head is None:
        return None
    copy.pNext = vkffi.cast("void *", head)
    return address(copy)


def create_device(physical_device: int, create_info: int, allocator: int, device_out: int) -> int:
    link = take_link(
        create_info, STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO, "struct gpuav_layer_device_link *"
    )
    if link is None:
        return ERROR_INITIALIZATION_FAILED
    ffi = Native.ffi
    instance_gpa = ffi.cast("gpuav_PFN_GetProcAddr", link.pfnNextGetInstanceProcAddr)
    device_gpa = ffi.cast("gpuav_PFN_GetProcAddr", link.pfnNextGetDeviceProcAddr)
    instance = REGISTRY.instance_of(physical_device)
    instance_handle = instance.handle if instance is not None else 0
    create = ffi.cast("gpuav_PFN_vkCreateDevice", instance_gpa(instance_handle, b"vkCreateDevice"))

    keep: list[Any] = []
    facts: PhysicalDeviceFacts | None = None
    passed_info = create_info
    if instance is not None and instance.state.settings.enabled:
        asked = instance.state.asked_api_version
        if asked is not None:
            instance.state.reporter.emit_once(
                "api-version-raised", notices.api_version_raised(asked, instance.state.api_version)
            )
        try:
            facts = _physical_device_facts(instance, physical_device)
            request = device_setup.pre_call_record_create_device(instance.state, facts)
            if request is not None:
                passed_info = _with_features(create_info, request, keep) or create_info
        except BaseException as error:
            report_error("vkCreateDevice (features)", error, instance.state)
            passed_info = create_info
    result = int(create(physical_device, passed_info, allocator, device_out))
    if result != 0 or instance is None:
        return result
    if Native.lib.gpuav_python_is_the_layers():
        recording_site.no_app_frames()
    device = handles_at(device_out, 1)[0]
    register_table(device, device_gpa, True, False)
    next_functions = NextFunctions(device_gpa, device, DEVICE_COMMANDS)
    record = DeviceRecord(device, instance, device_gpa, next_functions)
    REGISTRY.devices[dispatch_key(device)] = record
    try:
        if facts is None:
            facts = _physical_device_facts(instance, physical_device)
        if facts.buffer_device_address and not _enables_buffer_device_address(passed_info):
            # Our copy of the create info could not be made: no device-address path.
            facts = dataclasses.replace(facts, buffer_device_address=False)
        facts = dataclasses.replace(facts, extension_stages=_extension_stages(create_info))
        record.state = device_setup.post_call_record_create_device(
            instance.state, device, NativeDeviceCalls(device, next_functions), facts
        )
    except BaseException as error:
        report_error("vkCreateDevice", error, instance.state)
    if record.state is not None and record.state.enabled:
        register_table(device, device_gpa, True, True)
        try:
            features = enabled_features.enabled_feature_names(create_info)
            record.state.robust_buffer_access = not features.isdisjoint(ROBUST_BUFFER_FEATURES)
        except BaseException as error:
            report_error("vkCreateDevice (robustness)", error, instance.state)
    else:  # layer.c passes everything of this device through
        REGISTRY.devices.pop(dispatch_key(device), None)
    _record_shader_environment(device, create_info, physical_device, instance, facts)
    return result


def _record_shader_environment(
    device: int,
    create_info: int,
    physical_device: int,
    instance: InstanceRecord,
    facts: PhysicalDeviceFacts | None,
) -> None:
    """What the app enabled (its own create info), for validation at vkCreateShaderModule."""
    if facts is None or not instance.state.settings.enabled:
        return
    if not shader_validation.validation_enabled():
        return
    try:
        version = device_setup.effective_api_version(instance.state, facts)
        environment = enabled_features.shader_environment(
            create_info, physical_device, version, instance.next
        )
        cache = module_cache.cache_for(instance.state.settings)
        shader_validation.post_call_record_create_device(device, environment, cache)
    except BaseException as error:
        report_error("vkCreateDevice (shader validation)", error, instance.state)


def destroy_device(device: int, allocator: int) -> None:
    record = REGISTRY.devices.pop(dispatch_key(device), None)
    Native.lib.gpuav_forget_pipeline(device, 0)
    Native.lib.gpuav_fetch_bindings_forget_device(device)
    Native.lib.gpuav_unregister_table(device)
    if record is None:
        return
    shader_validation.pre_call_record_destroy_device(device)
    if record.state is not None:
        forget_recording(record.state)
        try:
            device_setup.pre_call_record_destroy_device(record.state)
        except BaseException as error:
            report_error("vkDestroyDevice", error, record.instance.state)
    record.next.vkDestroyDevice(device, allocator)
