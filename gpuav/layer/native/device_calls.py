"""``DeviceCalls`` for the native layer: the engine's requests as calls down the chain.

These calls go straight to the next layer, not back through the top of the chain (seed 000,
"Calling Down the Chain"); stacking VK_LAYER_KHRONOS_validation beneath gpuav validates them.
"""

from __future__ import annotations

from array import array
from typing import Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.instrument.descriptor_state import (
    ADDRESS_BOUND_SETS,
    ADDRESS_OUTPUT,
    ADDRESS_STATE,
    BOUND_SETS_BINDING,
    CONTEXT_DATA_WORDS,
    OUTPUT_BINDING,
    STATE_BINDING,
)
from gpuav.instrument.record import DATA_FIRST_WORD
from gpuav.layer import faults
from gpuav.layer.calls import (
    CONTEXT_BYTES,
    MEMORY_PROPERTY_DEVICE_LOCAL,
    MEMORY_PROPERTY_HOST_CACHED,
    MEMORY_PROPERTY_HOST_COHERENT,
    MEMORY_PROPERTY_HOST_VISIBLE,
    ChunkLayout,
    OutputBindBeforeAction,
    OutputChunkHandles,
    PushedConstants,
    StateBufferHandles,
    VulkanCallFailed,
)
from gpuav.layer.native.dispatch import Native, NextFunctions
from gpuav.layer.native.vk import address

WHOLE_SIZE = (1 << 64) - 1
# Vulkan 1.2 values the vulkan package does not define (VkBufferUsageFlagBits,
# VkMemoryAllocateFlagBits).
BUFFER_USAGE_SHADER_DEVICE_ADDRESS = 0x00020000
MEMORY_ALLOCATE_DEVICE_ADDRESS = 0x2
MEMORY_MAP_FAILED = -5  # VK_ERROR_MEMORY_MAP_FAILED
MAP_FAILED = (1 << 64) - 1  # mmap's (void *) -1
_HOST_MEMORY = MEMORY_PROPERTY_HOST_VISIBLE | MEMORY_PROPERTY_HOST_COHERENT


def _descriptor_type(binding: int) -> int:
    """Our set's bindings are storage buffers but for the bound-sets area, a uniform buffer."""
    if binding == BOUND_SETS_BINDING:
        return int(vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER)
    return int(vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER)


def choose_memory_type(
    type_bits: int, memory_type_flags: tuple[int, ...], device_local: bool = False
) -> int:
    """A host-visible, coherent type allowed by ``type_bits``: with ``device_local``, one the
    GPU reads at full speed where there is one (for memory the host only writes), else cached
    if possible."""
    candidates = [
        index
        for index, flags in enumerate(memory_type_flags)
        if type_bits & (1 << index) and flags & _HOST_MEMORY == _HOST_MEMORY
    ]
    if not candidates:
        raise VulkanCallFailed("vkAllocateMemory (no host-coherent memory type)", -2)
    wanted = (MEMORY_PROPERTY_DEVICE_LOCAL,) if device_local else ()
    for flag in (*wanted, MEMORY_PROPERTY_HOST_CACHED):
        chosen = [index for index in candidates if memory_type_flags[index] & flag]
        if chosen:
            return chosen[0]
    return candidates[0]


