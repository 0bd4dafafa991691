"""Offscreen graphics for vk_app.py: N draws, each filling one vertical stripe of a 16x16
image, read back through a host-visible buffer. ``--draw-command`` picks which of the four
draw commands records them."""

from __future__ import annotations

import hashlib
from typing import Any

import vulkan as vk

ffi = vk.ffi
SIZE = 16
COLOR_FORMAT = vk.VK_FORMAT_R8G8B8A8_UNORM


def _image(app: Any) -> tuple[Any, Any, Any]:
    image = vk.vkCreateImage(
        app.device,
        vk.VkImageCreateInfo(
            imageType=vk.VK_IMAGE_TYPE_2D,
            format=COLOR_FORMAT,
            extent=vk.VkExtent3D(width=SIZE, height=SIZE, depth=1),
            mipLevels=1,
            arrayLayers=1,
            samples=vk.VK_SAMPLE_COUNT_1_BIT,
            tiling=vk.VK_IMAGE_TILING_OPTIMAL,
            usage=vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
            initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
        ),
        None,
    )
    requirements = vk.vkGetImageMemoryRequirements(app.device, image)
    memory = vk.vkAllocateMemory(
        app.device,
        vk.VkMemoryAllocateInfo(
            allocationSize=requirements.size,
            memoryTypeIndex=app.memory_type(requirements.memoryTypeBits, 0),
        ),
        None,
    )
    vk.vkBindImageMemory(app.device, image, memory, 0)
    view = vk.vkCreateImageView(
        app.device,
        vk.VkImageViewCreateInfo(
            image=image,
            viewType=vk.VK_IMAGE_VIEW_TYPE_2D,
            format=COLOR_FORMAT,
            subresourceRange=vk.VkImageSubresourceRange(
                aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, levelCount=1, layerCount=1
            ),
        ),
        None,
    )
    return image, memory, view


def _render_pass(app: Any) -> Any:
    attachment = vk.VkAttachmentDescription(
        format=COLOR_FORMAT,
        samples=vk.VK_SAMPLE_COUNT_1_BIT,
        loadOp=vk.VK_ATTACHMENT_LOAD_OP_CLEAR,
        storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
        stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE,
        stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE,
        initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
        finalLayout=vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
    )
    reference = vk.VkAttachmentReference(
        attachment=0, layout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
    )
    subpass = vk.VkSubpassDescription(
        pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
        colorAttachmentCount=1,
        pColorAttachments=[reference],
    )
    dependency = vk.VkSubpassDependency(
        srcSubpass=0,
        dstSubpass=vk.VK_SUBPASS_EXTERNAL,
        srcStageMask=vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
        dstStageMask=vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
        srcAccessMask=vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
        dstAccessMask=vk.VK_ACCESS_TRANSFER_READ_BIT,
    )
    return vk.vkCreateRenderPass(
        app.device,
        vk.VkRenderPassCreateInfo(
            attachmentCount=1,
            pAttachments=[attachment],
            subpassCount=1,
            pSubpasses=[subpass],
            dependencyCount=1,
            pDependencies=[dependency],
        ),
        None,
    )


def _pipeline(app: Any, render_pass: Any, layout: Any, vert: Any, frag: Any) -> Any:
    stages = [
        vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_VERTEX_BIT, module=vert, pName="main"
        ),
        vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_FRAGMENT_BIT, module=frag, pName="main"
        ),
    ]
    viewport = vk.VkViewport(x=0, y=0, width=SIZE, height=SIZE, minDepth=0, maxDepth=1)
    scissor = vk.VkRect2D(offset=vk.VkOffset2D(x=0, y=0), extent=vk.VkExtent2D(SIZE, SIZE))
    blend = vk.VkPipelineColorBlendAttachmentState(colorWriteMask=0xF)
    info = vk.VkGraphicsPipelineCreateInfo(
        stageCount=2,
        pStages=stages,
        pVertexInputState=vk.VkPipelineVertexInputStateCreateInfo(),
        pInputAssemblyState=vk.VkPipelineInputAssemblyStateCreateInfo(
            topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST
        ),
        pViewportState=vk.VkPipelineViewportStateCreateInfo(
            viewportCount=1, pViewports=[viewport], scissorCount=1, pScissors=[scissor]
        ),
        pRasterizationState=vk.VkPipelineRasterizationStateCreateInfo(
            polygonMode=vk.VK_POLYGON_MODE_FILL, cullMode=vk.VK_CULL_MODE_NONE, lineWidth=1.0
        ),
        pMultisampleState=vk.VkPipelineMultisampleStateCreateInfo(
            rasterizationSamples=vk.VK_SAMPLE_COUNT_1_BIT
        ),
        pColorBlendState=vk.VkPipelineColorBlendStateCreateInfo(
            attachmentCount=1, pAttachments=[blend]
        ),
        layout=layout,
        renderPass=render_pass,
        subpass=0,
    )
    return vk.vkCreateGraphicsPipelines(app.device, None, 1, [info], None)[0]


