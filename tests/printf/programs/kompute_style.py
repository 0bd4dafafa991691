"""A Kompute-style compute program: tensors in, one shader that multiplies them and prints
each element from the GPU with debugPrintfEXT, tensors out.

usage: kompute_style.py. Written like Kompute's examples (a manager, tensors, an algorithm,
a sequence that syncs to the device, evaluates and syncs back) on the ``vulkan`` package; it
prints the output tensor as JSON on its last line. Knows nothing of gpuav.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import vulkan as vk

SHADER = """#version 450
#extension GL_EXT_debug_printf : require
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer A { float a[]; };
layout(set = 0, binding = 1) buffer B { float b[]; };
layout(set = 0, binding = 2) buffer Out { float result[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    result[i] = a[i] * b[i];
    debugPrintfEXT("element %u: %.1f * %.1f = %.2f", i, a[i], b[i], result[i]);
}
"""
HOST = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT


def compile_source(source: str) -> bytes:
    """GLSL to SPIR-V, as Kompute's compile_source does with glslangValidator."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "shader.comp"
        path.write_text(source)
        subprocess.run(
            ["glslangValidator", "-V", "-o", f"{path}.spv", str(path)],
            check=True,
            capture_output=True,
        )
        return Path(f"{path}.spv").read_bytes()


class Manager:
    def __init__(self) -> None:
        info = vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 1, 0))
        self.instance = vk.vkCreateInstance(vk.VkInstanceCreateInfo(pApplicationInfo=info), None)
        self.physical = vk.vkEnumeratePhysicalDevices(self.instance)[0]
        self.memory = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
        queue = vk.VkDeviceQueueCreateInfo(queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0])
        self.device = vk.vkCreateDevice(
            self.physical,
            vk.VkDeviceCreateInfo(
                queueCreateInfoCount=1,
                pQueueCreateInfos=[queue],
                enabledExtensionCount=1,
                ppEnabledExtensionNames=["VK_KHR_shader_non_semantic_info"],
            ),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, 0, 0)

    def tensor(self, values: list[float]) -> Tensor:
        return Tensor(self, values)


class Tensor:
    def __init__(self, manager: Manager, values: list[float]) -> None:
        device = manager.device
        self.size = 4 * len(values)
        self.buffer = vk.vkCreateBuffer(
            device,
            vk.VkBufferCreateInfo(size=self.size, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT),
            None,
        )
        needs = vk.vkGetBufferMemoryRequirements(device, self.buffer)
        kinds = manager.memory.memoryTypes
        index = next(
            k
            for k in range(manager.memory.memoryTypeCount)
            if needs.memoryTypeBits >> k & 1 and kinds[k].propertyFlags & HOST == HOST
        )
        self.memory = vk.vkAllocateMemory(
            device, vk.VkMemoryAllocateInfo(allocationSize=needs.size, memoryTypeIndex=index), None
        )
        vk.vkBindBufferMemory(device, self.buffer, self.memory, 0)
        self.mapped = vk.vkMapMemory(device, self.memory, 0, self.size, 0)
        self.mapped[:] = struct.pack(f"<{len(values)}f", *values)

    def data(self) -> list[float]:
        return list(struct.unpack(f"<{self.size // 4}f", bytes(self.mapped[: self.size])))


def run_algorithm(manager: Manager, tensors: list[Tensor], spirv: bytes) -> None:
    """Kompute's algorithm + sequence: bind the tensors, dispatch one invocation each, wait."""
    device = manager.device
    bindings = [
        vk.VkDescriptorSetLayoutBinding(
            binding=k,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            descriptorCount=1,
            stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
        )
        for k in range(len(tensors))
    ]
    set_layout = vk.vkCreateDescriptorSetLayout(
        device,
        vk.VkDescriptorSetLayoutCreateInfo(bindingCount=len(bindings), pBindings=bindings),
        None,
    )
    layout = vk.vkCreatePipelineLayout(
        device, vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[set_layout]), None
    )
    module = vk.vkCreateShaderModule(
        device, vk.VkShaderModuleCreateInfo(codeSize=len(spirv), pCode=spirv), None
    )
    stage = vk.VkPipelineShaderStageCreateInfo(
        stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main"
    )
    info = vk.VkComputePipelineCreateInfo(stage=stage, layout=layout)
    pipeline = vk.vkCreateComputePipelines(device, None, 1, [info], None)[0]
    size = vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=8)
    pool = vk.vkCreateDescriptorPool(
        device, vk.VkDescriptorPoolCreateInfo(maxSets=1, poolSizeCount=1, pPoolSizes=[size]), None
    )
    descriptor_set = vk.vkAllocateDescriptorSets(
        device,
        vk.VkDescriptorSetAllocateInfo(
            descriptorPool=pool, descriptorSetCount=1, pSetLayouts=[set_layout]
        ),
    )[0]
    infos = [vk.VkDescriptorBufferInfo(buffer=t.buffer, offset=0, range=t.size) for t in tensors]
    writes = [
        vk.VkWriteDescriptorSet(
            dstSet=descriptor_set,
            dstBinding=k,
            descriptorCount=1,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            pBufferInfo=[infos[k]],
        )
        for k in range(len(tensors))
    ]
    vk.vkUpdateDescriptorSets(device, len(writes), writes, 0, None)
    command_pool = vk.vkCreateCommandPool(
        device, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None
    )
    command_buffer = vk.vkAllocateCommandBuffers(
        device,
        vk.VkCommandBufferAllocateInfo(
            commandPool=command_pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY, commandBufferCount=1
        ),
    )[0]
    vk.vkBeginCommandBuffer(command_buffer, vk.VkCommandBufferBeginInfo())
    vk.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
    vk.vkCmdBindDescriptorSets(
        command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, [descriptor_set], 0, None
    )
    vk.vkCmdDispatch(command_buffer, tensors[0].size // 4, 1, 1)
    vk.vkEndCommandBuffer(command_buffer)
    submit = vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[command_buffer])
    vk.vkQueueSubmit(manager.queue, 1, [submit], None)
    vk.vkQueueWaitIdle(manager.queue)
    kept: list[Any] = [pipeline, module, pool, command_pool]
    del kept


def main() -> int:
    manager = Manager()
    a = manager.tensor([2.0, 4.0, 6.0])
    b = manager.tensor([0.5, 1.5, 2.5])
    out = manager.tensor([0.0, 0.0, 0.0])
    run_algorithm(manager, [a, b, out], compile_source(SHADER))
    print(json.dumps(out.data()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
