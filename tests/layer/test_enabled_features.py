"""What the app enabled at vkCreateDevice, read from its create info (no device needed)."""

from __future__ import annotations

from typing import Any

import vulkan as vk
from vulkan._vulkan import ffi

from gpuav.layer.native.enabled_features import shader_environment
from gpuav.layer.native.vk import address


class _PhysicalDevice:
    """Stands in for the next layer's vkGetPhysicalDeviceProperties(2)."""

    MAX_VERTEX_OUTPUT_COMPONENTS = 64

    def __init__(self) -> None:
        self.chained: list[int] = []

    def vkGetPhysicalDeviceProperties(self, physical_device: int, properties: int) -> None:
        limits = ffi.cast("VkPhysicalDeviceProperties *", properties).limits
        limits.maxVertexOutputComponents = self.MAX_VERTEX_OUTPUT_COMPONENTS

    def vkGetPhysicalDeviceProperties2(self, physical_device: int, properties: int) -> None:
        head = ffi.cast("VkPhysicalDeviceProperties2 *", properties)
        subgroup = ffi.cast("VkPhysicalDeviceSubgroupProperties *", head.pNext)
        self.chained.append(int(subgroup.sType))
        subgroup.supportedOperations = (
            vk.VK_SUBGROUP_FEATURE_BASIC_BIT | vk.VK_SUBGROUP_FEATURE_BALLOT_BIT
        )
        if subgroup.pNext != ffi.NULL:
            controls = ffi.cast("VkPhysicalDeviceFloatControlsProperties *", subgroup.pNext)
            self.chained.append(int(controls.sType))
            controls.shaderRoundingModeRTEFloat32 = 1


def _create_info(keep: list[Any], *, features2: bool) -> int:
    core = vk.VkPhysicalDeviceFeatures(shaderFloat64=vk.VK_TRUE, shaderInt16=vk.VK_TRUE)
    vulkan12 = vk.VkPhysicalDeviceVulkan12Features(
        shaderInt8=vk.VK_TRUE, runtimeDescriptorArray=vk.VK_TRUE, drawIndirectCount=0
    )
    queue = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0])
    common = {
        "queueCreateInfoCount": 1,
        "pQueueCreateInfos": [queue],
        "enabledExtensionCount": 2,
        "ppEnabledExtensionNames": ["VK_KHR_8bit_storage", "VK_EXT_transform_feedback"],
    }
    if features2:
        chained = vk.VkPhysicalDeviceFeatures2(pNext=vulkan12, features=core)
        info = vk.VkDeviceCreateInfo(pNext=chained, **common)
        keep.append(chained)
    else:
        info = vk.VkDeviceCreateInfo(pNext=vulkan12, pEnabledFeatures=core, **common)
    keep += [core, vulkan12, queue, info]
    return address(ffi.addressof(info))


def test_features_from_every_structure_extensions_and_supported_operations() -> None:
    for features2 in (False, True):
        keep: list[Any] = []
        physical = _PhysicalDevice()
        environment = shader_environment(
            _create_info(keep, features2=features2), 0, vk.VK_MAKE_VERSION(1, 2, 0), physical
        )
        assert environment.target_env == "vulkan1.2"
        assert environment.features == {
            "shaderFloat64",
            "shaderInt16",
            "shaderInt8",
            "runtimeDescriptorArray",
            "VK_SUBGROUP_FEATURE_BASIC_BIT",
            "VK_SUBGROUP_FEATURE_BALLOT_BIT",
            "shaderRoundingModeRTEFloat32",
        }
        assert environment.extensions == {"VK_KHR_8bit_storage", "VK_EXT_transform_feedback"}


def test_float_controls_are_not_chained_before_vulkan_1_2() -> None:
    keep: list[Any] = []
    physical = _PhysicalDevice()
    environment = shader_environment(
        _create_info(keep, features2=True), 0, vk.VK_MAKE_VERSION(1, 1, 0), physical
    )
    assert physical.chained == [vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES]
    assert "shaderRoundingModeRTEFloat32" not in environment.features
    assert environment.target_env == "vulkan1.1"


def test_vulkan_1_0_device_queries_no_properties() -> None:
    keep: list[Any] = []
    physical = _PhysicalDevice()
    environment = shader_environment(
        _create_info(keep, features2=False), 0, vk.VK_MAKE_VERSION(1, 0, 0), physical
    )
    assert physical.chained == []
    assert environment.target_env == "vulkan1.0"
    assert "VK_SUBGROUP_FEATURE_BASIC_BIT" not in environment.features


def test_integer_limits_are_recorded_for_the_validator() -> None:
    """Shaders past the device's limits (output Locations, say) are not instrumented: the
    validator needs the limits, integers only (no arrays, no floats)."""
    keep: list[Any] = []
    environment = shader_environment(
        _create_info(keep, features2=True), 0, vk.VK_MAKE_VERSION(1, 2, 0), _PhysicalDevice()
    )
    limits = dict(environment.limits)
    assert limits["maxVertexOutputComponents"] == _PhysicalDevice.MAX_VERTEX_OUTPUT_COMPONENTS
    assert "maxComputeWorkGroupSize" not in limits and "maxSamplerLodBias" not in limits
