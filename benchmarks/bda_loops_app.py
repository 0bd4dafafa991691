"""GPU time of issue 14's device-address kernel (shaders/bda_loops.comp), as a separate process.

The work of ssbo_loops_app.py (1M invocations, 64 hashed loads from a 4 MiB buffer and stores
to a word of its own in another), with both buffers reached through buffer-reference pointers
that a uniform block holds. Both buffers have SHADER_DEVICE_ADDRESS usage and live in memory
allocated with the DEVICE_ADDRESS flag, in device-local memory the host can map where the
device has it; the device enables bufferDeviceAddress. Prints one JSON line with each
dispatch's GPU time in milliseconds and a hash of the whole result buffer, as
ssbo_loops_app.py does (the same data, so the same hash when the same sums are stored).
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from typing import Any

import vulkan as vk

from benchmarks.shader_time_app import INVOCATIONS, ffi
from benchmarks.ssbo_loops_app import DATA_WORDS, LoopKernel, data_word

# Core 1.2 enumerants missing from the package's Python module (its cdef has them).
ADDRESS_USAGE = vk.lib.VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT
ADDRESS_ALLOCATION = vk.lib.VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT


class AddressLoopKernel(LoopKernel):
    buffer_device_address = vk.VK_TRUE

    def _addressed_buffer(self, words: list[int]) -> tuple[Any, Any, int]:
        """A storage buffer with a device address, filled with ``words``: (buffer, memory,
        address)."""
        size = 4 * len(words)
        usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | ADDRESS_USAGE
        buffer = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(size=size, usage=usage), None)
        requirements = vk.vkGetBufferMemoryRequirements(self.device, buffer)
        memory = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(
                pNext=vk.VkMemoryAllocateFlagsInfo(flags=ADDRESS_ALLOCATION),
                allocationSize=requirements.size,
                memoryTypeIndex=self._memory_type(requirements.memoryTypeBits),
            ),
            None,
        )
        vk.vkBindBufferMemory(self.device, buffer, memory, 0)
        mapped = vk.vkMapMemory(self.device, memory, 0, size, 0)
        ffi.memmove(mapped, ffi.new("uint32_t[]", words), size)
        vk.vkUnmapMemory(self.device, memory)
        info = ffi.new("VkBufferDeviceAddressInfo*")
        info.sType = vk.VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO
        info.buffer = buffer
        # The package's wrapper returns its pInfo argument, not the address: call the C function.
        return buffer, memory, int(vk.lib.vkGetBufferDeviceAddress(self.device, info))

    def _buffers(self, shader: bytes) -> None:
        _, _, data = self._addressed_buffer([data_word(k) for k in range(DATA_WORDS)])
        self.result, result_memory, result = self._addressed_buffer([0] * INVOCATIONS)
        # The uniform block: two 64-bit pointers, as 32-bit words (little-endian).
        words = list(struct.unpack("<4I", struct.pack("<2Q", data, result)))
        pointers = self._buffer(words, vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT)
        self.result_memory = result_memory  # _buffer set it to the uniform block's
        binding = vk.VkDescriptorSetLayoutBinding(
            binding=0,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
            descriptorCount=1,
            stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
        )
        set_layout = vk.vkCreateDescriptorSetLayout(
            self.device,
            vk.VkDescriptorSetLayoutCreateInfo(bindingCount=1, pBindings=[binding]),
            None,
        )
        pool = vk.vkCreateDescriptorPool(
            self.device,
            vk.VkDescriptorPoolCreateInfo(
                maxSets=1,
                poolSizeCount=1,
                pPoolSizes=[
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, descriptorCount=1
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
        write = vk.VkWriteDescriptorSet(
            dstSet=self.set, dstBinding=0, descriptorCount=1,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
            pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=pointers, offset=0, range=16)],
        )  # fmt: skip
        vk.vkUpdateDescriptorSets(self.device, 1, [write], 0, None)
        self.layout = vk.vkCreatePipelineLayout(
            self.device,
            vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[set_layout]),
            None,
        )
        self._pipeline(shader)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("shader", help="the SPIR-V of shaders/bda_loops.comp")
    parser.add_argument("--dispatches", type=int, default=20)
    options = parser.parse_args(argv)
    with open(options.shader, "rb") as handle:
        kernel = AddressLoopKernel(handle.read())
    times = [kernel.dispatch_ms() for _ in range(options.dispatches)]
    print(json.dumps({"device": kernel.device_name, "ms": times, "checksum": kernel.checksum()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