class NativeDeviceCalls:
    """One device's calls; keeps the small C arrays the per-draw call points at."""

    def __init__(self, device: int, next_functions: NextFunctions) -> None:
        self.device = device
        self.next = next_functions
        self._keep: list[Any] = []
        self._set_arrays: dict[int, int] = {}
        self._context_values: dict[int, int] = {}
        # Signalled fences of ours, reset for the next submission: NVIDIA's vkCreateFence and
        # vkDestroyFence are each a kernel call (about 0.3 ms a submission on the H100).
        self._spare_fences: list[int] = []
        self._fence_info = vkffi.new("VkFenceCreateInfo *")
        self._fence_info.sType = vk.VK_STRUCTURE_TYPE_FENCE_CREATE_INFO
        barrier = vkffi.new("VkMemoryBarrier *")
        barrier.sType = vk.VK_STRUCTURE_TYPE_MEMORY_BARRIER
        barrier.srcAccessMask = vk.VK_ACCESS_SHADER_WRITE_BIT
        barrier.dstAccessMask = vk.VK_ACCESS_HOST_READ_BIT
        self._keep.append(barrier)
        self._barrier = address(barrier)

    # -- helpers ------------------------------------------------------------------------------

    def _call(self, command: str, *arguments: Any) -> None:
        """Make a call that returns a VkResult; raise ``VulkanCallFailed`` on an error code.

        Every call the layer makes for its own objects goes through here, so a test can make
        any of them fail (``faults.injected_result``) and the caller's clean-up runs."""
        result = faults.injected_result(command) if faults._POINTS else 0
        if not result:
            result = int(getattr(self.next, command)(*arguments))
        if result < 0:
            raise VulkanCallFailed(command, result)

    def _create(self, command: str, info: Any) -> int:
        out = vkffi.new("uint64_t[1]")
        self._call(command, self.device, address(info), 0, address(out))
        return int(out[0])

    # -- descriptor set layouts -----------------------------------------------------------------

    def create_descriptor_set_layout(self, storage_buffer_stages: int | None) -> int:
        info = vkffi.new("VkDescriptorSetLayoutCreateInfo *")
        info.sType = vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO
        numbers = (OUTPUT_BINDING, BOUND_SETS_BINDING, STATE_BINDING)
        bindings = vkffi.new("VkDescriptorSetLayoutBinding[]", len(numbers))
        if storage_buffer_stages is not None:
            for index, number in enumerate(numbers):
                bindings[index].binding = number
                bindings[index].descriptorType = _descriptor_type(number)
                bindings[index].descriptorCount = 1
                bindings[index].stageFlags = storage_buffer_stages
            info.bindingCount = len(numbers)
            info.pBindings = bindings
        return self._create("vkCreateDescriptorSetLayout", info)

    def destroy_descriptor_set_layout(self, layout: int) -> None:
        self.next.vkDestroyDescriptorSetLayout(self.device, layout, 0)

    def destroy_pipeline_layout(self, layout: int) -> None:
        self.next.vkDestroyPipelineLayout(self.device, layout, 0)

    # -- output chunks --------------------------------------------------------------------------

    def create_output_chunk(self, layout: ChunkLayout) -> OutputChunkHandles:
        made: dict[str, int] = {}
        made_areas: dict[str, int] = {}
        with_contexts = bool(layout.state_address)
        flags = layout.memory_type_flags
        try:
            buffer, memory, words = self._mapped_buffer(layout.size, flags, made, with_contexts)
            areas_buffer, areas_memory, area_words = self._mapped_buffer(
                layout.areas_size, flags, made_areas, with_contexts, device_local=True
            )
            descriptor_sets = self._block_descriptor_sets(made, buffer, areas_buffer, layout)
            contexts = (
                self._write_contexts(buffer, areas_buffer, area_words, layout)
                if with_contexts
                else ()
            )
            return OutputChunkHandles(
                buffer, memory, made["pool"], descriptor_sets, words,
                areas_buffer, areas_memory, area_words, contexts,
            )  # fmt: skip
        except Exception:
            self._destroy_parts(made_areas)
            self._destroy_parts(made)
            raise

    def _write_contexts(
        self, buffer: int, areas_buffer: int, area_words: memoryview, layout: ChunkLayout
    ) -> tuple[int, ...]:
        """Each block's context (``descriptor_state.ADDRESS_*`` and ``CONTEXT_DATA_WORDS``, one
        uint64 each), written once, after the areas."""
        blocks = self.buffer_address(buffer)
        areas = self.buffer_address(areas_buffer)
        addresses = []
        for index in range(layout.blocks):
            context = layout.contexts_start + index * CONTEXT_BYTES
            values = {
                ADDRESS_OUTPUT: blocks + index * layout.block_range,
                ADDRESS_BOUND_SETS: areas + index * layout.bound_sets_range,
                ADDRESS_STATE: layout.state_address,
                CONTEXT_DATA_WORDS: layout.block_range // 4 - DATA_FIRST_WORD,
            }
            for slot, value in values.items():
                word = context // 4 + 2 * slot
                area_words[word] = value & 0xFFFF_FFFF
                area_words[word + 1] = value >> 32
            addresses.append(areas + context)
        return tuple(addresses)

    def buffer_address(self, buffer: int) -> int:
        info = vkffi.new("VkBufferDeviceAddressInfo *")
        info.sType = vk.VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO
        info.buffer = vkffi.cast("VkBuffer", buffer)
        return int(self.next.vkGetBufferDeviceAddress(self.device, address(info)))

    def create_state_buffer(
        self, size: int, memory_type_flags: tuple[int, ...], device_address: bool = False
    ) -> StateBufferHandles:
        made: dict[str, int] = {}
        try:
            buffer, memory, words = self._mapped_buffer(
                size, memory_type_flags, made, device_address
            )
            where = self.buffer_address(buffer) if device_address else 0
        except Exception:
            self._destroy_parts(made)
            raise
        return StateBufferHandles(buffer, memory, size, words, where)

    def destroy_state_buffer(self, handles: StateBufferHandles) -> None:
        handles.words.release()
        self._destroy_parts(
            {"mapped": handles.memory, "buffer": handles.buffer, "memory": handles.memory}
        )

    def _mapped_buffer(
        self,
        size: int,
        memory_type_flags: tuple[int, ...],
        made: dict[str, int],
        device_address: bool = False,
        device_local: bool = False,
    ) -> tuple[int, int, memoryview]:
        """A zeroed, mapped, host-coherent storage and uniform buffer (its handles also go in
        ``made``); ``device_local``: in device-local memory where that can be had (a small
        heap on a GPU without resizable BAR), for memory the host only writes."""
        buffer_info = vkffi.new("VkBufferCreateInfo *")
        buffer_info.sType = vk.VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO
        buffer_info.size = size
        buffer_info.usage = (
            vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT
        )
        if device_address:
            buffer_info.usage |= BUFFER_USAGE_SHADER_DEVICE_ADDRESS
        buffer_info.sharingMode = vk.VK_SHARING_MODE_EXCLUSIVE
        made["buffer"] = self._create("vkCreateBuffer", buffer_info)

        requirements = vkffi.new("VkMemoryRequirements *")
        self.next.vkGetBufferMemoryRequirements(self.device, made["buffer"], address(requirements))
        allocate = vkffi.new("VkMemoryAllocateInfo *")
        allocate.sType = vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO
        allocate.allocationSize = requirements.size
        if device_address:
            flags = vkffi.new("VkMemoryAllocateFlagsInfo *")
            flags.sType = vk.VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO
            flags.flags = MEMORY_ALLOCATE_DEVICE_ADDRESS
            allocate.pNext = flags
        bits = requirements.memoryTypeBits
        allocate.memoryTypeIndex = choose_memory_type(bits, memory_type_flags, device_local)
        try:
            made["memory"] = self._create("vkAllocateMemory", allocate)
        except VulkanCallFailed:
            fallback = choose_memory_type(bits, memory_type_flags)
            if fallback == allocate.memoryTypeIndex:
                raise
            allocate.memoryTypeIndex = fallback
            made["memory"] = self._create("vkAllocateMemory", allocate)
        self._call("vkBindBufferMemory", self.device, made["buffer"], made["memory"], 0)
        mapped = vkffi.new("void **")
        self._call("vkMapMemory", self.device, made["memory"], 0, WHOLE_SIZE, 0, address(mapped))
        made["mapped"] = made["memory"]
        if faults.injected_result("vkMapMemory-MAP_FAILED") if faults._POINTS else 0:
            mapped[0] = vkffi.cast("void *", MAP_FAILED)
        if int(vkffi.cast("uintptr_t", mapped[0])) in (0, MAP_FAILED):
            # lavapipe maps at vkMapMemory and answers VK_SUCCESS with mmap's MAP_FAILED once
            # the address space is exhausted: writing through it crashed the app.
            raise VulkanCallFailed("vkMapMemory (no pointer)", MEMORY_MAP_FAILED)
        vkffi.memmove(mapped[0], bytes(size), size)
        words = memoryview(vkffi.buffer(mapped[0], size)).cast("B").cast("I")
        return made["buffer"], made["memory"], words

    def _block_descriptor_sets(
        self, made: dict[str, int], buffer: int, areas_buffer: int, layout: ChunkLayout
    ) -> tuple[int, ...]:
        """One pool, and in it one set per block written once (seed 000 wrote one per draw)."""
        count = layout.blocks
        set_layout = layout.set_layout
        pool_sizes = vkffi.new("VkDescriptorPoolSize[2]")
        pool_sizes[0].type = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        pool_sizes[0].descriptorCount = 2 * count
        pool_sizes[1].type = vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
        pool_sizes[1].descriptorCount = count
        pool_info = vkffi.new("VkDescriptorPoolCreateInfo *")
        pool_info.sType = vk.VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO
        pool_info.maxSets = count
        pool_info.poolSizeCount = 2
        pool_info.pPoolSizes = pool_sizes
        made["pool"] = self._create("vkCreateDescriptorPool", pool_info)

        layouts = vkffi.new("uint64_t[]", [set_layout] * count)
        set_info = vkffi.new("VkDescriptorSetAllocateInfo *")
        set_info.sType = vk.VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO
        set_info.descriptorPool = vkffi.cast("VkDescriptorPool", made["pool"])
        set_info.descriptorSetCount = count
        set_info.pSetLayouts = vkffi.cast("VkDescriptorSetLayout *", layouts)
        sets = vkffi.new("uint64_t[]", count)
        self._call("vkAllocateDescriptorSets", self.device, address(set_info), address(sets))
        infos = vkffi.new("VkDescriptorBufferInfo[]", 3 * count)
        writes = vkffi.new("VkWriteDescriptorSet[]", 3 * count)
        buffer_handle = vkffi.cast("VkBuffer", buffer)
        areas_handle = vkffi.cast("VkBuffer", areas_buffer)
        state_handle = vkffi.cast("VkBuffer", layout.state_buffer)
        for index in range(count):
            ranges = (
                (OUTPUT_BINDING, buffer_handle, index * layout.block_range, layout.block_range),
                (
                    BOUND_SETS_BINDING,
                    areas_handle,
                    index * layout.bound_sets_range,
                    layout.bound_sets_range,
                ),
                (STATE_BINDING, state_handle, 0, WHOLE_SIZE),
            )
            for slot, (binding, target, offset, size) in enumerate(ranges):
                at_index = 3 * index + slot
                infos[at_index].buffer = target
                infos[at_index].offset = offset
                infos[at_index].range = size
                write = writes[at_index]
                write.sType = vk.VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET
                write.dstSet = vkffi.cast("VkDescriptorSet", sets[index])
                write.dstBinding = binding
                write.descriptorCount = 1
                write.descriptorType = _descriptor_type(binding)
                write.pBufferInfo = infos + at_index
        self.next.vkUpdateDescriptorSets(self.device, 3 * count, address(writes), 0, 0)
        # Each set's handle stays in ``sets``: the per-draw bind points right at it.
        self._keep.append(sets)
        base = address(sets)
        handles = tuple(int(handle) for handle in sets)
        for index, handle in enumerate(handles):
            self._set_arrays[handle] = base + 8 * index
        return handles

    def _destroy_parts(self, made: dict[str, int]) -> None:
        """Destroy what one step made, in reverse order; only handles that calls returned."""
        if made.get("mapped"):
            self.next.vkUnmapMemory(self.device, made["mapped"])
        if made.get("pool"):
            self.next.vkDestroyDescriptorPool(self.device, made["pool"], 0)
        if made.get("buffer"):
            self.next.vkDestroyBuffer(self.device, made["buffer"], 0)
        if made.get("memory"):
            self.next.vkFreeMemory(self.device, made["memory"], 0)

    def destroy_output_chunk(self, chunk: OutputChunkHandles) -> None:
        chunk.words.release()
        chunk.area_words.release()
        self._destroy_parts(
            {
                "mapped": chunk.memory,
                "pool": chunk.descriptor_pool,
                "buffer": chunk.buffer,
                "memory": chunk.memory,
            }
        )
        self._destroy_parts(
            {
                "mapped": chunk.areas_memory,
                "buffer": chunk.areas_buffer,
                "memory": chunk.areas_memory,
            }
        )

    # -- shader modules -------------------------------------------------------------------------

    def create_shader_module(self, words: list[int]) -> int:
        # Through an array: cffi fills a C array from a list several times more slowly.
        packed = array("I", words)
        code = vkffi.new("uint32_t[]", len(packed))
        vkffi.memmove(code, packed, 4 * len(packed))
        info = vkffi.new("VkShaderModuleCreateInfo *")
        info.sType = vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO
        info.codeSize = 4 * len(packed)
        info.pCode = code
        return self._create("vkCreateShaderModule", info)

    def destroy_shader_module(self, module: int) -> None:
        self.next.vkDestroyShaderModule(self.device, module, 0)

    # -- recording (the per-draw path) ----------------------------------------------------------

    def cmd_bind_output_block(
        self,
        command_buffer: int,
        bind_point: int,
        layout: int,
        set_index: int,
        descriptor_set: int,
    ) -> None:
        sets = self._set_arrays.get(descriptor_set)
        if sets is None:  # not one of ours; kept for safety
            sets = self._set_arrays[descriptor_set] = self._array("uint64_t[1]", descriptor_set)
        self.next.vkCmdBindDescriptorSets(
            command_buffer, bind_point, layout, set_index, 1, sets, 0, 0
        )

    def output_bind_before_action(self, command_buffer: int) -> OutputBindBeforeAction:
        words = Native.lib.gpuav_output_bind(command_buffer)
        if words == Native.ffi.NULL:  # out of memory in C
            return _OutputBindAtOnce(self, command_buffer)
        return _OutputBindInC(words)

    def pushed_constants(self, command_buffer: int) -> PushedConstants:
        return _NotedPushes(Native.lib.gpuav_fetch_bindings_kept(command_buffer))

    def cmd_push_context(
        self, command_buffer: int, layout: int, stages: int, offset: int, context: int
    ) -> None:
        values = self._context_values.get(context)
        if values is None:
            values = self._context_values[context] = self._array("uint64_t[1]", context)
        self.next.vkCmdPushConstants(command_buffer, layout, stages, offset, 8, values)

    def _array(self, type_name: str, value: int) -> int:
        array = vkffi.new(type_name, [value])
        self._keep.append(array)
        return address(array)

    def cmd_host_read_barrier(self, command_buffer: int) -> None:
        self.next.vkCmdPipelineBarrier(
            command_buffer,
            vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
            vk.VK_PIPELINE_STAGE_HOST_BIT,
            0,
            1,
            self._barrier,
            0,
            0,
            0,
            0,
        )

    # -- queues and fences ----------------------------------------------------------------------

    def queue_signal_fence(self, queue: int) -> int:
        spare = self._spare_fences
        fence = spare.pop() if spare else self._create("vkCreateFence", self._fence_info)
        try:
            self._call("vkQueueSubmit", queue, 0, 0, fence)
        except VulkanCallFailed:
            self.destroy_fence(fence)
            raise
        return fence

    def fence_signaled(self, fence: int, timeout_ns: int = 0) -> bool:
        if not timeout_ns:
            return int(self.next.vkGetFenceStatus(self.device, fence)) == 0
        fences = vkffi.new("uint64_t[1]", [fence])
        return int(self.next.vkWaitForFences(self.device, 1, address(fences), 1, timeout_ns)) == 0

    def destroy_fence(self, fence: int) -> None:
        self.next.vkDestroyFence(self.device, fence, 0)

    def recycle_fence(self, fence: int) -> None:
        fences = vkffi.new("uint64_t[1]", [fence])
        if int(self.next.vkResetFences(self.device, 1, address(fences))) == 0:
            self._spare_fences.append(fence)
        else:
            self.destroy_fence(fence)

    def destroy_spare_fences(self) -> None:
        spare = self._spare_fences
        while spare:
            self.destroy_fence(spare.pop())


