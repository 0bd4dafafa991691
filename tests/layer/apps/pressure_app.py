"""A compute app that runs out of device memory on purpose, then keeps working (issue 13).

On lavapipe device memory is host memory, so the app caps its own address space
(``RLIMIT_AS``) at what it uses after creating its pipeline plus ``--headroom-mib``, fills
that headroom with device memory, ``--fill-step-mib`` at a time, until ``vkAllocateMemory``
fails, gives back ``--reserve-mib`` of it, and then records and submits ``--rounds``
command buffers of ``--dispatches`` dispatches each. A correct app copes with the
out-of-memory results it gets (it records them and stops that round); a layer must not turn
them into a crash.

Prints one JSON object: the data's hash, the bytes filled, the errors the app saw, and the
messages its debug messenger received (with ``--messenger``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
from pathlib import Path
from typing import Any

import vulkan as vk

ffi = vk.ffi
LOCAL_SIZE = 64
FENCE_TIMEOUT = 60_000_000_000
HOST_MEMORY = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT

messages: list[dict[str, Any]] = []


def on_message(severity: int, types: int, data: Any, user_data: Any) -> int:
    messages.append(
        {
            "severity": int(severity),
            "id": ffi.string(data.pMessageIdName).decode() if data.pMessageIdName else "",
            "text": ffi.string(data.pMessage).decode(),
        }
    )
    return 0


def address_space_bytes() -> int:
    """The process's current virtual size (``VmSize`` of /proc/self/status)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


