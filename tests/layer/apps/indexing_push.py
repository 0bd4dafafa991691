"""--push for indexing_app.py: the set's descriptors pushed with VK_KHR_push_descriptor."""

from __future__ import annotations

from typing import Any

import vulkan as vk

ffi = vk.ffi
SLOT_WORDS = 32
STAGES = (
    vk.VK_SHADER_STAGE_COMPUTE_BIT | vk.VK_SHADER_STAGE_VERTEX_BIT | vk.VK_SHADER_STAGE_FRAGMENT_BIT
)


def indices(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part]


def run_pushing(
    app: Any, layout: Any, result: Any, result_size: int, items: Any, result_words: Any
) -> dict[str, Any]:
    """--push: the set's descriptors pushed (VK_KHR_push_descriptor) before the
    dispatches, one per --access index; the rest of the app is left out."""
    device = app.device
    pipeline_layout = vk.vkCreatePipelineLayout(
        device,
        vk.VkPipelineLayoutCreateInfo(
            setLayoutCount=1, pSetLayouts=[layout], pushConstantRangeCount=1,
            pPushConstantRanges=[vk.VkPushConstantRange(stageFlags=STAGES, offset=0, size=8)],
        ),
        None,
    )  # fmt: skip
    module = app.module(app.options.shader)
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
            commandPool=command_pool, level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
            commandBufferCount=1,
        ),
    )[0]  # fmt: skip
    elements = indices(app.options.write)
    storage = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
    writes = [
        vk.VkWriteDescriptorSet(
            dstBinding=0, descriptorCount=1, descriptorType=storage,
            pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=result, offset=0, range=result_size)],
        ),
        *(
            vk.VkWriteDescriptorSet(
                dstBinding=1, dstArrayElement=element, descriptorCount=1,
                descriptorType=storage,
                pBufferInfo=[
                    vk.VkDescriptorBufferInfo(
                        buffer=items, offset=element * app.alignment, range=16
                    )
                ],
            )
            for element in elements
        ),
    ]  # fmt: skip
    push_descriptors = vk.vkGetDeviceProcAddr(device, "vkCmdPushDescriptorSetKHR")
    compute = vk.VK_PIPELINE_BIND_POINT_COMPUTE
    vk.vkBeginCommandBuffer(command_buffer, vk.VkCommandBufferBeginInfo())
    vk.vkCmdBindPipeline(command_buffer, compute, pipeline)
    push_descriptors(command_buffer, compute, pipeline_layout, 0, len(writes), writes)
    values = ffi.new("uint32_t[2]")
    for slot, index in enumerate(indices(app.options.access)):
        values[0], values[1] = index, slot
        vk.vkCmdPushConstants(command_buffer, pipeline_layout, STAGES, 0, 8, values)
        vk.vkCmdDispatch(command_buffer, 1, 1, 1)
    vk.vkEndCommandBuffer(command_buffer)
    app.submit(command_buffer)
    data = bytes(result_words[:result_size])
    words = [int.from_bytes(data[i : i + 4], "little") for i in range(0, len(data), 4)]
    vk.vkDestroyPipeline(device, pipeline, None)
    vk.vkDestroyShaderModule(device, module, None)
    vk.vkDestroyPipelineLayout(device, pipeline_layout, None)
    vk.vkDestroyCommandPool(device, command_pool, None)
    return {"rounds": [words], "slot_words": SLOT_WORDS}
