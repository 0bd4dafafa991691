"""A small Vulkan app (Python, ``vulkan`` package) that the layer tests run as a subprocess.

It knows nothing of gpuav: the layer is loaded by the loader from the environment. One
compute mode (one region of a storage buffer per dispatch) and one offscreen graphics mode
(draws into a 16x16 image). Prints one JSON object: the reported maxBoundDescriptorSets,
the result data, the messages its debug messenger received and, with --timing, timings.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import vulkan as vk

ffi = vk.ffi
WIDTH = HEIGHT = 16
LOCAL_SIZE = 64
FENCE_TIMEOUT = 60_000_000_000
HOST_MEMORY = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT

messages: list[dict[str, Any]] = []


def on_message(severity: int, types: int, data: Any, user_data: Any) -> int:
    objects = []
    for index in range(data.objectCount):
        item = data.pObjects[index]
        name = ffi.string(item.pObjectName).decode() if item.pObjectName != ffi.NULL else None
        objects.append(
            {"type": int(item.objectType), "handle": int(item.objectHandle), "name": name}
        )
    messages.append(
        {
            "severity": int(severity),
            "id": ffi.string(data.pMessageIdName).decode() if data.pMessageIdName else "",
            "text": ffi.string(data.pMessage).decode(),
            "objects": objects,
        }
    )
    return 0


def on_report(
    flags: int, object_type: int, handle: int, location: int, code: int, prefix: Any,
    text: Any, user_data: Any,
) -> int:  # fmt: skip
    message = text if isinstance(text, str) else ffi.string(text).decode()
    message_id = message[2 : message.index(" ]")] if message.startswith("[ ") else ""
    messages.append(
        {"severity": int(flags), "id": message_id, "text": message, "objects": [],
         "report_callback": True, "object_type": int(object_type)}
    )  # fmt: skip
    return 0


def handle_int(handle: Any) -> int:
    return int(ffi.cast("uintptr_t", handle))


class App:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        self.extra_set_layouts: list[Any] = []
        self._create_instance()
        self._create_device()

    # -- set-up ------------------------------------------------------------------------------

    def _create_instance(self) -> None:
        options = self.options
        major, minor = (int(part) for part in options.api.split("."))
        app_info = vk.VkApplicationInfo(
            pApplicationName="gpuav-test-app", apiVersion=vk.VK_MAKE_VERSION(major, minor, 0)
        )
        available = {e.extensionName for e in vk.vkEnumerateInstanceExtensionProperties(None)}
        extensions = []
        if options.messenger and "VK_EXT_debug_utils" in available:
            extensions.append("VK_EXT_debug_utils")
        if options.report_callback:
            extensions.append("VK_EXT_debug_report")
        next_struct = None
        if options.validation_features:
            enables = [vk.VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT]
            if "reserve" in options.validation_features:
                enables.append(
                    vk.VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_RESERVE_BINDING_SLOT_EXT
                )
            next_struct = vk.VkValidationFeaturesEXT(
                enabledValidationFeatureCount=len(enables), pEnabledValidationFeatures=enables
            )
            extensions.append("VK_EXT_validation_features")
        info = vk.VkInstanceCreateInfo(
            pNext=next_struct,
            pApplicationInfo=app_info,
            enabledExtensionCount=len(extensions),
            ppEnabledExtensionNames=extensions,
            enabledLayerCount=len(options.layer),
            ppEnabledLayerNames=options.layer,
        )
        self.instance = vk.vkCreateInstance(info, None)
        self.report_callback = None
        if options.report_callback:
            create = vk.vkGetInstanceProcAddr(self.instance, "vkCreateDebugReportCallbackEXT")
            self.report_callback = create(
                self.instance,
                vk.VkDebugReportCallbackCreateInfoEXT(
                    flags=vk.VK_DEBUG_REPORT_ERROR_BIT_EXT | vk.VK_DEBUG_REPORT_WARNING_BIT_EXT,
                    pfnCallback=on_report,
                ),
                None,
            )
        self.messenger = None
        if "VK_EXT_debug_utils" in extensions:
            create = vk.vkGetInstanceProcAddr(self.instance, "vkCreateDebugUtilsMessengerEXT")
            self.messenger = create(
                self.instance,
                vk.VkDebugUtilsMessengerCreateInfoEXT(
                    messageSeverity=vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
                    | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT
                    | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT,
                    messageType=vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
                    | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
                    pfnUserCallback=on_message,
                ),
                None,
            )

    def _create_device(self) -> None:
        devices = vk.vkEnumeratePhysicalDevices(self.instance)
        self.physical = next(
            (d for d in devices if "llvmpipe" in vk.vkGetPhysicalDeviceProperties(d).deviceName),
            devices[0],
        )
        properties = vk.vkGetPhysicalDeviceProperties(self.physical)
        self.max_bound_sets = int(properties.limits.maxBoundDescriptorSets)
        self.max_bound_sets2 = None
        if self.options.api != "1.0":
            properties2 = ffi.new("VkPhysicalDeviceProperties2 *")
            properties2.sType = vk.VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2
            vk.vkGetPhysicalDeviceProperties2(self.physical, properties2)
            self.max_bound_sets2 = int(properties2.properties.limits.maxBoundDescriptorSets)
        self.memory = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
        queue_info = vk.VkDeviceQueueCreateInfo(
            queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0]
        )
        # Features are requested either the 1.0 way or through VkPhysicalDeviceFeatures2; the
        # layer must add its two features to either without touching this memory.
        self.features = vk.VkPhysicalDeviceFeatures(shaderInt64=vk.VK_TRUE)
        # Optional feature structures, chained innermost first.
        chained = None
        extensions = []
        if self.options.submit2:
            chained = vk.VkPhysicalDeviceSynchronization2Features(
                pNext=chained, synchronization2=vk.VK_TRUE
            )
        if self.options.draw_command.endswith("_count") or self.options.timeline_wait:
            chained = vk.VkPhysicalDeviceVulkan12Features(
                pNext=chained,
                drawIndirectCount=vk.VK_TRUE if self.options.draw_command.endswith("_count") else 0,
                timelineSemaphore=vk.VK_TRUE if self.options.timeline_wait else 0,
            )
        if self.options.inline_module:
            chained = vk.VkPhysicalDeviceMaintenance5FeaturesKHR(
                pNext=chained, maintenance5=vk.VK_TRUE
            )
            extensions.append("VK_KHR_maintenance5")
        self.chained = chained
        if self.options.features2:
            self.features2 = vk.VkPhysicalDeviceFeatures2(pNext=chained, features=self.features)
            info = vk.VkDeviceCreateInfo(
                pNext=self.features2,
                queueCreateInfoCount=1,
                pQueueCreateInfos=[queue_info],
                enabledExtensionCount=len(extensions),
                ppEnabledExtensionNames=extensions,
            )
        else:
            info = vk.VkDeviceCreateInfo(
                pNext=chained,
                queueCreateInfoCount=1,
                pQueueCreateInfos=[queue_info],
                enabledExtensionCount=len(extensions),
                ppEnabledExtensionNames=extensions,
                pEnabledFeatures=self.features,
            )
        self.device = vk.vkCreateDevice(self.physical, info, None)
        self.queue = vk.vkGetDeviceQueue(self.device, 0, 0)
        self.pool = vk.vkCreateCommandPool(
            self.device,
            vk.VkCommandPoolCreateInfo(
                queueFamilyIndex=0, flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT
            ),
            None,
        )
        self.event = vk.vkCreateEvent(self.device, vk.VkEventCreateInfo(), None)
        self.timeline = None
        self.timeline_value = 0
        if self.options.timeline_wait:
            self.timeline = vk.vkCreateSemaphore(
                self.device,
                vk.VkSemaphoreCreateInfo(
                    pNext=vk.VkSemaphoreTypeCreateInfo(
                        semaphoreType=vk.VK_SEMAPHORE_TYPE_TIMELINE, initialValue=0
                    )
                ),
                None,
            )
        self.set_name = None
        if self.messenger is not None and self.options.names:
            self.set_name = vk.vkGetInstanceProcAddr(self.instance, "vkSetDebugUtilsObjectNameEXT")

    def name(self, object_type: int, handle: Any, name: str) -> None:
        if self.set_name is not None:
            self.set_name(
                self.device,
                vk.VkDebugUtilsObjectNameInfoEXT(
                    objectType=object_type, objectHandle=handle_int(handle), pObjectName=name
                ),
            )

    def memory_type(self, bits: int, flags: int) -> int:
        for index in range(self.memory.memoryTypeCount):
            if (
                bits & (1 << index)
                and self.memory.memoryTypes[index].propertyFlags & flags == flags
            ):
                return index
        raise RuntimeError("no memory type")

    def buffer(self, size: int, usage: int) -> tuple[Any, Any]:
        buffer = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(size=size, usage=usage), None)
        requirements = vk.vkGetBufferMemoryRequirements(self.device, buffer)
        memory = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(
                allocationSize=requirements.size,
                memoryTypeIndex=self.memory_type(requirements.memoryTypeBits, HOST_MEMORY),
            ),
            None,
        )
        vk.vkBindBufferMemory(self.device, buffer, memory, 0)
        return buffer, memory

    def module(self, path: str) -> Any:
        code = Path(path).read_bytes()
        return vk.vkCreateShaderModule(
            self.device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None
        )

    def set_layouts(self, own: Any) -> list[Any]:
        """The app's set 0, plus empty sets up to every slot with --fill-sets."""
        layouts = [own]
        if self.options.fill_sets:
            empty = vk.vkCreateDescriptorSetLayout(
                self.device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=0), None
            )
            self.extra_set_layouts.append(empty)
            layouts += [empty] * (self.max_bound_sets - 1)
        return layouts

    def command_buffers(self, count: int, level: int) -> list[Any]:
        return vk.vkAllocateCommandBuffers(
            self.device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=self.pool, level=level, commandBufferCount=count
            ),
        )

    def submit(self, command_buffer: Any) -> float:
        fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        start = time.perf_counter()
        if self.options.submit2:
            info = vk.VkSubmitInfo2(
                commandBufferInfoCount=1,
                pCommandBufferInfos=[vk.VkCommandBufferSubmitInfo(commandBuffer=command_buffer)],
            )
            vk.vkQueueSubmit2(self.queue, 1, [info], fence)
        elif self.options.timeline_wait:
            # Wait-before-signal: the batch waits for value 1, which the host signals only
            # after vkQueueSubmit returned.
            timeline_info = vk.VkTimelineSemaphoreSubmitInfo(
                waitSemaphoreValueCount=1, pWaitSemaphoreValues=[self.timeline_value + 1]
            )
            vk.vkQueueSubmit(
                self.queue,
                1,
                [
                    vk.VkSubmitInfo(
                        pNext=timeline_info,
                        waitSemaphoreCount=1,
                        pWaitSemaphores=[self.timeline],
                        pWaitDstStageMask=[vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT],
                        commandBufferCount=1,
                        pCommandBuffers=[command_buffer],
                    )
                ],
                fence,
            )
            self.timeline_value += 1
            vk.vkSignalSemaphore(
                self.device,
                vk.VkSemaphoreSignalInfo(semaphore=self.timeline, value=self.timeline_value),
            )
        else:
            vk.vkQueueSubmit(
                self.queue,
                1,
                [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[command_buffer])],
                fence,
            )
        if self.options.host_event:
            vk.vkSetEvent(self.device, self.event)
        vk.vkWaitForFences(self.device, 1, [fence], vk.VK_TRUE, FENCE_TIMEOUT)
        elapsed = time.perf_counter() - start
        vk.vkDestroyFence(self.device, fence, None)
        return elapsed

    # -- graphics ----------------------------------------------------------------------------

    def run_compute(self) -> dict[str, Any]:
        from compute import run_compute  # same folder

        return run_compute(self)

    def run_graphics(self) -> dict[str, Any]:
        from graphics import run_graphics  # same folder

        return run_graphics(self)

    def close(self) -> None:
        vk.vkDestroyEvent(self.device, self.event, None)
        if self.timeline is not None:
            vk.vkDestroySemaphore(self.device, self.timeline, None)
        for layout in self.extra_set_layouts:
            vk.vkDestroyDescriptorSetLayout(self.device, layout, None)
        vk.vkDestroyCommandPool(self.device, self.pool, None)
        vk.vkDestroyDevice(self.device, None)
        if self.messenger is not None:
            destroy = vk.vkGetInstanceProcAddr(self.instance, "vkDestroyDebugUtilsMessengerEXT")
            destroy(self.instance, self.messenger, None)
        if self.report_callback is not None:
            destroy = vk.vkGetInstanceProcAddr(self.instance, "vkDestroyDebugReportCallbackEXT")
            destroy(self.instance, self.report_callback, None)
        vk.vkDestroyInstance(self.instance, None)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=["compute", "graphics"], default="compute")
    parser.add_argument("--shader", help="compute shader .spv")
    parser.add_argument("--vert")
    parser.add_argument("--frag")
    parser.add_argument("--dispatches", type=int, default=4)
    parser.add_argument("--draws", type=int, default=2)
    parser.add_argument(
        "--draw-command",
        choices=[
            "draw",
            "indexed",
            "indirect",
            "indexed_indirect",
            "indirect_count",
            "indexed_indirect_count",
        ],
        default="draw",
    )
    parser.add_argument(
        "--dispatch-command", choices=["dispatch", "indirect", "base"], default="dispatch"
    )
    parser.add_argument("--bad-dispatch", type=int, default=-1)
    parser.add_argument("--bad-index", type=int, default=5)
    parser.add_argument("--bad-draw", type=int, default=-1)
    parser.add_argument("--api", default="1.3")
    parser.add_argument("--layer", action="append", default=[])
    parser.add_argument("--validation-features", default="")
    parser.add_argument("--messenger", action="store_true")
    parser.add_argument("--names", action="store_true")
    parser.add_argument("--fill-sets", action="store_true")
    parser.add_argument("--features2", action="store_true")
    parser.add_argument("--destroy-module-early", action="store_true")
    parser.add_argument("--destroy-layout-early", action="store_true")
    parser.add_argument("--secondary", action="store_true")
    parser.add_argument("--submit2", action="store_true")
    parser.add_argument("--rerecord", action="store_true")
    parser.add_argument("--leak", action="store_true")
    parser.add_argument("--host-event", action="store_true")
    parser.add_argument("--timeline-wait", action="store_true")
    parser.add_argument("--inline-module", action="store_true")
    parser.add_argument("--report-callback", action="store_true")
    parser.add_argument("--repeat", type=int, default=1)
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    options = parse(argv)
    sys.path.insert(0, str(Path(__file__).parent))
    app = App(options)
    result: dict[str, Any] = {
        "max_bound_descriptor_sets": app.max_bound_sets,
        "max_bound_descriptor_sets2": app.max_bound_sets2,
    }
    result.update(app.run_compute() if options.mode == "compute" else app.run_graphics())
    app.close()
    result["messages"] = messages
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
