"""A descriptor-indexing app (Python, ``vulkan`` package) for the layer's issue-8 tests.

Set 0 holds a result buffer (binding 0) and a runtime array of storage buffers (binding 1:
VARIABLE_DESCRIPTOR_COUNT, PARTIALLY_BOUND unless --not-partial, UPDATE_AFTER_BIND with
--update-after-bind) whose element i holds 1000 + i. One single-invocation dispatch per
--access index reads that element (with --frag, one full-target triangle draw per index, in
a render pass, whose fragment shader reads it). Descriptors are written with
vkUpdateDescriptorSets, an update template, or copies from a staging set; --late-write ones
only after the command buffer was recorded (before the submit). Prints one JSON object:
result words, messages.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import vulkan as vk

sys.path.insert(0, str(Path(__file__).parent))
import graphics
from indexing_push import SLOT_WORDS, STAGES, indices, run_pushing
from vk_app import HOST_MEMORY, messages, on_message

ffi = vk.ffi
FENCE_TIMEOUT = 60_000_000_000
# Spec values (the vulkan package leaves these two aliases as None).
POOL_UPDATE_AFTER_BIND = 0x2
LAYOUT_PUSH_DESCRIPTOR = 0x1
LAYOUT_UPDATE_AFTER_BIND_POOL = 0x2


class IndexingApp:
    def __init__(self, options: argparse.Namespace) -> None:
        self.options = options
        app_info = vk.VkApplicationInfo(apiVersion=vk.VK_MAKE_VERSION(1, 3, 0))
        self.instance = vk.vkCreateInstance(
            vk.VkInstanceCreateInfo(
                pApplicationInfo=app_info,
                enabledExtensionCount=1,
                ppEnabledExtensionNames=["VK_EXT_debug_utils"],
                enabledLayerCount=len(options.layer),
                ppEnabledLayerNames=options.layer,
            ),
            None,
        )
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
        physical = vk.vkEnumeratePhysicalDevices(self.instance)[0]
        properties = vk.vkGetPhysicalDeviceProperties(physical)
        self.max_sets = int(properties.limits.maxBoundDescriptorSets)
        self.alignment = max(16, int(properties.limits.minStorageBufferOffsetAlignment))
        self.memory = vk.vkGetPhysicalDeviceMemoryProperties(physical)
        self.maintenance6 = None
        if options.bind2:
            self.maintenance6 = vk.VkPhysicalDeviceMaintenance6FeaturesKHR(maintenance6=vk.VK_TRUE)
        features12 = vk.VkPhysicalDeviceVulkan12Features(
            pNext=self.maintenance6,
            runtimeDescriptorArray=vk.VK_TRUE,
            descriptorIndexing=vk.VK_TRUE,
            descriptorBindingPartiallyBound=vk.VK_TRUE,
            descriptorBindingVariableDescriptorCount=vk.VK_TRUE,
            shaderStorageBufferArrayNonUniformIndexing=vk.VK_TRUE,
            descriptorBindingStorageBufferUpdateAfterBind=vk.VK_TRUE,
        )
        # Every structure and array in a name of its own: the vulkan package does not keep
        # nested temporaries alive, and a freed queue priority is a validation error.
        priorities = ffi.new("float[1]", [1.0])
        queue_info = vk.VkDeviceQueueCreateInfo(
            queueFamilyIndex=0, queueCount=1, pQueuePriorities=priorities
        )
        features = vk.VkPhysicalDeviceFeatures(fragmentStoresAndAtomics=vk.VK_TRUE)
        extensions = ["VK_KHR_push_descriptor"] if options.push else []
        if options.bind2:
            extensions.append("VK_KHR_maintenance6")
        device_info = vk.VkDeviceCreateInfo(
            pNext=features12,
            pEnabledFeatures=features,
            enabledExtensionCount=len(extensions),
            ppEnabledExtensionNames=extensions,
            queueCreateInfoCount=1,
            pQueueCreateInfos=[queue_info],
        )
        self.device = vk.vkCreateDevice(physical, device_info, None)
        self.queue = vk.vkGetDeviceQueue(self.device, 0, 0)

    def buffer(self, size: int) -> tuple[Any, Any, Any]:
        buffer = vk.vkCreateBuffer(
            self.device,
            vk.VkBufferCreateInfo(size=size, usage=vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT),
            None,
        )
        requirements = vk.vkGetBufferMemoryRequirements(self.device, buffer)
        index = next(
            i
            for i in range(self.memory.memoryTypeCount)
            if requirements.memoryTypeBits & (1 << i)
            and self.memory.memoryTypes[i].propertyFlags & HOST_MEMORY == HOST_MEMORY
        )
        memory = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(allocationSize=requirements.size, memoryTypeIndex=index),
            None,
        )
        vk.vkBindBufferMemory(self.device, buffer, memory, 0)
        return buffer, memory, vk.vkMapMemory(self.device, memory, 0, size, 0)

    def set_layout(self, update_after_bind: bool) -> Any:
        options = self.options
        item_flags = vk.VK_DESCRIPTOR_BINDING_VARIABLE_DESCRIPTOR_COUNT_BIT
        if options.push:  # push descriptor layouts take neither flag
            item_flags = 0
        elif not options.not_partial:
            item_flags |= vk.VK_DESCRIPTOR_BINDING_PARTIALLY_BOUND_BIT
        if update_after_bind:
            item_flags |= vk.VK_DESCRIPTOR_BINDING_UPDATE_AFTER_BIND_BIT
        stage = STAGES
        storage = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        bindings = [
            vk.VkDescriptorSetLayoutBinding(
                binding=0, descriptorType=storage, descriptorCount=1, stageFlags=stage
            ),
            vk.VkDescriptorSetLayoutBinding(
                binding=1, descriptorType=storage, descriptorCount=options.layout_count,
                stageFlags=stage,
            ),
        ]  # fmt: skip
        flags_info = vk.VkDescriptorSetLayoutBindingFlagsCreateInfo(
            bindingCount=2, pBindingFlags=[0, item_flags]
        )
        return vk.vkCreateDescriptorSetLayout(
            self.device,
            vk.VkDescriptorSetLayoutCreateInfo(
                pNext=flags_info,
                flags=LAYOUT_UPDATE_AFTER_BIND_POOL
                if update_after_bind
                else LAYOUT_PUSH_DESCRIPTOR
                if options.push
                else 0,
                bindingCount=2,
                pBindings=bindings,
            ),
            None,
        )

    def run(self) -> dict[str, Any]:
        options = self.options
        device = self.device
        access = indices(options.access)
        result_size = max(1, len(access)) * SLOT_WORDS * 4
        result, result_memory, result_words = self.buffer(result_size)
        result_words[:] = b"\xee" * result_size
        item_count = options.layout_count
        items, items_memory, item_words = self.buffer(item_count * self.alignment)
        for i in range(item_count):
            item_words[i * self.alignment : i * self.alignment + 4] = (1000 + i).to_bytes(
                4, "little"
            )
        uab = options.update_after_bind
        layout = self.layout = self.set_layout(uab)
        pool = vk.vkCreateDescriptorPool(
            device,
            vk.VkDescriptorPoolCreateInfo(
                flags=(POOL_UPDATE_AFTER_BIND if uab else 0)
                | vk.VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT,
                maxSets=2 + options.extra_sets,
                poolSizeCount=1,
                pPoolSizes=[
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                        descriptorCount=(2 + options.extra_sets) * (item_count + 1),
                    )
                ],
            ),
            None,
        )
        counts = [options.variable_count, item_count]
        if options.push:
            return run_pushing(self, layout, result, result_size, items, result_words)
        sets = vk.vkAllocateDescriptorSets(
            device,
            vk.VkDescriptorSetAllocateInfo(
                pNext=vk.VkDescriptorSetVariableDescriptorCountAllocateInfo(
                    descriptorSetCount=2, pDescriptorCounts=counts
                ),
                descriptorPool=pool,
                descriptorSetCount=2,
                pSetLayouts=[layout, layout],
            ),
        )
        target, staging = sets[0], sets[1]
        self.write(target, 0, [0], result, result_size)
        self.write_items(target, staging, items, indices(options.write))
        bound = [target, *self.extra_sets(pool, result, result_size, items)]
        set_layouts = [layout]
        empty = None
        if options.fill_sets:
            empty = vk.vkCreateDescriptorSetLayout(
                device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=0), None
            )
            set_layouts += [empty] * (self.max_sets - 1)
        pipeline_layout = vk.vkCreatePipelineLayout(
            device,
            vk.VkPipelineLayoutCreateInfo(
                setLayoutCount=len(set_layouts), pSetLayouts=set_layouts,
                pushConstantRangeCount=1,
                pPushConstantRanges=[
                    vk.VkPushConstantRange(stageFlags=STAGES, offset=0, size=8)
                ],
            ),
            None,
        )  # fmt: skip
        module = self.module(options.shader)
        bind_point = vk.VK_PIPELINE_BIND_POINT_COMPUTE
        target_objects: list[Any] = []
        if options.frag:
            bind_point = vk.VK_PIPELINE_BIND_POINT_GRAPHICS
            fragment = self.module(options.frag)
            target_objects = self.render_target()
            pipeline = graphics._pipeline(
                self, target_objects[-2], pipeline_layout, module, fragment
            )
            vk.vkDestroyShaderModule(device, fragment, None)
        else:
            stage = vk.VkPipelineShaderStageCreateInfo(
                stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main"
            )
            pipeline = vk.vkCreateComputePipelines(
                device, None, 1,
                [vk.VkComputePipelineCreateInfo(stage=stage, layout=pipeline_layout)], None,
            )[0]  # fmt: skip
        command_pool = vk.vkCreateCommandPool(
            device, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None
        )
        command_buffer = vk.vkAllocateCommandBuffers(
            device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=command_pool,
                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=1,
            ),
        )[0]
        vk.vkBeginCommandBuffer(command_buffer, vk.VkCommandBufferBeginInfo())
        if options.frag:
            vk.vkCmdBeginRenderPass(
                command_buffer,
                vk.VkRenderPassBeginInfo(
                    renderPass=target_objects[-2], framebuffer=target_objects[-1],
                    renderArea=vk.VkRect2D(
                        offset=vk.VkOffset2D(x=0, y=0),
                        extent=vk.VkExtent2D(graphics.SIZE, graphics.SIZE),
                    ),
                    clearValueCount=1, pClearValues=[vk.VkClearValue()],
                ),
                vk.VK_SUBPASS_CONTENTS_INLINE,
            )  # fmt: skip
        vk.vkCmdBindPipeline(command_buffer, bind_point, pipeline)
        push = ffi.new("uint32_t[2]")
        start = time.perf_counter()
        for slot, index in enumerate(access):
            if (slot == 0 or len(bound) > 1) and options.bind2:
                self.bind2(command_buffer, pipeline_layout, bound[slot % len(bound)])
            elif slot == 0 or len(bound) > 1:
                vk.vkCmdBindDescriptorSets(
                    command_buffer, bind_point, pipeline_layout, 0, 1,
                    [bound[slot % len(bound)]], 0, None,
                )  # fmt: skip
            push[0], push[1] = index, slot
            vk.vkCmdPushConstants(command_buffer, pipeline_layout, STAGES, 0, 8, push)
            if options.frag:
                vk.vkCmdDraw(command_buffer, 3, 1, 0, 0)
            else:
                vk.vkCmdDispatch(command_buffer, 1, 1, 1)
        record_us = (time.perf_counter() - start) * 1e6 / max(1, len(access))
        if options.frag:
            vk.vkCmdEndRenderPass(command_buffer)
        vk.vkEndCommandBuffer(command_buffer)
        self.write_items(target, staging, items, indices(options.late_write))
        rounds = []
        submit_ms = []
        for round_number in range(options.submits):
            if options.change_one and round_number:
                self.write_items(target, staging, items, [round_number % options.variable_count])
            start = time.perf_counter()
            self.submit(command_buffer)
            submit_ms.append((time.perf_counter() - start) * 1e3)
            data = bytes(result_words[:result_size])
            rounds.append(
                [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)]
            )
        vk.vkDestroyPipeline(device, pipeline, None)
        if target_objects:
            image, memory, view, render_pass, framebuffer = target_objects
            vk.vkDestroyFramebuffer(device, framebuffer, None)
            vk.vkDestroyRenderPass(device, render_pass, None)
            vk.vkDestroyImageView(device, view, None)
            vk.vkDestroyImage(device, image, None)
            vk.vkFreeMemory(device, memory, None)
        vk.vkDestroyShaderModule(device, module, None)
        vk.vkDestroyPipelineLayout(device, pipeline_layout, None)
        vk.vkDestroyCommandPool(device, command_pool, None)
        if options.free_sets:
            vk.vkFreeDescriptorSets(device, pool, 2, sets)
        vk.vkDestroyDescriptorPool(device, pool, None)
        vk.vkDestroyDescriptorSetLayout(device, layout, None)
        if empty is not None:
            vk.vkDestroyDescriptorSetLayout(device, empty, None)
        for buffer, memory in ((result, result_memory), (items, items_memory)):
            vk.vkUnmapMemory(device, memory)
            vk.vkDestroyBuffer(device, buffer, None)
            vk.vkFreeMemory(device, memory, None)
        timings = {"record_per_dispatch_us": record_us, "submit_all_ms": submit_ms}
        return {"rounds": rounds, "slot_words": SLOT_WORDS, "timings": timings}

    def bind2(self, command_buffer: Any, pipeline_layout: Any, descriptor_set: Any) -> None:
        """vkCmdBindDescriptorSets2KHR (VK_KHR_maintenance6) for the shader stages."""
        bind = vk.vkGetDeviceProcAddr(self.device, "vkCmdBindDescriptorSets2KHR")
        sets = ffi.new("VkDescriptorSet[1]", [descriptor_set])
        info = ffi.new("VkBindDescriptorSetsInfoKHR *")
        info.sType = vk.VK_STRUCTURE_TYPE_BIND_DESCRIPTOR_SETS_INFO_KHR
        info.stageFlags = STAGES
        info.layout = pipeline_layout
        info.descriptorSetCount = 1
        info.pDescriptorSets = sets
        bind(command_buffer, info)

    def module(self, path: str) -> Any:
        code = Path(path).read_bytes()
        return vk.vkCreateShaderModule(
            self.device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None
        )

    def memory_type(self, bits: int, flags: int) -> int:
        return next(
            i
            for i in range(self.memory.memoryTypeCount)
            if bits & (1 << i) and self.memory.memoryTypes[i].propertyFlags & flags == flags
        )

    def render_target(self) -> list[Any]:
        """Image, memory, view, render pass and framebuffer of graphics.py's target."""
        image, memory, view = graphics._image(self)
        render_pass = graphics._render_pass(self)
        framebuffer = vk.vkCreateFramebuffer(
            self.device,
            vk.VkFramebufferCreateInfo(
                renderPass=render_pass, attachmentCount=1, pAttachments=[view],
                width=graphics.SIZE, height=graphics.SIZE, layers=1,
            ),
            None,
        )  # fmt: skip
        return [image, memory, view, render_pass, framebuffer]

    def extra_sets(self, pool: Any, result: Any, result_size: int, items: Any) -> list[Any]:
        """--extra-sets sets of the full variable count, every descriptor written."""
        count = self.options.extra_sets
        if not count:
            return []
        full = self.options.layout_count
        sets = vk.vkAllocateDescriptorSets(
            self.device,
            vk.VkDescriptorSetAllocateInfo(
                pNext=vk.VkDescriptorSetVariableDescriptorCountAllocateInfo(
                    descriptorSetCount=count, pDescriptorCounts=[full] * count
                ),
                descriptorPool=pool,
                descriptorSetCount=count,
                pSetLayouts=[self.layout] * count,
            ),
        )
        infos = [
            vk.VkDescriptorBufferInfo(buffer=items, offset=i * self.alignment, range=16)
            for i in range(full)
        ]
        for handle in sets:
            self.write(handle, 0, [0], result, result_size)
            write = vk.VkWriteDescriptorSet(
                dstSet=handle, dstBinding=1, dstArrayElement=0, descriptorCount=full,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, pBufferInfo=infos,
            )  # fmt: skip
            vk.vkUpdateDescriptorSets(self.device, 1, [write], 0, None)
        return list(sets)

    def write(self, target: Any, binding: int, elements: list[int], buffer: Any, size: int) -> None:
        writes = [
            vk.VkWriteDescriptorSet(
                dstSet=target, dstBinding=binding, dstArrayElement=element, descriptorCount=1,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=buffer, offset=offset, range=size)],
            )
            for element, offset in zip(elements, self.offsets(elements, binding), strict=True)
        ]  # fmt: skip
        if writes:
            vk.vkUpdateDescriptorSets(self.device, len(writes), writes, 0, None)

    def offsets(self, elements: list[int], binding: int) -> list[int]:
        return [0 if binding == 0 else element * self.alignment for element in elements]

    def write_items(self, target: Any, staging: Any, items: Any, elements: list[int]) -> None:
        """Write items[element] of binding 1 in the chosen way."""
        if not elements:
            return
        how = self.options.how
        if how == "copy":
            self.write(staging, 1, elements, items, 16)
            copies = [
                vk.VkCopyDescriptorSet(
                    srcSet=staging, srcBinding=1, srcArrayElement=element, dstSet=target,
                    dstBinding=1, dstArrayElement=element, descriptorCount=1,
                )
                for element in elements
            ]  # fmt: skip
            vk.vkUpdateDescriptorSets(self.device, 0, None, len(copies), copies)
        elif how == "template":
            for element in elements:
                self.write_with_template(target, items, element)
        else:
            self.write(target, 1, elements, items, 16)

    def write_with_template(self, target: Any, items: Any, element: int) -> None:
        info = ffi.new("VkDescriptorBufferInfo *")
        info.buffer = items
        info.offset = element * self.alignment
        info.range = 16
        entry = vk.VkDescriptorUpdateTemplateEntry(
            dstBinding=1, dstArrayElement=element, descriptorCount=1,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, offset=0,
            stride=ffi.sizeof("VkDescriptorBufferInfo"),
        )  # fmt: skip
        template = vk.vkCreateDescriptorUpdateTemplate(
            self.device,
            vk.VkDescriptorUpdateTemplateCreateInfo(
                descriptorUpdateEntryCount=1, pDescriptorUpdateEntries=[entry],
                templateType=vk.VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET,
                descriptorSetLayout=self.layout,
            ),
            None,
        )  # fmt: skip
        vk.vkUpdateDescriptorSetWithTemplate(self.device, target, template, info)
        vk.vkDestroyDescriptorUpdateTemplate(self.device, template, None)

    def submit(self, command_buffer: Any) -> None:
        fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        info = vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[command_buffer])
        vk.vkQueueSubmit(self.queue, 1, [info], fence)
        vk.vkWaitForFences(self.device, 1, [fence], vk.VK_TRUE, FENCE_TIMEOUT)
        vk.vkDestroyFence(self.device, fence, None)

    def close(self) -> None:
        vk.vkDestroyDevice(self.device, None)
        destroy = vk.vkGetInstanceProcAddr(self.instance, "vkDestroyDebugUtilsMessengerEXT")
        destroy(self.instance, self.messenger, None)
        vk.vkDestroyInstance(self.instance, None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shader", required=True, help="compute (vertex with --frag) .spv")
    parser.add_argument("--frag", help="fragment shader .spv: draws instead of dispatches")
    parser.add_argument("--layout-count", type=int, default=16)
    parser.add_argument("--variable-count", type=int, default=8)
    parser.add_argument("--write", default="0,1,2,3,4,5,6,7")
    parser.add_argument("--late-write", default="")
    parser.add_argument("--access", default="0")
    parser.add_argument("--how", choices=["write", "copy", "template"], default="write")
    parser.add_argument("--not-partial", action="store_true")
    parser.add_argument("--update-after-bind", action="store_true")
    parser.add_argument("--fill-sets", action="store_true")
    parser.add_argument("--push", action="store_true", help="push descriptors (compute only)")
    parser.add_argument("--bind2", action="store_true", help="vkCmdBindDescriptorSets2KHR")
    parser.add_argument("--free-sets", action="store_true")
    parser.add_argument("--submits", type=int, default=1)
    parser.add_argument("--extra-sets", type=int, default=0)
    parser.add_argument("--change-one", action="store_true")
    parser.add_argument("--layer", action="append", default=[])
    options = parser.parse_args(argv)
    app = IndexingApp(options)
    result = app.run()
    app.close()
    result["messages"] = messages
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