class _OutputBindInC:
    """fetch_bindings.c's output bind of a command buffer, written in place for layer.c's
    wrapper to bind (``gpuav_bind_output_before``). Its first three words are written only
    when they change: C clears just the descriptor set once bound."""

    __slots__ = ("_bind_point", "_layout", "_set_index", "_words")

    def __init__(self, words: Any) -> None:
        self._words = memoryview(Native.ffi.buffer(words, 32)).cast("Q")
        self._bind_point = self._layout = self._set_index = -1

    def bind(self, bind_point: int, layout: int, set_index: int, descriptor_set: int) -> None:
        words = self._words
        if layout != self._layout or bind_point != self._bind_point or set_index != self._set_index:
            words[0:3] = array("Q", (bind_point, layout, set_index))
            self._bind_point = bind_point
            self._layout = layout
            self._set_index = set_index
        words[3] = descriptor_set


class _OutputBindAtOnce:
    """The output bind of a command buffer that C could not keep an entry for: made at once."""

    __slots__ = ("_calls", "_command_buffer")

    def __init__(self, calls: NativeDeviceCalls, command_buffer: int) -> None:
        self._calls = calls
        self._command_buffer = command_buffer

    def bind(self, bind_point: int, layout: int, set_index: int, descriptor_set: int) -> None:
        self._calls.cmd_bind_output_block(
            self._command_buffer, bind_point, layout, set_index, descriptor_set
        )


class _NotedPushes:
    """fetch_bindings.c's note of a command buffer's push constants, read in place."""

    __slots__ = ("_bytes", "_noted")

    def __init__(self, noted: Any) -> None:
        self._noted = noted
        self._bytes = Native.ffi.buffer(noted.push)

    @property
    def words(self) -> int:
        return int(self._noted.pushed_words)

    def data(self) -> bytes:
        return bytes(self._bytes)

    def span(self, start: int, end: int) -> tuple[int, bytes]:
        pushed = int(self._noted.pushed_words) >> (start // 4) & ((1 << (end - start) // 4) - 1)
        return pushed, self._bytes[start:end]
