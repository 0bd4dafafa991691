"""Compute for vk_app.py: one region of a storage buffer per dispatch (no barriers needed),
recorded into a primary or a secondary command buffer with the chosen dispatch command."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import vulkan as vk

ffi = vk.ffi
LOCAL_SIZE = 64


def run_compute(app: Any) -> dict[str, Any]:
    options = app.options
    count = options.dispatches
    size = count * LOCAL_SIZE * 4
    buffer, memory = app.buffer(size, vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT)
    mapped = vk.vkMapMemory(app.device, memory, 0, size, 0)
    initial = bytes(b for i in range(count * LOCAL_SIZE) for b in (i * 7 + 3).to_bytes(4, "little"))
    mapped[:] = initial
    binding = vk.VkDescriptorSetLayoutBinding(
        binding=0,
        descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        descriptorCount=1,
        stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
    )
    set_layout = vk.vkCreateDescriptorSetLayout(
        app.device,
        vk.VkDescriptorSetLayoutCreateInfo(bindingCount=1, pBindings=[binding]),
        None,
    )
    layouts = app.set_layouts(set_layout)
    push = vk.VkPushConstantRange(stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT, offset=0, size=8)
    layout = vk.vkCreatePipelineLayout(
        app.device,
        vk.VkPipelineLayoutCreateInfo(
            setLayoutCount=len(layouts), pSetLayouts=layouts,
            pushConstantRangeCount=1, pPushConstantRanges=[push],
        ),
        None,
    )  # fmt: skip
    timings: dict[str, float] = {}
    start = time.perf_counter()
    if options.inline_module:
        # VK_KHR_maintenance5: no module; the code rides in the stage's pNext chain.
        module = None
        code = Path(options.shader).read_bytes()
        stage = vk.VkPipelineShaderStageCreateInfo(
            pNext=vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code),
            stage=vk.VK_SHADER_STAGE_COMPUTE_BIT,
            pName="main",
        )
    else:
        module = app.module(options.shader)
        stage = vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main"
        )
    timings["create_shader_module_ms"] = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    pipeline = vk.vkCreateComputePipelines(
        app.device, None, 1, [vk.VkComputePipelineCreateInfo(stage=stage, layout=layout)], None
    )[0]
    timings["create_pipeline_ms"] = (time.perf_counter() - start) * 1e3
    if options.destroy_module_early and module is not None:
        vk.vkDestroyShaderModule(app.device, module, None)
    if options.destroy_layout_early:
        vk.vkDestroyPipelineLayout(app.device, layout, None)
        layout = vk.vkCreatePipelineLayout(
            app.device,
            vk.VkPipelineLayoutCreateInfo(
                setLayoutCount=len(layouts), pSetLayouts=layouts,
                pushConstantRangeCount=1, pPushConstantRanges=[push],
            ),
            None,
        )  # fmt: skip
    pool = vk.vkCreateDescriptorPool(
        app.device,
        vk.VkDescriptorPoolCreateInfo(
            maxSets=1,
            poolSizeCount=1,
            pPoolSizes=[
                vk.VkDescriptorPoolSize(
                    type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=1
                )
            ],
        ),
        None,
    )
    descriptor_set = vk.vkAllocateDescriptorSets(
        app.device,
        vk.VkDescriptorSetAllocateInfo(
            descriptorPool=pool, descriptorSetCount=1, pSetLayouts=[set_layout]
        ),
    )[0]
    vk.vkUpdateDescriptorSets(
        app.device,
        1,
        [
            vk.VkWriteDescriptorSet(
                dstSet=descriptor_set, dstBinding=0, descriptorCount=1,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=buffer, offset=0, range=size)],
            )
        ],
        0,
        None,
    )  # fmt: skip
    app.indirect_buffer, indirect_memory = app.buffer(16, vk.VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT)
    indirect_words = vk.vkMapMemory(app.device, indirect_memory, 0, 16, 0)
    indirect_words[:12] = b"\x01\x00\x00\x00" * 3
    vk.vkUnmapMemory(app.device, indirect_memory)
    primary = app.command_buffers(1, vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY)[0]
    app.name(vk.VK_OBJECT_TYPE_COMMAND_BUFFER, primary, "ComputeCommandBuffer")
    app.name(vk.VK_OBJECT_TYPE_PIPELINE, pipeline, "ComputePipeline")
    if not options.destroy_module_early and module is not None:
        app.name(vk.VK_OBJECT_TYPE_SHADER_MODULE, module, "ComputeShader")
    recorder = primary
    if options.secondary:
        recorder = app.command_buffers(1, vk.VK_COMMAND_BUFFER_LEVEL_SECONDARY)[0]
        app.name(vk.VK_OBJECT_TYPE_COMMAND_BUFFER, recorder, "SecondaryCommandBuffer")
    for _ in range(2 if options.rerecord else 1):
        _record_compute(app, primary, recorder, pipeline, layout, descriptor_set, count, timings)
    submit_times = [app.submit(primary) for _ in range(options.repeat)]
    timings["submit_ms"] = min(submit_times) * 1e3
    timings["submit_all_ms"] = [t * 1e3 for t in submit_times]
    data = bytes(mapped[:size])
    vk.vkUnmapMemory(app.device, memory)
    if not options.leak:
        vk.vkFreeCommandBuffers(app.device, app.pool, 1, [primary])
        vk.vkDestroyPipeline(app.device, pipeline, None)
        if not options.destroy_module_early and module is not None:
            vk.vkDestroyShaderModule(app.device, module, None)
        vk.vkDestroyDescriptorPool(app.device, pool, None)
        vk.vkDestroyPipelineLayout(app.device, layout, None)
        vk.vkDestroyDescriptorSetLayout(app.device, set_layout, None)
        for handle, allocation in ((buffer, memory), (app.indirect_buffer, indirect_memory)):
            vk.vkDestroyBuffer(app.device, handle, None)
            vk.vkFreeMemory(app.device, allocation, None)
    return {"data_sha256": hashlib.sha256(data).hexdigest(), "first_words": list(
        int.from_bytes(data[i : i + 4], "little") for i in range(0, min(len(data), 64), 4)
    ), "timings": timings}  # fmt: skip


def _record_compute(
    app: Any, primary: Any, recorder: Any, pipeline: Any, layout: Any, descriptor_set: Any,
    count: int, timings: dict[str, float],
) -> None:  # fmt: skip
    options = app.options
    secondary = recorder is not primary
    begin = vk.VkCommandBufferBeginInfo()
    if secondary:
        begin = vk.VkCommandBufferBeginInfo(pInheritanceInfo=vk.VkCommandBufferInheritanceInfo())
    vk.vkBeginCommandBuffer(recorder, begin)
    vk.vkCmdBindPipeline(recorder, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
    vk.vkCmdBindDescriptorSets(
        recorder, vk.VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, [descriptor_set], 0, None
    )
    if options.host_event:
        # Waits for an event the host sets only after vkQueueSubmit returned: a layer that
        # waits inside vkQueueSubmit would deadlock here (seed 000, CmdWaitEvents).
        vk.vkCmdWaitEvents(
            recorder, 1, [app.event], vk.VK_PIPELINE_STAGE_HOST_BIT,
            vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, None, 0, None, 0, None,
        )  # fmt: skip
    push_data = ffi.new("uint32_t[2]")
    start = time.perf_counter()
    for index in range(count):
        push_data[0] = index * LOCAL_SIZE
        push_data[1] = options.bad_index if index == options.bad_dispatch else 0xFFFFFFFF
        vk.vkCmdPushConstants(recorder, layout, vk.VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, push_data)
        if options.dispatch_command == "indirect":
            vk.vkCmdDispatchIndirect(recorder, app.indirect_buffer, 0)
        elif options.dispatch_command == "base":
            vk.vkCmdDispatchBase(recorder, 0, 0, 0, 1, 1, 1)
        else:
            vk.vkCmdDispatch(recorder, 1, 1, 1)
    timings["record_per_dispatch_us"] = (time.perf_counter() - start) * 1e6 / max(count, 1)
    vk.vkEndCommandBuffer(recorder)
    if secondary:
        vk.vkBeginCommandBuffer(primary, vk.VkCommandBufferBeginInfo())
        vk.vkCmdExecuteCommands(primary, 1, [recorder])
        vk.vkEndCommandBuffer(primary)