class PressureApp:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        extensions = ["VK_EXT_debug_utils"] if options.messenger else []
        self.instance = vk.vkCreateInstance(
            vk.VkInstanceCreateInfo(
                pApplicationInfo=vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 3, 0)),
                enabledExtensionCount=len(extensions),
                ppEnabledExtensionNames=extensions,
            ),
            None,
        )
        self.messenger = None
        if options.messenger:
            create = vk.vkGetInstanceProcAddr(self.instance, "vkCreateDebugUtilsMessengerEXT")
            self.messenger = create(
                self.instance,
                vk.VkDebugUtilsMessengerCreateInfoEXT(
                    messageSeverity=vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
                    | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT
                    | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT,
                    messageType=vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
                    pfnUserCallback=on_message,
                ),
                None,
            )
        self.physical = vk.vkEnumeratePhysicalDevices(self.instance)[0]
        self.memory_properties = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
        queue = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0])
        self.device = vk.vkCreateDevice(
            self.physical,
            vk.VkDeviceCreateInfo(queueCreateInfoCount=1, pQueueCreateInfos=[queue]),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, 0, 0)
        self.pool = vk.vkCreateCommandPool(
            self.device, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None
        )
        self.errors: list[str] = []
        self.filled: list[Any] = []

    def memory_type(self, bits: int, flags: int) -> int:
        for index in range(self.memory_properties.memoryTypeCount):
            type_flags = self.memory_properties.memoryTypes[index].propertyFlags
            if bits & (1 << index) and type_flags & flags == flags:
                return index
        raise RuntimeError("no memory type")

    def make_pipeline(self, shader: Path, size: int) -> None:
        device = self.device
        usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
        self.buffer = vk.vkCreateBuffer(device, vk.VkBufferCreateInfo(size=size, usage=usage), None)
        requirements = vk.vkGetBufferMemoryRequirements(device, self.buffer)
        self.memory = vk.vkAllocateMemory(
            device,
            vk.VkMemoryAllocateInfo(
                allocationSize=requirements.size,
                memoryTypeIndex=self.memory_type(requirements.memoryTypeBits, HOST_MEMORY),
            ),
            None,
        )
        vk.vkBindBufferMemory(device, self.buffer, self.memory, 0)
        self.mapped = vk.vkMapMemory(device, self.memory, 0, size, 0)
        self.mapped[:] = b"".join((i * 7 + 3).to_bytes(4, "little") for i in range(size // 4))
        binding = vk.VkDescriptorSetLayoutBinding(
            binding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=1,
            stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
        )  # fmt: skip
        self.set_layout = vk.vkCreateDescriptorSetLayout(
            device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=1, pBindings=[binding]), None
        )
        push = vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=8)
        self.layout = vk.vkCreatePipelineLayout(
            device,
            vk.VkPipelineLayoutCreateInfo(
                setLayoutCount=1, pSetLayouts=[self.set_layout], pushConstantRangeCount=1,
                pPushConstantRanges=[push],
            ),
            None,
        )  # fmt: skip
        code = shader.read_bytes()
        module = vk.vkCreateShaderModule(
            device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None
        )
        stage = vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main"
        )
        self.pipeline = vk.vkCreateComputePipelines(
            device, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=self.layout)],
            None,
        )[0]  # fmt: skip
        vk.vkDestroyShaderModule(device, module, None)
        pool_size = vk.VkDescriptorPoolSize(
            type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=1
        )
        self.descriptor_pool = vk.vkCreateDescriptorPool(
            device,
            vk.VkDescriptorPoolCreateInfo(maxSets=1, poolSizeCount=1, pPoolSizes=[pool_size]),
            None,
        )
        self.descriptor_set = vk.vkAllocateDescriptorSets(
            device,
            vk.VkDescriptorSetAllocateInfo(
                descriptorPool=self.descriptor_pool, descriptorSetCount=1,
                pSetLayouts=[self.set_layout],
            ),
        )[0]  # fmt: skip
        info = vk.VkDescriptorBufferInfo(buffer=self.buffer, offset=0, range=size)
        write = vk.VkWriteDescriptorSet(
            dstSet=self.descriptor_set, dstBinding=0, descriptorCount=1,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, pBufferInfo=[info],
        )  # fmt: skip
        vk.vkUpdateDescriptorSets(device, 1, [write], 0, None)

    def fill_device_memory(self, type_index: int, step: int) -> int:
        """Allocate ``step`` bytes at a time until vkAllocateMemory fails. Steps of a few MiB
        leave the driver room for its own small allocations: at the very edge lavapipe's
        vkAllocateMemory itself crashes, with or without a layer."""
        total = 0
        info = vk.VkMemoryAllocateInfo(allocationSize=step, memoryTypeIndex=type_index)
        while True:
            try:
                self.filled.append((vk.vkAllocateMemory(self.device, info, None), step))
            except (vk.VkErrorOutOfDeviceMemory, vk.VkErrorOutOfHostMemory, MemoryError) as error:
                self.errors.append(f"fill: {type(error).__name__}")
                return total
            total += step

    def give_back(self, wanted: int) -> None:
        """Free fill allocations until ``wanted`` bytes are free again."""
        freed = 0
        while self.filled and freed < wanted:
            memory, size = self.filled.pop()
            vk.vkFreeMemory(self.device, memory, None)
            freed += size

    def run_round(self, dispatches: int) -> None:
        """Record, submit and wait; a Vulkan error ends the round and is remembered."""
        device = self.device
        command_buffer = None
        try:
            command_buffer = vk.vkAllocateCommandBuffers(
                device,
                vk.VkCommandBufferAllocateInfo(
                    commandPool=self.pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                    commandBufferCount=1,
                ),
            )[0]  # fmt: skip
            vk.vkBeginCommandBuffer(command_buffer, vk.VkCommandBufferBeginInfo())
            vk.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.pipeline)
            vk.vkCmdBindDescriptorSets(
                command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.layout, 0, 1,
                [self.descriptor_set], 0, None,
            )  # fmt: skip
            push = ffi.new("uint32_t[2]")
            for index in range(dispatches):
                push[0] = index * LOCAL_SIZE
                vk.vkCmdPushConstants(
                    command_buffer, self.layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, push
                )
                vk.vkCmdDispatch(command_buffer, 1, 1, 1)
            vk.vkEndCommandBuffer(command_buffer)
            fence = vk.vkCreateFence(device, vk.VkFenceCreateInfo(), None)
            try:
                submit = vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[command_buffer])
                vk.vkQueueSubmit(self.queue, 1, [submit], fence)
                vk.vkWaitForFences(device, 1, [fence], vk.VK_TRUE, FENCE_TIMEOUT)
            finally:
                vk.vkDestroyFence(device, fence, None)
        except (vk.VkError, MemoryError) as error:
            self.errors.append(f"round: {type(error).__name__}")
        finally:
            if command_buffer is not None:
                vk.vkFreeCommandBuffers(device, self.pool, 1, [command_buffer])

    def close(self) -> None:
        device = self.device
        for memory, _ in self.filled:
            vk.vkFreeMemory(device, memory, None)
        vk.vkUnmapMemory(device, self.memory)
        vk.vkDestroyPipeline(device, self.pipeline, None)
        vk.vkDestroyPipelineLayout(device, self.layout, None)
        vk.vkDestroyDescriptorPool(device, self.descriptor_pool, None)
        vk.vkDestroyDescriptorSetLayout(device, self.set_layout, None)
        vk.vkDestroyBuffer(device, self.buffer, None)
        vk.vkFreeMemory(device, self.memory, None)
        vk.vkDestroyCommandPool(device, self.pool, None)
        vk.vkDestroyDevice(device, None)
        if self.messenger is not None:
            destroy = vk.vkGetInstanceProcAddr(self.instance, "vkDestroyDebugUtilsMessengerEXT")
            destroy(self.instance, self.messenger, None)
        vk.vkDestroyInstance(self.instance, None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("shader", type=Path, help="compute shader .spv (region_array.comp)")
    parser.add_argument("--dispatches", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--headroom-mib", type=int, default=0, help="0: no limit, no fill")
    parser.add_argument("--fill-step-mib", type=int, default=8)
    parser.add_argument("--reserve-mib", type=int, default=0)
    parser.add_argument("--messenger", action="store_true")
    options = parser.parse_args(argv)
    app = PressureApp(options)
    size = options.dispatches * LOCAL_SIZE * 4
    app.make_pipeline(options.shader, size)
    filled = 0
    if options.headroom_mib:
        limit = address_space_bytes() + (options.headroom_mib << 20)
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.RLIM_INFINITY))
        requirements = vk.vkGetBufferMemoryRequirements(app.device, app.buffer)
        memory_type = app.memory_type(requirements.memoryTypeBits, HOST_MEMORY)
        filled = app.fill_device_memory(memory_type, options.fill_step_mib << 20)
        app.give_back(options.reserve_mib << 20)
    for _ in range(options.rounds):
        app.run_round(options.dispatches)
    app.give_back(filled)
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    data = bytes(app.mapped[:size])
    app.close()
    result = {
        "data_sha256": hashlib.sha256(data).hexdigest(),
        "filled_bytes": filled,
        "errors": app.errors,
        "messages": messages,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
