"""A Python compute program (``vulkan`` package) with a planted bug for the workflow tests.

The shader copies ``items[push.index].value`` (an array of 4 storage buffers, element i holds
100 + i) into a result buffer; ``--index 4`` or more reads past the array. It knows nothing of
gpuav. The dispatch is recorded in ``record_step``, inside debug-utils label regions that
span command buffers and the queue: the queue opens "startup"; a first command buffer opens
"frame 1" and ends; the second opens "shadow pass", dispatches, and closes both. ``run`` is
callable in-process (pytest); run as a script it prints the value read and exits 0.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import vulkan as vk

ffi = vk.ffi
ITEMS = 4
HOST_MEMORY = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
SHADER = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Item { uint value; } items[4];
layout(set = 0, binding = 1) buffer Result { uint word; } result;
layout(push_constant) uniform Push { uint index; } push;
void main() {
    result.word = items[push.index].value;
}
"""


def compile_shader() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        source, output = Path(folder) / "items.comp", Path(folder) / "items.spv"
        source.write_text(SHADER)
        subprocess.run(
            ["glslangValidator", "-V", "-gVS", "-o", str(output), str(source)],
            check=True, capture_output=True,
        )  # fmt: skip
        return output.read_bytes()


class Program:
    def __init__(self) -> None:
        self.instance = vk.vkCreateInstance(
            vk.VkInstanceCreateInfo(
                pApplicationInfo=vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 3, 0)),
                enabledExtensionCount=1,
                ppEnabledExtensionNames=["VK_EXT_debug_utils"],
            ),
            None,
        )
        devices = vk.vkEnumeratePhysicalDevices(self.instance)
        self.physical = next(
            (d for d in devices if "llvmpipe" in vk.vkGetPhysicalDeviceProperties(d).deviceName),
            devices[0],
        )
        self.memory = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
        features = vk.VkPhysicalDeviceFeatures(shaderStorageBufferArrayDynamicIndexing=vk.VK_TRUE)
        queue_info = vk.VkDeviceQueueCreateInfo(
            queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0]
        )
        self.device = vk.vkCreateDevice(
            self.physical,
            vk.VkDeviceCreateInfo(
                queueCreateInfoCount=1, pQueueCreateInfos=[queue_info], pEnabledFeatures=features
            ),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, 0, 0)
        self.pool = vk.vkCreateCommandPool(
            self.device, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None
        )
        self.label = {
            name: vk.vkGetInstanceProcAddr(self.instance, name)
            for name in (
                "vkCmdBeginDebugUtilsLabelEXT",
                "vkCmdEndDebugUtilsLabelEXT",
                "vkQueueBeginDebugUtilsLabelEXT",
                "vkQueueEndDebugUtilsLabelEXT",
            )
        }
        self.buffers: list[tuple[Any, Any]] = []

    def buffer(self, value: int) -> Any:
        buffer = vk.vkCreateBuffer(
            self.device,
            vk.VkBufferCreateInfo(size=16, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT),
            None,
        )
        requirements = vk.vkGetBufferMemoryRequirements(self.device, buffer)
        memory_type = next(
            i
            for i in range(self.memory.memoryTypeCount)
            if requirements.memoryTypeBits & (1 << i)
            and self.memory.memoryTypes[i].propertyFlags & HOST_MEMORY == HOST_MEMORY
        )
        memory = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(allocationSize=requirements.size, memoryTypeIndex=memory_type),
            None,
        )
        vk.vkBindBufferMemory(self.device, buffer, memory, 0)
        mapped = vk.vkMapMemory(self.device, memory, 0, 16, 0)
        mapped[0:4] = int(value).to_bytes(4, "little")
        vk.vkUnmapMemory(self.device, memory)
        self.buffers.append((buffer, memory))
        return buffer

    def read(self, memory: Any) -> int:
        mapped = vk.vkMapMemory(self.device, memory, 0, 4, 0)
        value = int.from_bytes(bytes(mapped[0:4]), "little")
        vk.vkUnmapMemory(self.device, memory)
        return value

    def pipeline(self) -> None:
        binding = [
            vk.VkDescriptorSetLayoutBinding(
                binding=0, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                descriptorCount=ITEMS, stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            ),
            vk.VkDescriptorSetLayoutBinding(
                binding=1, descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                descriptorCount=1, stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            ),
        ]  # fmt: skip
        self.set_layout = vk.vkCreateDescriptorSetLayout(
            self.device,
            vk.VkDescriptorSetLayoutCreateInfo(bindingCount=2, pBindings=binding),
            None,
        )
        self.layout = vk.vkCreatePipelineLayout(
            self.device,
            vk.VkPipelineLayoutCreateInfo(
                setLayoutCount=1,
                pSetLayouts=[self.set_layout],
                pushConstantRangeCount=1,
                pPushConstantRanges=[
                    vk.VkPushConstantRange(
                        stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=4
                    )
                ],
            ),
            None,
        )
        code = compile_shader()
        self.module = vk.vkCreateShaderModule(
            self.device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None
        )
        stage = vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=self.module, pName="main"
        )
        self.compute = vk.vkCreateComputePipelines(
            self.device,
            None,
            1,
            [vk.VkComputePipelineCreateInfo(stage=stage, layout=self.layout)],
            None,
        )[0]
        self.descriptor_pool = vk.vkCreateDescriptorPool(
            self.device,
            vk.VkDescriptorPoolCreateInfo(
                maxSets=1,
                poolSizeCount=1,
                pPoolSizes=[
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=ITEMS + 1
                    )
                ],
            ),
            None,
        )
        self.set = vk.vkAllocateDescriptorSets(
            self.device,
            vk.VkDescriptorSetAllocateInfo(
                descriptorPool=self.descriptor_pool,
                descriptorSetCount=1,
                pSetLayouts=[self.set_layout],
            ),
        )[0]
        items = [
            vk.VkDescriptorBufferInfo(buffer=self.buffer(100 + i), offset=0, range=16)
            for i in range(ITEMS)
        ]
        result = vk.VkDescriptorBufferInfo(buffer=self.buffer(0), offset=0, range=16)
        writes = [
            vk.VkWriteDescriptorSet(
                dstSet=self.set, dstBinding=0, descriptorCount=ITEMS,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, pBufferInfo=items,
            ),
            vk.VkWriteDescriptorSet(
                dstSet=self.set, dstBinding=1, descriptorCount=1,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, pBufferInfo=[result],
            ),
        ]  # fmt: skip
        vk.vkUpdateDescriptorSets(self.device, len(writes), writes, 0, None)

    def begin_label(self, command_buffer: Any, name: str) -> None:
        self.label["vkCmdBeginDebugUtilsLabelEXT"](
            command_buffer, vk.VkDebugUtilsLabelEXT(pLabelName=name)
        )

    def record_step(self, command_buffer: Any, index: int) -> None:
        """Record the dispatch (the recording site the tests expect)."""
        vk.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.compute)
        vk.vkCmdBindDescriptorSets(
            command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, self.layout, 0, 1, [self.set],
            0, None,
        )  # fmt: skip
        push = ffi.new("uint32_t[1]", [index])
        vk.vkCmdPushConstants(
            command_buffer, self.layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, push
        )
        vk.vkCmdDispatch(command_buffer, 1, 1, 1)

    def run(self, index: int) -> int:
        self.pipeline()
        frame, shadow = vk.vkAllocateCommandBuffers(
            self.device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=self.pool,
                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=2,
            ),
        )
        vk.vkBeginCommandBuffer(frame, vk.VkCommandBufferBeginInfo())
        self.begin_label(frame, "frame 1")
        vk.vkEndCommandBuffer(frame)
        vk.vkBeginCommandBuffer(shadow, vk.VkCommandBufferBeginInfo())
        self.begin_label(shadow, "shadow pass")
        self.record_step(shadow, index)
        self.label["vkCmdEndDebugUtilsLabelEXT"](shadow)  # shadow pass
        self.label["vkCmdEndDebugUtilsLabelEXT"](shadow)  # frame 1, begun in the other one
        vk.vkEndCommandBuffer(shadow)
        self.label["vkQueueBeginDebugUtilsLabelEXT"](
            self.queue, vk.VkDebugUtilsLabelEXT(pLabelName="startup")
        )
        submit = vk.VkSubmitInfo(commandBufferCount=2, pCommandBuffers=[frame, shadow])
        vk.vkQueueSubmit(self.queue, 1, [submit], None)
        self.label["vkQueueEndDebugUtilsLabelEXT"](self.queue)
        vk.vkQueueWaitIdle(self.queue)
        return self.read(self.buffers[-1][1])

    def close(self) -> None:
        vk.vkDestroyPipeline(self.device, self.compute, None)
        vk.vkDestroyShaderModule(self.device, self.module, None)
        vk.vkDestroyPipelineLayout(self.device, self.layout, None)
        vk.vkDestroyDescriptorPool(self.device, self.descriptor_pool, None)
        vk.vkDestroyDescriptorSetLayout(self.device, self.set_layout, None)
        for buffer, memory in self.buffers:
            vk.vkDestroyBuffer(self.device, buffer, None)
            vk.vkFreeMemory(self.device, memory, None)
        vk.vkDestroyCommandPool(self.device, self.pool, None)
        vk.vkDestroyDevice(self.device, None)
        vk.vkDestroyInstance(self.instance, None)


def run(index: int) -> int:
    """Run the program once; the value the dispatch read."""
    program = Program()
    try:
        return program.run(index)
    finally:
        program.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--index", type=int, default=1)
    print(run(parser.parse_args(argv).index))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
