"""What the app enabled in vkCreateDevice, as names the validator's capability table uses.

Features are the VkBool32 members set in ``pEnabledFeatures`` and in every
``VkPhysicalDevice*Features*`` structure of the pNext chain (VkPhysicalDeviceFeatures2,
Vulkan11/12/13Features, extension structures), read generically through the ``vulkan``
package's declarations. Subgroup operations and float-controls properties are not enabled but
supported, so they are queried from the physical device.
"""

from __future__ import annotations

from typing import Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer.native.vk import _structure_names, address, at, chain, string_at
from gpuav.layer.shader_validation import ShaderEnvironment, target_env_for

API_VERSION_1_1 = 1 << 22 | 1 << 12
API_VERSION_1_2 = 1 << 22 | 2 << 12
_SUBGROUP_FLAGS = {
    value: name
    for name, value in vars(vk).items()
    if name.startswith("VK_SUBGROUP_FEATURE_") and name.endswith(("_BIT", "_BIT_NV"))
}


def shader_environment(
    create_info: int, physical_device: int, api_version: int, next_functions: Any
) -> ShaderEnvironment:
    """The device's environment; ``api_version`` is the version the app can use."""
    info = at(create_info, "VkDeviceCreateInfo")
    extensions = frozenset(
        string_at(address(info.ppEnabledExtensionNames[index]))
        for index in range(info.enabledExtensionCount)
    )
    features = set(enabled_feature_names(create_info))
    if api_version >= API_VERSION_1_1:
        features |= _supported_properties(physical_device, api_version, next_functions)
    return ShaderEnvironment(
        target_env_for(api_version),
        frozenset(features),
        extensions,
        _limits(physical_device, next_functions),
    )


def enabled_feature_names(create_info: int) -> frozenset[str]:
    """The VkBool32 feature members the app set in its VkDeviceCreateInfo."""
    info = at(create_info, "VkDeviceCreateInfo")
    features: set[str] = set()
    if info.pEnabledFeatures != vkffi.NULL:
        features |= _true_members(info.pEnabledFeatures, "VkPhysicalDeviceFeatures")
    names = _structure_names()
    for structure_type, node in chain(address(info.pNext)):
        name = names.get(structure_type, "")
        if name == "VkPhysicalDeviceFeatures2":
            features |= _true_members(at(node, name).features, "VkPhysicalDeviceFeatures")
        elif name.startswith("VkPhysicalDevice") and "Features" in name:
            features |= _true_members(at(node, name), name)
    return frozenset(features)


_INTEGER_TYPES = frozenset({"uint32_t", "int32_t", "uint64_t", "size_t"})


def _limits(physical_device: int, next_functions: Any) -> tuple[tuple[str, int], ...]:
    """The device's integer VkPhysicalDeviceLimits (arrays and floats left out, as
    ``gpuav validate --device-json`` reads them), so that shaders past them are not
    instrumented (say, output Locations the driver would reject)."""
    properties = vkffi.new("VkPhysicalDeviceProperties *")
    next_functions.vkGetPhysicalDeviceProperties(physical_device, address(properties))
    limits = properties.limits
    return tuple(
        sorted(
            (name, int(getattr(limits, name)))
            for name, field in vkffi.typeof("VkPhysicalDeviceLimits").fields
            if field.type.kind == "primitive" and field.type.cname in _INTEGER_TYPES
        )
    )


def _true_members(structure: Any, type_name: str) -> set[str]:
    """Names of the VkBool32 (uint32_t) members that are set."""
    return {
        field_name
        for field_name, field in vkffi.typeof(type_name).fields
        if field.type.cname == "uint32_t" and getattr(structure, field_name)
    }


def _supported_properties(physical_device: int, api_version: int, next_functions: Any) -> set[str]:
    """Subgroup operations (by flag name) and float-controls properties that are true."""
    subgroup = vkffi.new("VkPhysicalDeviceSubgroupProperties *")
    subgroup.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES
    properties = vkffi.new("VkPhysicalDeviceProperties2 *")
    properties.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
    properties.pNext = subgroup
    float_controls = None
    if api_version >= API_VERSION_1_2:  # core there; chaining it earlier would be invalid
        float_controls = vkffi.new("VkPhysicalDeviceFloatControlsProperties *")
        float_controls.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES
        subgroup.pNext = float_controls
    next_functions.vkGetPhysicalDeviceProperties2(physical_device, address(properties))
    supported = {
        name for bit, name in _SUBGROUP_FLAGS.items() if subgroup.supportedOperations & bit
    }
    if float_controls is not None:
        supported |= {
            name
            for name in _true_members(float_controls, "VkPhysicalDeviceFloatControlsProperties")
            if name.startswith("shader")
        }
    return supported
