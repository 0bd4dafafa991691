"""GPU time of issue 17's compute kernel (shaders/indexed_fetches.comp), as a separate process.

1M invocations (16,384 workgroups of 64), each making 64 fetches from a runtime array of 8
storage buffers by indices read from a uniform buffer. Every dispatch sits between two
timestamp queries in its own submission; prints one JSON line with each dispatch's GPU time
in milliseconds and the result's checksum (the same with and without a layer, or the layer
changed what the shader computes). It knows nothing of gpuav: the loader brings the layer.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import vulkan as vk

ffi = vk.ffi
HOST_MEMORY = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
WORKGROUPS = 16_384
INVOCATIONS = WORKGROUPS * 64
SOURCES = 8
SOURCE_WORDS = 4096
FENCE_TIMEOUT = 120_000_000_000


class Kernel:
    # VK_TRUE where the kernel reaches its buffers by device address (bda_loops_app.py).
    buffer_device_address = vk.VK_FALSE

    def __init__(self, shader: bytes) -> None:
        self.instance = vk.vkCreateInstance(
            vk.VkInstanceCreateInfo(
                pApplicationInfo=vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 2, 0))
            ),
            None,
        )
        self.physical = vk.vkEnumeratePhysicalDevices(self.instance)[0]
        properties = vk.vkGetPhysicalDeviceProperties(self.physical)
        self.device_name = properties.deviceName
        self.tick_ns = float(properties.limits.timestampPeriod)
        self.memory = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
        features12 = vk.VkPhysicalDeviceVulkan12Features(
            runtimeDescriptorArray=vk.VK_TRUE,
            shaderStorageBufferArrayNonUniformIndexing=vk.VK_TRUE,
            bufferDeviceAddress=self.buffer_device_address,
        )
        features = vk.VkPhysicalDeviceFeatures2(
            pNext=features12,
            features=vk.VkPhysicalDeviceFeatures(shaderStorageBufferArrayDynamicIndexing=1),
        )
        queue = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0])
        self.device = vk.vkCreateDevice(
            self.physical,
            vk.VkDeviceCreateInfo(
                pNext=features, queueCreateInfoCount=1, pQueueCreateInfos=[queue]
            ),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, 0, 0)
        self.pool = vk.vkCreateCommandPool(
            self.device, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None
        )
        self._buffers(shader)

    def _buffer(self, words: list[int], usage: int) -> Any:
        size = 4 * len(words)
        buffer = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(size=size, usage=usage), None)
        requirements = vk.vkGetBufferMemoryRequirements(self.device, buffer)
        index = next(
            k
            for k in range(self.memory.memoryTypeCount)
            if requirements.memoryTypeBits & (1 << k)
            and self.memory.memoryTypes[k].propertyFlags & HOST_MEMORY == HOST_MEMORY
        )
        memory = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(allocationSize=requirements.size, memoryTypeIndex=index),
            None,
        )
        vk.vkBindBufferMemory(self.device, buffer, memory, 0)
        mapped = vk.vkMapMemory(self.device, memory, 0, size, 0)
        ffi.memmove(mapped, ffi.new("uint32_t[]", words), size)
        vk.vkUnmapMemory(self.device, memory)
        self.result_memory = memory
        return buffer

    def _buffers(self, shader: bytes) -> None:
        storage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
        # Each uvec4 of the uniform block holds 4 indices (std140: 16 bytes per element).
        indices = self._buffer(
            [(k * 5 + 3) % SOURCES for k in range(64)], vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT
        )
        sources = [
            self._buffer([s * 100_000 + w for w in range(SOURCE_WORDS)], storage)
            for s in range(SOURCES)
        ]
        self.result = self._buffer([0] * INVOCATIONS, storage)
        bindings = [
            vk.VkDescriptorSetLayoutBinding(
                binding=0,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
                descriptorCount=1,
                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            ),
            vk.VkDescriptorSetLayoutBinding(
                binding=1,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                descriptorCount=SOURCES,
                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            ),
            vk.VkDescriptorSetLayoutBinding(
                binding=2,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                descriptorCount=1,
                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            ),
        ]
        set_layout = vk.vkCreateDescriptorSetLayout(
            self.device,
            vk.VkDescriptorSetLayoutCreateInfo(bindingCount=3, pBindings=bindings),
            None,
        )
        pool = vk.vkCreateDescriptorPool(
            self.device,
            vk.VkDescriptorPoolCreateInfo(
                maxSets=1,
                poolSizeCount=2,
                pPoolSizes=[
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, descriptorCount=1
                    ),
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=SOURCES + 1
                    ),
                ],
            ),
            None,
        )
        self.set = vk.vkAllocateDescriptorSets(
            self.device,
            vk.VkDescriptorSetAllocateInfo(
                descriptorPool=pool, descriptorSetCount=1, pSetLayouts=[set_layout]
            ),
        )[0]

        def info(buffer: Any) -> Any:
            return vk.VkDescriptorBufferInfo(buffer=buffer, offset=0, range=0xFFFF_FFFF_FFFF_FFFF)

        writes = [
            vk.VkWriteDescriptorSet(
                dstSet=self.set, dstBinding=0, descriptorCount=1,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, pBufferInfo=[info(indices)],
            ),
            vk.VkWriteDescriptorSet(
                dstSet=self.set, dstBinding=1, descriptorCount=SOURCES,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                pBufferInfo=[info(s) for s in sources],
            ),
            vk.VkWriteDescriptorSet(
                dstSet=self.set, dstBinding=2, descriptorCount=1,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                pBufferInfo=[info(self.result)],
            ),
        ]  # fmt: skip
        vk.vkUpdateDescriptorSets(self.device, len(writes), writes, 0, None)
        self.layout = vk.vkCreatePipelineLayout(
            self.device,
            vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[set_layout]),
            None,
        )
        module = vk.vkCreateShaderModule(
            self.device, vk.VkShaderModuleCreateInfo(codeSize=len(shader), pCode=shader), None
        )
        stage = vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main"
        )
        self.pipeline = vk.vkCreateComputePipelines(
            self.device,
            None,
            1,
            [vk.VkComputePipelineCreateInfo(stage=stage, layout=self.layout)],
            None,
        )[0]
        self.queries = vk.vkCreateQueryPool(
            self.device,
            vk.VkQueryPoolCreateInfo(queryType=vk.VK_QUERY_TYPE_TIMESTAMP, queryCount=2),
            None,
        )

    def dispatch_ms(self) -> float:
        command = vk.vkAllocateCommandBuffers(
            self.device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=self.pool,
                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=1,
            ),
        )[0]
        vk.vkBeginCommandBuffer(command, vk.VkCommandBufferBeginInfo())
        vk.vkCmdResetQueryPool(command, self.queries, 0, 2)
        vk.vkCmdBindPipeline(command, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.pipeline)
        vk.vkCmdBindDescriptorSets(
            command, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.layout, 0, 1, [self.set], 0, None
        )
        vk.vkCmdWriteTimestamp(command, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, self.queries, 0)
        vk.vkCmdDispatch(command, WORKGROUPS, 1, 1)
        vk.vkCmdWriteTimestamp(command, vk.VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, self.queries, 1)
        vk.vkEndCommandBuffer(command)
        fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        vk.vkQueueSubmit(
            self.queue, 1, [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[command])], fence
        )
        vk.vkWaitForFences(self.device, 1, [fence], vk.VK_TRUE, FENCE_TIMEOUT)
        vk.vkDestroyFence(self.device, fence, None)
        stamps = ffi.new("uint64_t[2]")
        vk.vkGetQueryPoolResults(
            self.device, self.queries, 0, 2, 16, stamps, 8,
            vk.VK_QUERY_RESULT_64_BIT | vk.VK_QUERY_RESULT_WAIT_BIT,
        )  # fmt: skip
        vk.vkFreeCommandBuffers(self.device, self.pool, 1, [command])
        return (stamps[1] - stamps[0]) * self.tick_ns / 1e6

    def checksum(self) -> int:
        mapped = vk.vkMapMemory(self.device, self.result_memory, 0, 4 * INVOCATIONS, 0)
        words = ffi.cast("uint32_t *", ffi.from_buffer(mapped))
        total = sum(words[k] for k in range(0, INVOCATIONS, 997))
        vk.vkUnmapMemory(self.device, self.result_memory)
        return total


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("shader", help="the SPIR-V of shaders/indexed_fetches.comp")
    parser.add_argument("--dispatches", type=int, default=20)
    options = parser.parse_args(argv)
    with open(options.shader, "rb") as handle:
        kernel = Kernel(handle.read())
    times = [kernel.dispatch_ms() for _ in range(options.dispatches)]
    print(json.dumps({"device": kernel.device_name, "ms": times, "checksum": kernel.checksum()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
