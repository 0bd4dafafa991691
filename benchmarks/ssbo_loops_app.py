"""GPU time of issue 14's storage-buffer kernel (shaders/ssbo_loops.comp), as a separate process.

1M invocations (16,384 workgroups of 64), each running 64 iterations of a hashed load from a
4 MiB storage buffer and a store to its own word of another (a third, small buffer is where the
hand-checked models of shaders/ssbo_loops_models.comp report a failure). The device, submissions and
timestamps are those of ``shader_time_app.Kernel``; only the buffers and the set differ. The
buffers live in device-local memory that the host can map where the device has such memory (a
kernel reading host memory over the bus would time the bus, not the checks). Prints one JSON
line with each dispatch's GPU time in milliseconds and a hash of the whole result buffer.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from typing import Any

import vulkan as vk

from benchmarks.shader_time_app import HOST_MEMORY, INVOCATIONS, Kernel, ffi

DATA_WORDS = 1 << 20
REPORT_WORDS = 4  # binding 2: where the hand-checked models report (ssbo_loops.comp has none)
DEVICE_LOCAL = vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT


def data_word(k: int) -> int:
    """A value for every word that no two layouts of the buffer would sum alike."""
    return (k * 2_246_822_519 + 374_761_393) & 0xFFFF_FFFF


class LoopKernel(Kernel):
    def _memory_type(self, allowed: int) -> int:
        """Device-local and host-visible if the device has it, else host-visible."""
        kinds = range(self.memory.memoryTypeCount)
        usable = [k for k in kinds if allowed & (1 << k)]
        for wanted in (HOST_MEMORY | DEVICE_LOCAL, HOST_MEMORY):
            for k in usable:
                if self.memory.memoryTypes[k].propertyFlags & wanted == wanted:
                    return k
        raise RuntimeError("no host-visible memory type for the buffer")

    def _buffer(self, words: list[int], usage: int) -> Any:
        size = 4 * len(words)
        buffer = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(size=size, usage=usage), None)
        requirements = vk.vkGetBufferMemoryRequirements(self.device, buffer)
        memory = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(
                allocationSize=requirements.size,
                memoryTypeIndex=self._memory_type(requirements.memoryTypeBits),
            ),
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
        data = self._buffer([data_word(k) for k in range(DATA_WORDS)], storage)
        report = self._buffer([0] * REPORT_WORDS, storage)
        self.result = self._buffer([0] * INVOCATIONS, storage)
        buffers = ((0, data, DATA_WORDS), (1, self.result, INVOCATIONS), (2, report, REPORT_WORDS))
        bindings = [
            vk.VkDescriptorSetLayoutBinding(
                binding=binding,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                descriptorCount=1,
                stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            )
            for binding, _, _ in buffers
        ]
        set_layout = vk.vkCreateDescriptorSetLayout(
            self.device,
            vk.VkDescriptorSetLayoutCreateInfo(bindingCount=len(bindings), pBindings=bindings),
            None,
        )
        pool = vk.vkCreateDescriptorPool(
            self.device,
            vk.VkDescriptorPoolCreateInfo(
                maxSets=1,
                poolSizeCount=1,
                pPoolSizes=[
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=len(buffers)
                    )
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
        writes = [
            vk.VkWriteDescriptorSet(
                dstSet=self.set, dstBinding=binding, descriptorCount=1,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=buffer, offset=0, range=4 * words)],
            )
            for binding, buffer, words in buffers
        ]  # fmt: skip
        vk.vkUpdateDescriptorSets(self.device, len(writes), writes, 0, None)
        self.layout = vk.vkCreatePipelineLayout(
            self.device,
            vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[set_layout]),
            None,
        )
        self._pipeline(shader)

    def _pipeline(self, shader: bytes) -> None:
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

    def checksum(self) -> int:
        """The first 60 bits of the SHA-256 of the whole result buffer."""
        size = 4 * INVOCATIONS
        mapped = vk.vkMapMemory(self.device, self.result_memory, 0, size, 0)
        digest = hashlib.sha256(mapped).hexdigest()
        vk.vkUnmapMemory(self.device, self.result_memory)
        return int(digest[:15], 16)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("shader", help="the SPIR-V of shaders/ssbo_loops.comp")
    parser.add_argument("--dispatches", type=int, default=20)
    options = parser.parse_args(argv)
    with open(options.shader, "rb") as handle:
        kernel = LoopKernel(handle.read())
    times = [kernel.dispatch_ms() for _ in range(options.dispatches)]
    print(json.dumps({"device": kernel.device_name, "ms": times, "checksum": kernel.checksum()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
