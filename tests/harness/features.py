"""Which device features the harness asks for, and how it asks.

Tests for the instrumentation need descriptor indexing in every form, stores from every stage,
64-bit types, extra shader stages and transform feedback; each is enabled when the device
supports it and silently left off otherwise, so a test can ``require`` what it needs. Robustness
features stay off on purpose: they would hide the out-of-bounds behaviour under test.

The chain is built with raw cffi structs (not the ``vulkan`` package's constructors), because the
driver writes into them and we need to read every field back by name.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import vulkan as vkapi

ffi = vkapi.ffi

TRANSFORM_FEEDBACK_EXTENSION = "VK_EXT_transform_feedback"

_DESCRIPTOR_INDEXING_MARKERS = ("Indexing", "descriptorBinding", "runtimeDescriptorArray")

# Per feature struct: the fields we want, or a predicate over the field name.
_WANTED_CORE = {
    "fragmentStoresAndAtomics",
    "vertexPipelineStoresAndAtomics",
    "shaderInt64",
    "shaderInt16",
    "shaderFloat64",
    "geometryShader",
    "tessellationShader",
    "imageCubeArray",
    "multiDrawIndirect",
    "drawIndirectFirstInstance",
    "shaderClipDistance",
    "shaderImageGatherExtended",
    "shaderStorageImageReadWithoutFormat",
    "shaderStorageImageWriteWithoutFormat",
    "shaderUniformBufferArrayDynamicIndexing",
    "shaderSampledImageArrayDynamicIndexing",
    "shaderStorageBufferArrayDynamicIndexing",
    "shaderStorageImageArrayDynamicIndexing",
}
_WANTED_11 = {
    "storageBuffer16BitAccess",
    "uniformAndStorageBuffer16BitAccess",
    "shaderDrawParameters",
}
_WANTED_12 = {
    "storageBuffer8BitAccess",
    "uniformAndStorageBuffer8BitAccess",
    "shaderInt8",
    "shaderFloat16",
    "descriptorIndexing",
    "scalarBlockLayout",
    "bufferDeviceAddress",
    "timelineSemaphore",
    "vulkanMemoryModel",
    "vulkanMemoryModelDeviceScope",
}
_WANTED_13 = {"dynamicRendering", "synchronization2", "maintenance4"}
_WANTED_TRANSFORM_FEEDBACK = {"transformFeedback", "geometryStreams"}


def _wanted_12(name: str) -> bool:
    return name in _WANTED_12 or any(marker in name for marker in _DESCRIPTOR_INDEXING_MARKERS)


@dataclass
class FeatureChain:
    """A ``VkPhysicalDeviceFeatures2`` chain; ``head`` goes into a query or a pNext."""

    with_transform_feedback: bool
    structs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        parts = [
            (
                "VkPhysicalDeviceVulkan11Features",
                vkapi.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
            ),
            (
                "VkPhysicalDeviceVulkan12Features",
                vkapi.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
            ),
            (
                "VkPhysicalDeviceVulkan13Features",
                vkapi.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
            ),
        ]
        if self.with_transform_feedback:
            parts.append(
                (
                    "VkPhysicalDeviceTransformFeedbackFeaturesEXT",
                    vkapi.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_TRANSFORM_FEEDBACK_FEATURES_EXT,
                )
            )
        head = ffi.new("VkPhysicalDeviceFeatures2*")
        head.sType = vkapi.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2
        self.structs["VkPhysicalDeviceFeatures2"] = head
        previous = head
        for type_name, s_type in parts:
            struct = ffi.new(f"{type_name}*")
            struct.sType = s_type
            previous.pNext = struct
            self.structs[type_name] = struct
            previous = struct

    @property
    def head(self) -> Any:
        return self.structs["VkPhysicalDeviceFeatures2"]

    def fields(self) -> Iterator[tuple[str, Any, str]]:
        """(struct name, struct, field name) for every VkBool32 feature in the chain."""
        for type_name, struct in self.structs.items():
            target = struct.features if type_name == "VkPhysicalDeviceFeatures2" else struct
            c_type = ffi.typeof(target)
            if c_type.kind == "pointer":
                c_type = c_type.item
            for name, _ in c_type.fields:
                if name not in ("sType", "pNext"):
                    yield type_name, target, name

    def as_dict(self) -> dict[str, bool]:
        return {name: bool(getattr(target, name)) for _, target, name in self.fields()}


def _is_wanted(type_name: str, name: str) -> bool:
    if type_name == "VkPhysicalDeviceFeatures2":
        return name in _WANTED_CORE
    if type_name == "VkPhysicalDeviceVulkan11Features":
        return name in _WANTED_11
    if type_name == "VkPhysicalDeviceVulkan12Features":
        return _wanted_12(name)
    if type_name == "VkPhysicalDeviceVulkan13Features":
        return name in _WANTED_13
    return name in _WANTED_TRANSFORM_FEEDBACK


def query_features(physical_device: Any, with_transform_feedback: bool) -> dict[str, bool]:
    chain = FeatureChain(with_transform_feedback)
    vkapi.vkGetPhysicalDeviceFeatures2(physical_device, chain.head)
    return chain.as_dict()


def enable_chain(supported: dict[str, bool], with_transform_feedback: bool) -> FeatureChain:
    """A chain with each wanted feature set where ``supported`` says the device has it."""
    chain = FeatureChain(with_transform_feedback)
    for type_name, target, name in chain.fields():
        if _is_wanted(type_name, name) and supported.get(name, False):
            setattr(target, name, vkapi.VK_TRUE)
    return chain
