"""The Vulkan work of gpuav's validation dispatch (``action_checks``), as calls down the chain:
its compute pipeline (made at first use), and per app command buffer with checks a command
buffer, a row buffer and a descriptor set per group of rows (``action_check_groups``), kept
and rewritten when the app records it again.

Command buffers gpuav allocates by calling down get the loader's dispatch pointer of their
device, as vkSetDeviceLoaderData would give them, so that layers below can dispatch them.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable
from typing import Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer.action_check_parameters import PARAMETER_WORDS, WINDOW_SLOTS
from gpuav.layer.action_checks import CheckResources, Chunk, RowGroup
from gpuav.layer.action_checks_spirv import WORDS
from gpuav.layer.calls import StateBufferHandles, VulkanCallFailed
from gpuav.layer.native.device_calls import NativeDeviceCalls
from gpuav.layer.native.vk import address

PUSH_WORDS = 2  # first row, data words of an output block
SETS_PER_POOL = 256
MIN_ROWS = 64
MAX_ROWS_PER_DISPATCH = 65535  # maxComputeWorkGroupCount[1]'s guaranteed minimum
COMMAND_POOL_RESET_COMMAND_BUFFER = 0x2
DESCRIPTOR_POOL_FREE_DESCRIPTOR_SET = 0x1
WHOLE_SIZE = (1 << 64) - 1
# A set's one binding: its array of (buffer, offset, range).
Bindings = tuple[tuple[int, int, int], ...]


def _same(kept: object, stamp: tuple[object, ...]) -> bool:
    """The same windows, of the same buffer objects (told apart by identity)."""
    return (
        isinstance(kept, tuple)
        and len(kept) == len(stamp)
        and kept[0] == stamp[0]
        and all(a is b for a, b in zip(kept[1:], stamp[1:], strict=True))
    )


class NativeActionCheckCalls:
    def __init__(self, device_calls: NativeDeviceCalls, memory_types: tuple[int, ...]) -> None:
        self._device_calls = device_calls
        self.device = device_calls.device
        self.next = device_calls.next
        self._memory_types = memory_types
        self._made: dict[str, int] = {}
        self._dummy: Any = None
        self._command_pools: dict[int, int] = {}  # queue family -> pool
        self._command_buffer_pools: dict[int, int] = {}
        self._descriptor_pools: list[int] = []
        self._free_sets: dict[str, list[int]] = {
            "rows_layout": [],
            "group_layout": [],
            "chunk_layout": [],
        }
        self._chunk_sets: dict[Chunk, int] = {}  # output chunks live as long as the device
        self._row_buffers: dict[int, StateBufferHandles] = {}  # by buffer handle
        self._push = vkffi.new("uint32_t[]", PUSH_WORDS)
        self._bound = vkffi.new("uint64_t[1]")
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

    def _set_layout(self, count: int) -> int:
        """A layout of one binding: an array of ``count`` storage buffers."""
        binding = vkffi.new("VkDescriptorSetLayoutBinding *")
        binding.descriptorType = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        binding.descriptorCount = count
        binding.stageFlags = vk.VK_SHADER_STAGE_COMPUTE_BIT
        info = vkffi.new("VkDescriptorSetLayoutCreateInfo *")
        info.sType = vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO
        info.bindingCount = 1
        info.pBindings = binding
        return self._create("vkCreateDescriptorSetLayout", info)

    def _pipeline(self) -> int:
        if "pipeline" in self._made:
            return self._made["pipeline"]
        self._made["rows_layout"] = self._set_layout(1)
        self._made["group_layout"] = self._set_layout(WINDOW_SLOTS)
        self._made["chunk_layout"] = self._set_layout(1)
        names = ("rows_layout", "group_layout", "chunk_layout")
        layouts = vkffi.new(f"uint64_t[{len(names)}]", [self._made[name] for name in names])
        push = vkffi.new("VkPushConstantRange *")
        push.stageFlags = vk.VK_SHADER_STAGE_COMPUTE_BIT
        push.size = 4 * PUSH_WORDS
        layout_info = vkffi.new("VkPipelineLayoutCreateInfo *")
        layout_info.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO
        layout_info.setLayoutCount = len(names)
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

    def _descriptor_set(self, layout: str) -> int:
        free = self._free_sets[layout]
        if free:
            return free.pop()
        for pool in reversed(self._descriptor_pools):
            found = self._allocate_set(pool, layout)
            if found:
                return found
        size = vkffi.new("VkDescriptorPoolSize *")
        size.type = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        size.descriptorCount = WINDOW_SLOTS * SETS_PER_POOL
        info = vkffi.new("VkDescriptorPoolCreateInfo *")
        info.sType = vk.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO
        info.flags = DESCRIPTOR_POOL_FREE_DESCRIPTOR_SET
        info.maxSets = SETS_PER_POOL
        info.poolSizeCount = 1
        info.pPoolSizes = size
        pool = self._create("vkCreateDescriptorPool", info)
        self._descriptor_pools.append(pool)
        found = self._allocate_set(pool, layout)
        if not found:
            raise VulkanCallFailed("vkAllocateDescriptorSets (a new pool)", -1000069000)
        return found

    def _allocate_set(self, pool: int, layout: str) -> int:
        layouts = vkffi.new("uint64_t[1]", [self._made[layout]])
        info = vkffi.new("VkDescriptorSetAllocateInfo *")
        info.sType = vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO
        info.descriptorPool = vkffi.cast("VkDescriptorPool", pool)
        info.descriptorSetCount = 1
        info.pSetLayouts = vkffi.cast("VkDescriptorSetLayout *", layouts)
        out = vkffi.new("uint64_t[1]")
        if int(self.next.vkAllocateDescriptorSets(self.device, address(info), address(out))):
            return 0
        return int(out[0])

    def _write_sets(self, targets: list[tuple[int, Bindings]]) -> None:
        """One vkUpdateDescriptorSets for every (set, its binding's array of (buffer, offset,
        range))."""
        infos = vkffi.new("VkDescriptorBufferInfo[]", sum(len(array_) for _, array_ in targets))
        writes = vkffi.new("VkWriteDescriptorSet[]", len(targets))
        at = 0
        for write, (descriptor_set, array_) in zip(writes, targets, strict=True):
            write.sType = vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
            write.dstSet = vkffi.cast("VkDescriptorSet", descriptor_set)
            write.descriptorCount = len(array_)
            write.descriptorType = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
            write.pBufferInfo = infos + at
            for buffer, offset, size in array_:
                info = infos[at]
                info.buffer = vkffi.cast("VkBuffer", buffer)
                info.offset = offset
                info.range = size
                at += 1
        self.next.vkUpdateDescriptorSets(self.device, len(targets), address(writes), 0, 0)

    def _group_bindings(self, group: RowGroup) -> Bindings:
        """The group's windows in their slots, the slots no row names bound to gpuav's own
        small buffer (every element of an array the shader reads must be valid)."""
        dummy = (self._dummy.buffer, 0, WHOLE_SIZE)
        windows = [(w.buffer, w.offset, w.range) for w in group.windows]
        return (*windows, *[dummy] * (WINDOW_SLOTS - len(windows)))

    def _chunk_set(self, chunk: Chunk) -> int:
        """The set that binds an output chunk, written once (the whole chunk: a few hundred
        blocks, far below maxStorageBufferRange)."""
        found = self._chunk_sets.get(chunk)
        if found is None:
            found = self._chunk_sets[chunk] = self._descriptor_set("chunk_layout")
            self._write_sets([(found, ((chunk[0], 0, chunk[1]),))])
        return found

    # -- the row buffer --------------------------------------------------------------------------

    def _ensure_rows(self, resources: CheckResources, rows: int) -> StateBufferHandles:
        """The row buffer, made (or remade larger) to hold ``rows``; its set written then."""
        current = self._row_buffers.get(resources.rows)
        if current is not None and resources.rows_capacity >= rows:
            return current
        capacity = max(MIN_ROWS, resources.rows_capacity)
        while capacity < rows:
            capacity *= 2
        made = self._device_calls.create_state_buffer(4 * PARAMETER_WORDS * capacity,
                                                      self._memory_types)  # fmt: skip
        if current is not None:
            self._device_calls.destroy_state_buffer(self._row_buffers.pop(current.buffer))
        self._row_buffers[made.buffer] = made
        if not resources.rows_set:
            resources.rows_set = self._descriptor_set("rows_layout")
        self._write_sets([(resources.rows_set, ((made.buffer, 0, WHOLE_SIZE),))])
        resources.rows = made.buffer
        resources.rows_capacity = capacity
        return made

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
        self,
        pool_family: int,
        resources: CheckResources,
        groups: list[RowGroup],
        block_data_words: int,
        stamp_of: Callable[[int], object],
    ) -> None:
        pipeline = self._pipeline()
        command_buffer = resources.command_buffer
        if command_buffer:
            self._device_calls._call("vkResetCommandBuffer", command_buffer, 0)
        else:
            command_buffer = resources.command_buffer = self._command_buffer(pool_family)
        words = array("I")
        for group in groups:
            for rows in group.rows.values():
                words.extend(rows)
        row_buffer = self._ensure_rows(resources, len(words) // PARAMETER_WORDS)
        row_buffer.words[0 : len(words)] = words
        sets, written = resources.descriptor_sets, resources.written
        while len(sets) < len(groups):
            sets.append(self._descriptor_set("group_layout"))
            written.append(None)
        self._free_sets["group_layout"].extend(sets[len(groups) :])
        del sets[len(groups) :], written[len(groups) :]
        targets, stamps = [], []
        for index, group in enumerate(groups):
            # A set is written again only where what it binds changed (an app buffer made
            # again under the same handle is another object: ``stamp_of``).
            stamp = (tuple(group.windows), *(stamp_of(w.buffer) for w in group.windows))
            if not _same(written[index], stamp):
                targets.append((sets[index], self._group_bindings(group)))
                stamps.append((index, stamp))
        if targets:
            self._write_sets(targets)
            for index, stamp in stamps:
                written[index] = stamp
        self._record_dispatches(command_buffer, pipeline, resources.rows_set, sets, groups,
                                block_data_words)  # fmt: skip

    def _record_dispatches(
        self,
        command_buffer: int,
        pipeline: int,
        rows_set: int,
        sets: list[int],
        groups: list[RowGroup],
        block_data_words: int,
    ) -> None:
        next_ = self.next
        begin = vkffi.new("VkCommandBufferBeginInfo *")
        begin.sType = vk.VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO
        # It goes with the app's wherever that goes, pending more than once included.
        begin.flags = vk.VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT
        self._device_calls._call("vkBeginCommandBuffer", command_buffer, address(begin))
        compute = vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT
        every = vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT
        next_.vkCmdPipelineBarrier(
            command_buffer, every, compute, 0, 1, address(self._barrier_before), 0, 0, 0, 0
        )
        next_.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
        layout = self._made["layout"]
        bound = self._bound
        bind = next_.vkCmdBindDescriptorSets
        point = vk.VK_PIPELINE_BIND_POINT_COMPUTE
        bound[0] = rows_set
        bind(command_buffer, point, layout, 0, 1, address(bound), 0, 0)
        push = self._push
        push[1] = block_data_words
        first = 0
        bound_chunk = None
        for descriptor_set, group in zip(sets, groups, strict=True):
            bound[0] = descriptor_set
            bind(command_buffer, point, layout, 1, 1, address(bound), 0, 0)
            for (chunk, columns), rows in group.rows.items():
                if chunk != bound_chunk:
                    bound[0] = self._chunk_set(chunk)
                    bind(command_buffer, point, layout, 2, 1, address(bound), 0, 0)
                    bound_chunk = chunk
                count = len(rows) // PARAMETER_WORDS
                for start in range(0, count, MAX_ROWS_PER_DISPATCH):
                    push[0] = first + start
                    next_.vkCmdPushConstants(command_buffer, layout,
                                             vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 4 * PUSH_WORDS,
                                             address(push))  # fmt: skip
                    next_.vkCmdDispatch(
                        command_buffer, columns, min(MAX_ROWS_PER_DISPATCH, count - start), 1
                    )
                first += count
        next_.vkCmdPipelineBarrier(
            command_buffer, compute, every | vk.VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
            address(self._barrier_after), 0, 0, 0, 0,
        )  # fmt: skip
        self._device_calls._call("vkEndCommandBuffer", command_buffer)

    def release(self, resources: CheckResources) -> None:
        self._free_sets["group_layout"].extend(resources.descriptor_sets)
        resources.descriptor_sets.clear()
        resources.written.clear()
        if resources.rows_set:
            self._free_sets["rows_layout"].append(resources.rows_set)
            resources.rows_set = 0
        rows = self._row_buffers.pop(resources.rows, None)
        if rows is not None:
            self._device_calls.destroy_state_buffer(rows)
        resources.rows, resources.rows_capacity = 0, 0
        command_buffer = resources.command_buffer
        if command_buffer:
            pool = self._command_buffer_pools.pop(command_buffer, 0)
            handles = vkffi.new("uintptr_t[1]", [command_buffer])
            self.next.vkFreeCommandBuffers(self.device, pool, 1, address(handles))
            resources.command_buffer = 0

    def destroy(self) -> None:
        next_ = self.next
        for pool in self._command_pools.values():
            next_.vkDestroyCommandPool(self.device, pool, 0)
        for pool in self._descriptor_pools:
            next_.vkDestroyDescriptorPool(self.device, pool, 0)
        for rows in self._row_buffers.values():
            self._device_calls.destroy_state_buffer(rows)
        if "pipeline" in self._made:
            next_.vkDestroyPipeline(self.device, self._made["pipeline"], 0)
        if "layout" in self._made:
            next_.vkDestroyPipelineLayout(self.device, self._made["layout"], 0)
        for layout in ("rows_layout", "group_layout", "chunk_layout"):
            if layout in self._made:
                next_.vkDestroyDescriptorSetLayout(self.device, self._made[layout], 0)
        if self._dummy is not None:
            self._device_calls.destroy_state_buffer(self._dummy)
        self._made.clear()
        self._command_pools.clear()
        self._descriptor_pools.clear()
        self._row_buffers.clear()
        self._chunk_sets.clear()
