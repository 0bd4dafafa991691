"""The small slice of Vulkan the demo needs: a device, mapped buffers, 1x1 textures, submits.

Written like an ordinary application with PyPI's `vulkan` package: nothing here knows about
gpuav, which reaches the app only through the Vulkan loader.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import vulkan as vk

ffi = vk.ffi
FENCE_TIMEOUT_NS = 30_000_000_000


class Device:
    """Instance, device, queue, command pool, and a debug messenger that prints messages."""

    def __init__(self, application: str) -> None:
        self.messages: list[str] = []
        extensions = ["VK_EXT_debug_utils"]
        app_info = vk.VkApplicationInfo(
            pApplicationName=application, apiVersion=vk.VK_MAKE_VERSION(1, 3, 0)
        )
        self.instance = vk.vkCreateInstance(
            vk.VkInstanceCreateInfo(pApplicationInfo=app_info, ppEnabledExtensionNames=extensions),
            None,
        )
        self._messenger = self._create_messenger()
        self.physical_device = _pick_device(self.instance)
        self.name = vk.vkGetPhysicalDeviceProperties(self.physical_device).deviceName
        self.memory = vk.vkGetPhysicalDeviceMemoryProperties(self.physical_device)
        families = vk.vkGetPhysicalDeviceQueueFamilyProperties(self.physical_device)
        wanted = vk.VK_QUEUE_GRAPHICS_BIT | vk.VK_QUEUE_COMPUTE_BIT
        self.family = next(i for i, f in enumerate(families) if f.queueFlags & wanted == wanted)
        dynamic_rendering = vk.VkPhysicalDeviceVulkan13Features(dynamicRendering=vk.VK_TRUE)
        self.device = vk.vkCreateDevice(
            self.physical_device,
            vk.VkDeviceCreateInfo(
                pNext=dynamic_rendering,
                pQueueCreateInfos=[
                    vk.VkDeviceQueueCreateInfo(
                        queueFamilyIndex=self.family, queueCount=1, pQueuePriorities=[1.0]
                    )
                ],
            ),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, self.family, 0)
        self.pool = vk.vkCreateCommandPool(
            self.device, vk.VkCommandPoolCreateInfo(queueFamilyIndex=self.family), None
        )
        self._destroyers: list[Callable[[], None]] = []

    def _create_messenger(self) -> Any:
        """Print every warning and error, as applications do with their debug messenger."""

        def on_message(_severity: int, _types: int, data: Any, _user: Any) -> int:
            text = ffi.string(data.pMessage).decode("utf-8", "replace")
            self.messages.append(text)
            print(text, flush=True)
            return int(vk.VK_FALSE)

        self._callback = ffi.callback("PFN_vkDebugUtilsMessengerCallbackEXT", on_message)
        info = ffi.new("VkDebugUtilsMessengerCreateInfoEXT*")
        info.sType = vk.VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT
        info.messageSeverity = (
            vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT
        )
        info.messageType = (
            vk.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
        )
        info.pfnUserCallback = self._callback
        create = vk.vkGetInstanceProcAddr(self.instance, "vkCreateDebugUtilsMessengerEXT")
        self._destroy_messenger = vk.vkGetInstanceProcAddr(
            self.instance, "vkDestroyDebugUtilsMessengerEXT"
        )
        self._set_name = vk.vkGetInstanceProcAddr(self.instance, "vkSetDebugUtilsObjectNameEXT")
        return create(self.instance, info[0], None)

    def set_name(self, object_type: int, handle: Any, name: str) -> None:
        """Name an object so that messages about it say which one it is."""
        raw = ffi.cast("uint64_t", ffi.cast("void*", handle)) if handle is not None else 0
        self._set_name(
            self.device,
            vk.VkDebugUtilsObjectNameInfoEXT(
                objectType=object_type, objectHandle=int(raw), pObjectName=name
            ),
        )

    def memory_type(self, bits: int, flags: int) -> int:
        return next(
            i
            for i in range(self.memory.memoryTypeCount)
            if bits & (1 << i) and self.memory.memoryTypes[i].propertyFlags & flags == flags
        )

    def buffer(self, size: int, usage: int) -> tuple[Any, Any]:
        """A host-visible, coherent buffer and its mapped bytes."""
        handle = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(size=size, usage=usage), None)
        needs = vk.vkGetBufferMemoryRequirements(self.device, handle)
        flags = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        memory = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(
                allocationSize=needs.size,
                memoryTypeIndex=self.memory_type(needs.memoryTypeBits, flags),
            ),
            None,
        )
        vk.vkBindBufferMemory(self.device, handle, memory, 0)
        mapped = vk.vkMapMemory(self.device, memory, 0, size, 0)
        self._destroyers.append(lambda: vk.vkDestroyBuffer(self.device, handle, None))
        self._destroyers.append(lambda: vk.vkFreeMemory(self.device, memory, None))
        return handle, mapped

    def image(self, width: int, height: int, usage: int) -> tuple[Any, Any]:
        """An RGBA8 image in device memory and a view of it."""
        handle = vk.vkCreateImage(
            self.device,
            vk.VkImageCreateInfo(
                imageType=vk.VK_IMAGE_TYPE_2D,
                format=vk.VK_FORMAT_R8G8B8A8_UNORM,
                extent=vk.VkExtent3D(width=width, height=height, depth=1),
                mipLevels=1,
                arrayLayers=1,
                samples=vk.VK_SAMPLE_COUNT_1_BIT,
                tiling=vk.VK_IMAGE_TILING_OPTIMAL,
                usage=usage,
                initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
            ),
            None,
        )
        needs = vk.vkGetImageMemoryRequirements(self.device, handle)
        memory = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(
                allocationSize=needs.size,
                memoryTypeIndex=self.memory_type(
                    needs.memoryTypeBits, vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
                ),
            ),
            None,
        )
        vk.vkBindImageMemory(self.device, handle, memory, 0)
        view = vk.vkCreateImageView(
            self.device,
            vk.VkImageViewCreateInfo(
                image=handle,
                viewType=vk.VK_IMAGE_VIEW_TYPE_2D,
                format=vk.VK_FORMAT_R8G8B8A8_UNORM,
                subresourceRange=COLOR_RANGE,
            ),
            None,
        )
        self._destroyers.append(lambda: vk.vkDestroyImage(self.device, handle, None))
        self._destroyers.append(lambda: vk.vkFreeMemory(self.device, memory, None))
        self._destroyers.append(lambda: vk.vkDestroyImageView(self.device, view, None))
        return handle, view

    def run(self, record: Callable[[Any], None], name: str) -> None:
        """Record a command buffer, submit it and wait for it."""
        command_buffer = vk.vkAllocateCommandBuffers(
            self.device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=self.pool,
                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=1,
            ),
        )[0]
        self.set_name(vk.VK_OBJECT_TYPE_COMMAND_BUFFER, command_buffer, name)
        vk.vkBeginCommandBuffer(command_buffer, vk.VkCommandBufferBeginInfo())
        record(command_buffer)
        vk.vkEndCommandBuffer(command_buffer)
        fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        vk.vkQueueSubmit(self.queue, 1, [vk.VkSubmitInfo(pCommandBuffers=[command_buffer])], fence)
        vk.vkWaitForFences(self.device, 1, [fence], vk.VK_TRUE, FENCE_TIMEOUT_NS)
        vk.vkDestroyFence(self.device, fence, None)
        vk.vkFreeCommandBuffers(self.device, self.pool, 1, [command_buffer])

    def defer(self, destroy: Callable[[], None]) -> None:
        self._destroyers.append(destroy)

    def close(self) -> None:
        vk.vkDeviceWaitIdle(self.device)
        for destroy in reversed(self._destroyers):
            destroy()
        vk.vkDestroyCommandPool(self.device, self.pool, None)
        vk.vkDestroyDevice(self.device, None)
        self._destroy_messenger(self.instance, self._messenger, None)
        vk.vkDestroyInstance(self.instance, None)


COLOR_RANGE = vk.VkImageSubresourceRange(
    aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT,
    baseMipLevel=0,
    levelCount=1,
    baseArrayLayer=0,
    layerCount=1,
)


def _pick_device(instance: Any) -> Any:
    """The CPU device (lavapipe) when there is one, so the demo runs the same everywhere."""
    devices = vk.vkEnumeratePhysicalDevices(instance)
    for device in devices:
        properties = vk.vkGetPhysicalDeviceProperties(device)
        if properties.deviceType == vk.VK_PHYSICAL_DEVICE_TYPE_CPU:
            return device
    return devices[0]