def _indirect_buffer(app: Any, draws: int, indexed: bool) -> tuple[Any, Any, Any, Any]:
    """Indirect commands (one per draw) and, for indexed draws, an index buffer 0..5."""
    usage = vk.VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT | vk.VK_BUFFER_USAGE_INDEX_BUFFER_BIT
    buffer, memory = app.buffer(64 * (draws + 1), usage)
    mapped = vk.vkMapMemory(app.device, memory, 0, 64 * (draws + 1), 0)
    words = [0] * (16 * (draws + 1))
    for draw in range(draws):
        base = draw * 5
        words[base : base + 5] = [6, 1, 0, 0, 0]  # fits both command layouts
    index_words = 16 * draws
    words[index_words : index_words + 3] = [0 | (1 << 16), 2 | (3 << 16), 4 | (5 << 16)]
    words[index_words + 8] = 1  # the draw count of the *_count commands, at byte 64*draws+32
    mapped[: len(words) * 4] = b"".join(w.to_bytes(4, "little") for w in words)
    vk.vkUnmapMemory(app.device, memory)
    return buffer, memory, 64 * draws, 20


def run_graphics(app: Any) -> dict[str, Any]:
    options = app.options
    draws = options.draws
    image, image_memory, view = _image(app)
    render_pass = _render_pass(app)
    framebuffer = vk.vkCreateFramebuffer(
        app.device,
        vk.VkFramebufferCreateInfo(
            renderPass=render_pass,
            attachmentCount=1,
            pAttachments=[view],
            width=SIZE,
            height=SIZE,
            layers=1,
        ),
        None,
    )
    stage_flags = vk.VK_SHADER_STAGE_VERTEX_BIT | vk.VK_SHADER_STAGE_FRAGMENT_BIT
    push = vk.VkPushConstantRange(stageFlags=stage_flags, offset=0, size=12)
    empty = vk.vkCreateDescriptorSetLayout(
        app.device, vk.VkDescriptorSetLayoutCreateInfo(bindingCount=0), None
    )
    layouts = app.set_layouts(empty)
    layout = vk.vkCreatePipelineLayout(
        app.device,
        vk.VkPipelineLayoutCreateInfo(
            setLayoutCount=len(layouts),
            pSetLayouts=layouts,
            pushConstantRangeCount=1,
            pPushConstantRanges=[push],
        ),
        None,
    )
    vert = app.module(options.vert)
    frag = app.module(options.frag)
    pipeline = _pipeline(app, render_pass, layout, vert, frag)
    app.name(vk.VK_OBJECT_TYPE_PIPELINE, pipeline, "GraphicsPipeline")
    if options.destroy_module_early:
        vk.vkDestroyShaderModule(app.device, vert, None)
        vk.vkDestroyShaderModule(app.device, frag, None)
    else:
        app.name(vk.VK_OBJECT_TYPE_SHADER_MODULE, vert, "VertexShader")
        app.name(vk.VK_OBJECT_TYPE_SHADER_MODULE, frag, "FragmentShader")
    readback, readback_memory = app.buffer(SIZE * SIZE * 4, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT)
    indexed = options.draw_command.startswith("indexed")
    indirect = _indirect_buffer(app, draws, indexed)

    command_buffer = app.command_buffers(1, vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY)[0]
    app.name(vk.VK_OBJECT_TYPE_COMMAND_BUFFER, command_buffer, "DrawCommandBuffer")
    vk.vkBeginCommandBuffer(command_buffer, vk.VkCommandBufferBeginInfo())
    clear = vk.VkClearValue(color=vk.VkClearColorValue(float32=[0.0, 0.0, 0.0, 1.0]))
    vk.vkCmdBeginRenderPass(
        command_buffer,
        vk.VkRenderPassBeginInfo(
            renderPass=render_pass,
            framebuffer=framebuffer,
            renderArea=vk.VkRect2D(
                offset=vk.VkOffset2D(x=0, y=0), extent=vk.VkExtent2D(SIZE, SIZE)
            ),
            clearValueCount=1,
            pClearValues=[clear],
        ),
        vk.VK_SUBPASS_CONTENTS_INLINE,
    )
    vk.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline)
    if indexed:
        vk.vkCmdBindIndexBuffer(command_buffer, indirect[0], indirect[2], vk.VK_INDEX_TYPE_UINT16)
    push_data = ffi.new("uint32_t[3]")
    for draw in range(draws):
        push_data[0:3] = [draw, draws, options.bad_draw & 0xFFFFFFFF]
        vk.vkCmdPushConstants(command_buffer, layout, stage_flags, 0, 12, push_data)
        command = options.draw_command
        if command == "draw":
            vk.vkCmdDraw(command_buffer, 6, 1, 0, 0)
        elif command == "indexed":
            vk.vkCmdDrawIndexed(command_buffer, 6, 1, 0, 0, 0)
        elif command == "indirect":
            vk.vkCmdDrawIndirect(command_buffer, indirect[0], 0, 1, 16)
        elif command == "indexed_indirect":
            vk.vkCmdDrawIndexedIndirect(command_buffer, indirect[0], 0, 1, 20)
        elif command == "indirect_count":
            vk.vkCmdDrawIndirectCount(
                command_buffer, indirect[0], 0, indirect[0], indirect[2] + 32, 1, 16
            )
        else:
            vk.vkCmdDrawIndexedIndirectCount(
                command_buffer, indirect[0], 0, indirect[0], indirect[2] + 32, 1, 20
            )
    vk.vkCmdEndRenderPass(command_buffer)
    vk.vkCmdCopyImageToBuffer(
        command_buffer,
        image,
        vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
        readback,
        1,
        [
            vk.VkBufferImageCopy(
                imageSubresource=vk.VkImageSubresourceLayers(
                    aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, layerCount=1
                ),
                imageExtent=vk.VkExtent3D(width=SIZE, height=SIZE, depth=1),
            )
        ],
    )
    barrier = vk.VkMemoryBarrier(
        srcAccessMask=vk.VK_ACCESS_TRANSFER_WRITE_BIT, dstAccessMask=vk.VK_ACCESS_HOST_READ_BIT
    )
    vk.vkCmdPipelineBarrier(
        command_buffer,
        vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
        vk.VK_PIPELINE_STAGE_HOST_BIT,
        0,
        1,
        [barrier],
        0,
        None,
        0,
        None,
    )
    vk.vkEndCommandBuffer(command_buffer)
    app.submit(command_buffer)
    mapped = vk.vkMapMemory(app.device, readback_memory, 0, SIZE * SIZE * 4, 0)
    pixels = bytes(mapped[: SIZE * SIZE * 4])
    vk.vkUnmapMemory(app.device, readback_memory)

    vk.vkFreeCommandBuffers(app.device, app.pool, 1, [command_buffer])
    vk.vkDestroyPipeline(app.device, pipeline, None)
    if not options.destroy_module_early:
        vk.vkDestroyShaderModule(app.device, vert, None)
        vk.vkDestroyShaderModule(app.device, frag, None)
    vk.vkDestroyPipelineLayout(app.device, layout, None)
    vk.vkDestroyDescriptorSetLayout(app.device, empty, None)
    vk.vkDestroyFramebuffer(app.device, framebuffer, None)
    vk.vkDestroyRenderPass(app.device, render_pass, None)
    vk.vkDestroyImageView(app.device, view, None)
    vk.vkDestroyImage(app.device, image, None)
    vk.vkFreeMemory(app.device, image_memory, None)
    for handle, memory in ((readback, readback_memory), indirect[:2]):
        vk.vkDestroyBuffer(app.device, handle, None)
        vk.vkFreeMemory(app.device, memory, None)
    return {
        "data_sha256": hashlib.sha256(pixels).hexdigest(),
        "first_words": [int.from_bytes(pixels[i : i + 4], "little") for i in range(0, 64, 4)],
    }
