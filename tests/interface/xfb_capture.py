"""Capture transform-feedback output of a vertex shader (VK_EXT_transform_feedback).

The harness's draw helper has no transform-feedback hook, so this draws points from a
vertex-only pipeline with rasterization discarded, inside an attachment-less dynamic rendering
instance, with one capture buffer per XfbBuffer, and returns their bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from typing import Any

import vulkan as vkapi

from tests.harness import VulkanContext
from tests.harness.buffers import Buffer, memory_barrier
from tests.harness.pipeline import Keep, create_shader_module, make_layout, stage_info


def capture(
    vk: VulkanContext, vertex_words: list[int], vertex_count: int, buffer_sizes: Sequence[int]
) -> list[bytes]:
    bind = vkapi.vkGetDeviceProcAddr(vk.device, "vkCmdBindTransformFeedbackBuffersEXT")
    begin = vkapi.vkGetDeviceProcAddr(vk.device, "vkCmdBeginTransformFeedbackEXT")
    end = vkapi.vkGetDeviceProcAddr(vk.device, "vkCmdEndTransformFeedbackEXT")
    keep = Keep()
    with ExitStack() as cleanup:
        buffers = [Buffer(vk, size) for size in buffer_sizes]
        for buffer in buffers:
            cleanup.callback(buffer.destroy)
        layout = make_layout(vk, None, vkapi.VK_SHADER_STAGE_ALL_GRAPHICS, None)
        cleanup.callback(layout.destroy)
        module = create_shader_module(vk, vertex_words)
        cleanup.callback(vkapi.vkDestroyShaderModule, vk.device, module, None)
        pipeline = _pipeline(vk, keep, module, layout.handle)
        cleanup.callback(vkapi.vkDestroyPipeline, vk.device, pipeline, None)
        rendering = vkapi.VkRenderingInfo(
            renderArea=vkapi.VkRect2D(
                offset=vkapi.VkOffset2D(x=0, y=0), extent=vkapi.VkExtent2D(width=1, height=1)
            ),
            layerCount=1,
        )

        def record(command_buffer: Any) -> None:
            memory_barrier(command_buffer)
            vkapi.vkCmdBeginRendering(command_buffer, rendering)
            vkapi.vkCmdBindPipeline(command_buffer, vkapi.VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline)
            handles = [buffer.handle for buffer in buffers]
            bind(
                command_buffer,
                0,
                len(handles),
                handles,
                [0] * len(handles),
                [buffer.size for buffer in buffers],
            )
            begin(command_buffer, 0, 0, None, None)
            vkapi.vkCmdDraw(command_buffer, vertex_count, 1, 0, 0)
            end(command_buffer, 0, 0, None, None)
            vkapi.vkCmdEndRendering(command_buffer)
            memory_barrier(command_buffer, host_read=True)

        vk.submit(record)
        return [buffer.read() for buffer in buffers]


def _pipeline(vk: VulkanContext, keep: Keep, module: Any, layout: Any) -> Any:
    info = vkapi.VkGraphicsPipelineCreateInfo(
        pNext=keep(vkapi.VkPipelineRenderingCreateInfo()),
        pStages=[stage_info(keep, vkapi.VK_SHADER_STAGE_VERTEX_BIT, module, "main", None)],
        pVertexInputState=keep(vkapi.VkPipelineVertexInputStateCreateInfo()),
        pInputAssemblyState=keep(
            vkapi.VkPipelineInputAssemblyStateCreateInfo(
                topology=vkapi.VK_PRIMITIVE_TOPOLOGY_POINT_LIST
            )
        ),
        pRasterizationState=keep(
            vkapi.VkPipelineRasterizationStateCreateInfo(
                rasterizerDiscardEnable=vkapi.VK_TRUE,
                polygonMode=vkapi.VK_POLYGON_MODE_FILL,
                cullMode=vkapi.VK_CULL_MODE_NONE,
                frontFace=vkapi.VK_FRONT_FACE_COUNTER_CLOCKWISE,
                lineWidth=1.0,
            )
        ),
        layout=layout,
        basePipelineIndex=-1,
    )
    return vkapi.vkCreateGraphicsPipelines(vk.device, None, 1, [info], None)[0]
