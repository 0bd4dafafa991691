"""The Vulkan work of gpuav's validation dispatch (``action_checks``), as calls down the chain:
its compute pipeline (made at first use), descriptor sets for the app's buffers, and a command
buffer per app command buffer with checks.

Command buffers gpuav allocates by calling down get the loader's dispatch pointer of their
device, as vkSetDeviceLoaderData would give them, so that layers below can dispatch them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer.action_check_parameters import PARAMETER_WORDS
from gpuav.layer.action_checks import ValidationCheck, Window
from gpuav.layer.action_checks_spirv import WORDS
from gpuav.layer.calls import VulkanCallFailed
from gpuav.layer.native.device_calls import NativeDeviceCalls
from gpuav.layer.native.vk import address

CHECK_BINDINGS = 3  # commands, count, indices
SETS_PER_POOL = 256
COMMAND_POOL_RESET_COMMAND_BUFFER = 0x2
DESCRIPTOR_POOL_FREE_DESCRIPTOR_SET = 0x1
WHOLE_SIZE = (1 << 64) - 1


class NativeActionCheckCalls:
    def __init__(
        self, device_calls: NativeDeviceCalls, block_set_layout: int, memory_types: tuple[int, ...]
    ) -> None:
        self._device_calls = device_calls
        self.device = device_calls.device
        self.next = device_calls.next
        self._block_set_layout = block_set_layout
        self._memory_types = memory_types
        self._made: dict[str, int] = {}
        self._dummy: Any = None
        self._command_pools: dict[int, int] = {}  # queue family -> pool
        self._command_buffer_pools: dict[int, int] = {}
        self._descriptor_pools: list[int] = []
        self._set_pools: dict[int, int] = {}
        self._free_sets: list[int] = []
        self._barrier_before = self._memory_barrier(
            vk.VK_ACCESS_MEMORY_WRITE_BIT,
            vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_SHADER_WRITE_BIT,
        )
        self._barrier_after = self._memory_barrier(
            vk.VK_ACCESS_SHADER_WRITE_BIT,
            vk.VK_ACCESS_HOST_READ_BIT
            | vk.VK_ACCESS_MEMORY_READ_BIT
            | vk.VK_ACCESS_MEMORY_WRITE_BIT,
        )

    @staticmethod
    def _memory_barrier(source: int, destination: int) -> Any:
        barrier = vkffi.new("VkMemoryBarrier *")
        barrier.sType = vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER
        barrier.srcAccessMask = source
        barrier.dstAccessMask = destination
        return barrier

    def _create(self, command: str, info: Any) -> int:
        return self._device_calls._create(command, info)

    # -- the pipeline, made once ------------------------------------------------------------------

    def _pipeline(self) -> int:
        if "pipeline" in self._made:
            return self._made["pipeline"]
        bindings = vkffi.new("VkDescriptorSetLayoutBinding[]", CHECK_BINDINGS)
        for index in range(CHECK_BINDINGS):
            bindings[index].binding = index
            bindings[index].descriptorType = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
            bindings[index].descriptorCount = 1
            bindings[index].stageFlags = vk.VK_SHADER_STAGE_COMPUTE_BIT
        set_info = vkffi.new("VkDescriptorSetLayoutCreateInfo *")
        set_info.sType = vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO
        set_info.bindingCount = CHECK_BINDINGS
        set_info.pBindings = bindings
        self._made["set_layout"] = self._create("vkCreateDescriptorSetLayout", set_info)
        layouts = vkffi.new("uint64_t[2]", [self._block_set_layout, self._made["set_layout"]])
        push = vkffi.new("VkPushConstantRange *")
        push.stageFlags = vk.VK_SHADER_STAGE_COMPUTE_BIT
        push.size = 4 * PARAMETER_WORDS
        layout_info = vkffi.new("VkPipelineLayoutCreateInfo *")
        layout_info.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO
        layout_info.setLayoutCount = 2
        layout_info.pSetLayouts = vkffi.cast("VkDescriptorSetLayout *", layouts)
        layout_info.pushConstantRangeCount = 1
        layout_info.pPushConstantRanges = push
        self._made["layout"] = self._create("vkCreatePipelineLayout", layout_info)
        module = self._device_calls.create_shader_module(list(WORDS))
        try:
            info = vkffi.new("VkComputePipelineCreateInfo *")
            info.sType = vk.VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO
            info.stage.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO
            info.stage.stage = vk.VK_SHADER_STAGE_COMPUTE_BIT
            info.stage.module = vkffi.cast("VkShaderModule", module)
            name = vkffi.new("char[]", b"main")
            info.stage.pName = name
            info.layout = vkffi.cast("VkPipelineLayout", self._made["layout"])
            out = vkffi.new("uint64_t[1]")
            self._device_calls._call(
                "vkCreateComputePipelines", self.device, 0, 1, address(info), 0, address(out)
            )
            self._made["pipeline"] = int(out[0])
        finally:
            self._device_calls.destroy_shader_module(module)
        self._dummy = self._device_calls.create_state_buffer(16, self._memory_types)
        return self._made["pipeline"]

    # -- descriptor sets ---------------------------------------------------------------------------

    def _descriptor_set(self) -> int:
        if self._free_sets:
            return self._free_sets.pop()
        for pool in reversed(self._descriptor_pools):
            found = self._allocate_set(pool)
            if found:
                return found
        size = vkffi.new("VkDescriptorPoolSize *")
        size.type = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        size.descriptorCount = CHECK_BINDINGS * SETS_PER_POOL
        info = vkffi.new("VkDescriptorPoolCreateInfo *")
        info.sType = vk.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO
        info.flags = DESCRIPTOR_POOL_FREE_DESCRIPTOR_SET
        info.maxSets = SETS_PER_POOL
        info.poolSizeCount = 1
        info.pPoolSizes = size
        pool = self._create("vkCreateDescriptorPool", info)
        self._descriptor_pools.append(pool)
        found = self._allocate_set(pool)
        if not found:
            raise VulkanCallFailed("vkAllocateDescriptorSets (a new pool)", -1000069000)
        return found

    def _allocate_set(self, pool: int) -> int:
        layouts = vkffi.new("uint64_t[1]", [self._made["set_layout"]])
        info = vkffi.new("VkDescriptorSetAllocateInfo *")
        info.sType = vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO
        info.descriptorPool = vkffi.cast("VkDescriptorPool", pool)
        info.descriptorSetCount = 1
        info.pSetLayouts = vkffi.cast("VkDescriptorSetLayout *", layouts)
        out = vkffi.new("uint64_t[1]")
        if int(self.next.vkAllocateDescriptorSets(self.device, address(info), address(out))):
            return 0
        self._set_pools[int(out[0])] = pool
        return int(out[0])

    def _write_set(self, descriptor_set: int, check: ValidationCheck) -> None:
        infos = vkffi.new("VkDescriptorBufferInfo[]", CHECK_BINDINGS)
        writes = vkffi.new("VkWriteDescriptorSet[]", CHECK_BINDINGS)
        windows: tuple[Window | None, ...] = (check.commands, check.count, check.indices)
        for binding, window in enumerate(windows):
            if window is None:
                infos[binding].buffer = vkffi.cast("VkBuffer", self._dummy.buffer)
                infos[binding].offset = 0
                infos[binding].range = WHOLE_SIZE
            else:
                infos[binding].buffer = vkffi.cast("VkBuffer", window.buffer)
                infos[binding].offset = window.offset
                infos[binding].range = window.range
            write = writes[binding]
            write.sType = vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
            write.dstSet = vkffi.cast("VkDescriptorSet", descriptor_set)
            write.dstBinding = binding
            write.descriptorCount = 1
            write.descriptorType = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
            write.pBufferInfo = infos + binding
        self.next.vkUpdateDescriptorSets(self.device, CHECK_BINDINGS, address(writes), 0, 0)

    # -- command buffers ---------------------------------------------------------------------------

    def _command_buffer(self, family: int) -> int:
        pool = self._command_pools.get(family)
        if pool is None:
            info = vkffi.new("VkCommandPoolCreateInfo *")
            info.sType = vk.VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO
            info.flags = COMMAND_POOL_RESET_COMMAND_BUFFER
            info.queueFamilyIndex = family
            pool = self._command_pools[family] = self._create("vkCreateCommandPool", info)
        info = vkffi.new("VkCommandBufferAllocateInfo *")
        info.sType = vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO
        info.commandPool = vkffi.cast("VkCommandPool", pool)
        info.level = vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY
        info.commandBufferCount = 1
        out = vkffi.new("uintptr_t[1]")
        self._device_calls._call(
            "vkAllocateCommandBuffers", self.device, address(info), address(out)
        )
        handle = int(out[0])
        # The loader's dispatch pointer, which vkSetDeviceLoaderData would write.
        vkffi.cast("uintptr_t *", handle)[0] = vkffi.cast("uintptr_t *", self.device)[0]
        self._command_buffer_pools[handle] = pool
        return handle

    def record(
        self, pool_family: int, command_buffer: int, checks: Sequence[ValidationCheck]
    ) -> tuple[int, list[int]]:
        pipeline = self._pipeline()
        if command_buffer:
            self._device_calls._call("vkResetCommandBuffer", command_buffer, 0)
        else:
            command_buffer = self._command_buffer(pool_family)
        begin = vkffi.new("VkCommandBufferBeginInfo *")
        begin.sType = vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
        self._device_calls._call("vkBeginCommandBuffer", command_buffer, address(begin))
        compute = vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
        every = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
        self.next.vkCmdPipelineBarrier(
            command_buffer, every, compute, 0, 1, address(self._barrier_before), 0, 0, 0, 0
        )
        self.next.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
        sets: list[int] = []
        layout = self._made["layout"]
        bound = vkffi.new("uint64_t[2]")
        parameters = vkffi.new("uint32_t[]", PARAMETER_WORDS)
        for check in checks:
            descriptor_set = self._descriptor_set()
            sets.append(descriptor_set)
            self._write_set(descriptor_set, check)
            bound[0] = check.action.block.descriptor_set
            bound[1] = descriptor_set
            self.next.vkCmdBindDescriptorSets(
                command_buffer,
                vk.VK_PIPELINE_BIND_POINT_COMPUTE,
                layout,
                0,
                2,
                address(bound),
                0,
                0,
            )
            parameters[0:PARAMETER_WORDS] = list(check.parameters)
            self.next.vkCmdPushConstants(
                command_buffer, layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 4 * PARAMETER_WORDS,
                address(parameters),
            )  # fmt: skip
            self.next.vkCmdDispatch(command_buffer, check.groups, 1, 1)
        self.next.vkCmdPipelineBarrier(
            command_buffer, compute, every | vk.VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
            address(self._barrier_after), 0, 0, 0, 0,
        )  # fmt: skip
        self._device_calls._call("vkEndCommandBuffer", command_buffer)
        return command_buffer, sets

    def release(self, command_buffer: int, descriptor_sets: Sequence[int]) -> None:
        self._free_sets.extend(descriptor_sets)
        if command_buffer:
            pool = self._command_buffer_pools.pop(command_buffer, 0)
            handles = vkffi.new("uintptr_t[1]", [command_buffer])
            self.next.vkFreeCommandBuffers(self.device, pool, 1, address(handles))

    def destroy(self) -> None:
        next_ = self.next
        for pool in self._command_pools.values():
            next_.vkDestroyCommandPool(self.device, pool, 0)
        for pool in self._descriptor_pools:
            next_.vkDestroyDescriptorPool(self.device, pool, 0)
        if "pipeline" in self._made:
            next_.vkDestroyPipeline(self.device, self._made["pipeline"], 0)
        if "layout" in self._made:
            next_.vkDestroyPipelineLayout(self.device, self._made["layout"], 0)
        if "set_layout" in self._made:
            next_.vkDestroyDescriptorSetLayout(self.device, self._made["set_layout"], 0)
        if self._dummy is not None:
            self._device_calls.destroy_state_buffer(self._dummy)
        self._made.clear()
        self._command_pools.clear()
        self._descriptor_pools.clear()
