"""Running one offscreen draw with dynamic rendering into a colour image that is read back.

The pipeline is deliberately plain (no blending, no culling, no depth, one sample) so that a
pixel's value is exactly what the fragment shader wrote; optional tessellation and geometry
stages, vertex buffers, and indexed or indirect draws cover the shapes instrumentation tests
need.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import vulkan as vkapi

from tests.harness.buffers import Buffer, BytesLike, memory_barrier
from tests.harness.descriptors import SetsArg
from tests.harness.formats import format_info
from tests.harness.images import GENERAL, Image
from tests.harness.pipeline import (
    Keep,
    PipelineLayout,
    RunResult,
    Specialization,
    SpirvWords,
    create_shader_module,
    make_layout,
    snapshot,
    specialization_info,
    stage_info,
)

if TYPE_CHECKING:
    from tests.harness.context import VulkanContext


@dataclass
class VertexBuffer:
    """A vertex buffer binding: ``attributes`` are (location, format, byte offset)."""

    buffer: Buffer
    stride: int
    attributes: Sequence[tuple[int, str | int, int]]
    per_instance: bool = False


@dataclass
class Draw:
    """How to draw: plain, indexed (uint32 indices) or indirect (one command at offset 0)."""

    vertex_count: int = 3
    instance_count: int = 1
    first_vertex: int = 0
    first_instance: int = 0
    index_buffer: Buffer | None = None
    index_count: int | None = None
    indirect_buffer: Buffer | None = None

    def record(self, command_buffer: Any) -> None:
        if self.index_buffer is not None:
            vkapi.vkCmdBindIndexBuffer(
                command_buffer, self.index_buffer.handle, 0, vkapi.VK_INDEX_TYPE_UINT32
            )
        if self.indirect_buffer is not None:
            if self.index_buffer is not None:
                vkapi.vkCmdDrawIndexedIndirect(
                    command_buffer, self.indirect_buffer.handle, 0, 1, 20
                )
            else:
                vkapi.vkCmdDrawIndirect(command_buffer, self.indirect_buffer.handle, 0, 1, 16)
        elif self.index_buffer is not None:
            count = self.vertex_count if self.index_count is None else self.index_count
            vkapi.vkCmdDrawIndexed(
                command_buffer,
                count,
                self.instance_count,
                0,
                self.first_vertex,
                self.first_instance,
            )
        else:
            vkapi.vkCmdDraw(
                command_buffer,
                self.vertex_count,
                self.instance_count,
                self.first_vertex,
                self.first_instance,
            )


_ALL_GRAPHICS = vkapi.VK_SHADER_STAGE_ALL_GRAPHICS


def _vertex_input(keep: Keep, vertex_buffers: Sequence[VertexBuffer]) -> Any:
    bindings, attributes = [], []
    for index, vb in enumerate(vertex_buffers):
        rate = vkapi.VK_VERTEX_INPUT_RATE_INSTANCE if vb.per_instance else 0
        bindings.append(
            vkapi.VkVertexInputBindingDescription(binding=index, stride=vb.stride, inputRate=rate)
        )
        for location, fmt, offset in vb.attributes:
            attributes.append(
                vkapi.VkVertexInputAttributeDescription(
                    location=location,
                    binding=index,
                    format=format_info(fmt).vk_format if isinstance(fmt, str) else fmt,
                    offset=offset,
                )
            )
    return keep(
        vkapi.VkPipelineVertexInputStateCreateInfo(
            pVertexBindingDescriptions=bindings or None,
            pVertexAttributeDescriptions=attributes or None,
        )
    )


def _create_pipeline(
    vk: VulkanContext,
    keep: Keep,
    stages: list[Any],
    layout: PipelineLayout,
    vertex_buffers: Sequence[VertexBuffer],
    color_format: int,
    size: tuple[int, int],
    topology: int,
    patch_control_points: int | None,
) -> Any:
    width, height = size
    viewport = vkapi.VkViewport(
        x=0.0, y=0.0, width=float(width), height=float(height), minDepth=0.0, maxDepth=1.0
    )
    scissor = vkapi.VkRect2D(
        offset=vkapi.VkOffset2D(x=0, y=0), extent=vkapi.VkExtent2D(width=width, height=height)
    )
    blend = vkapi.VkPipelineColorBlendAttachmentState(
        blendEnable=vkapi.VK_FALSE,
        colorWriteMask=vkapi.VK_COLOR_COMPONENT_R_BIT
        | vkapi.VK_COLOR_COMPONENT_G_BIT
        | vkapi.VK_COLOR_COMPONENT_B_BIT
        | vkapi.VK_COLOR_COMPONENT_A_BIT,
    )
    tessellation = None
    if patch_control_points is not None:
        tessellation = keep(
            vkapi.VkPipelineTessellationStateCreateInfo(patchControlPoints=patch_control_points)
        )
    info = vkapi.VkGraphicsPipelineCreateInfo(
        pNext=keep(vkapi.VkPipelineRenderingCreateInfo(pColorAttachmentFormats=[color_format])),
        pStages=stages,
        pVertexInputState=_vertex_input(keep, vertex_buffers),
        pInputAssemblyState=keep(vkapi.VkPipelineInputAssemblyStateCreateInfo(topology=topology)),
        pTessellationState=tessellation,
        pViewportState=keep(
            vkapi.VkPipelineViewportStateCreateInfo(pViewports=[viewport], pScissors=[scissor])
        ),
        pRasterizationState=keep(
            vkapi.VkPipelineRasterizationStateCreateInfo(
                polygonMode=vkapi.VK_POLYGON_MODE_FILL,
                cullMode=vkapi.VK_CULL_MODE_NONE,
                frontFace=vkapi.VK_FRONT_FACE_COUNTER_CLOCKWISE,
                lineWidth=1.0,
            )
        ),
        pMultisampleState=keep(
            vkapi.VkPipelineMultisampleStateCreateInfo(
                rasterizationSamples=vkapi.VK_SAMPLE_COUNT_1_BIT
            )
        ),
        pColorBlendState=keep(vkapi.VkPipelineColorBlendStateCreateInfo(pAttachments=[blend])),
        layout=layout.handle,
        basePipelineIndex=-1,
    )
    return vkapi.vkCreateGraphicsPipelines(vk.device, None, 1, [info], None)[0]


def _clear_value(fmt: Any, clear_color: Sequence[float]) -> Any:
    if fmt.dtype.kind in "ui":
        color = vkapi.VkClearColorValue(uint32=[int(c) for c in clear_color])
    else:
        color = vkapi.VkClearColorValue(float32=[float(c) for c in clear_color])
    return vkapi.VkClearValue(color=color)


def run_graphics(
    vk: VulkanContext,
    vertex_words: SpirvWords,
    fragment_words: SpirvWords | None,
    sets: SetsArg | None = None,
    width: int = 16,
    height: int = 16,
    vertex_count: int = 3,
    instance_count: int = 1,
    vertex_buffer: VertexBuffer | Sequence[VertexBuffer] | None = None,
    index_buffer: Buffer | None = None,
    indirect_buffer: Buffer | None = None,
    color_format: str | int = "R8G8B8A8_UNORM",
    clear_color: Sequence[float] = (0.0, 0.0, 0.0, 0.0),
    tess_control_words: SpirvWords | None = None,
    tess_eval_words: SpirvWords | None = None,
    geometry_words: SpirvWords | None = None,
    topology: int | None = None,
    patch_control_points: int = 3,
    push_constants: BytesLike | None = None,
    specialization: Specialization | None = None,
    entry: str = "main",
    draw: Draw | None = None,
) -> RunResult:
    """Draw once into a cleared ``width`` x ``height`` image; ``RunResult.color`` holds it."""
    fmt = format_info(color_format)
    tessellated = tess_eval_words is not None
    if topology is None:
        topology = (
            vkapi.VK_PRIMITIVE_TOPOLOGY_PATCH_LIST
            if tessellated
            else vkapi.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST
        )
    if draw is None:
        draw = Draw(
            vertex_count=vertex_count,
            instance_count=instance_count,
            index_buffer=index_buffer,
            indirect_buffer=indirect_buffer,
        )
    if isinstance(vertex_buffer, VertexBuffer):
        vertex_buffers: Sequence[VertexBuffer] = [vertex_buffer]
    else:
        vertex_buffers = list(vertex_buffer or [])

    keep = Keep()
    with ExitStack() as cleanup:
        target = Image(vk, width, height, fmt.name)
        cleanup.callback(target.destroy)
        view = target.view()
        cleanup.callback(view.destroy)
        staging = Buffer(vk, target.byte_size())
        cleanup.callback(staging.destroy)
        layout = make_layout(vk, sets, _ALL_GRAPHICS, push_constants)
        cleanup.callback(layout.destroy)
        constants = specialization_info(keep, specialization)
        stages = []
        for stage, words in (
            (vkapi.VK_SHADER_STAGE_VERTEX_BIT, vertex_words),
            (vkapi.VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT, tess_control_words),
            (vkapi.VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT, tess_eval_words),
            (vkapi.VK_SHADER_STAGE_GEOMETRY_BIT, geometry_words),
            (vkapi.VK_SHADER_STAGE_FRAGMENT_BIT, fragment_words),
        ):
            if words is not None:
                module = create_shader_module(vk, words)
                cleanup.callback(vkapi.vkDestroyShaderModule, vk.device, module, None)
                stages.append(stage_info(keep, stage, module, entry, constants))
        pipeline = _create_pipeline(
            vk,
            keep,
            stages,
            layout,
            vertex_buffers,
            fmt.vk_format,
            (width, height),
            topology,
            patch_control_points if tessellated else None,
        )
        cleanup.callback(vkapi.vkDestroyPipeline, vk.device, pipeline, None)
        attachment = vkapi.VkRenderingAttachmentInfo(
            imageView=view.handle,
            imageLayout=GENERAL,
            loadOp=vkapi.VK_ATTACHMENT_LOAD_OP_CLEAR,
            storeOp=vkapi.VK_ATTACHMENT_STORE_OP_STORE,
            clearValue=_clear_value(fmt, clear_color),
        )
        rendering = vkapi.VkRenderingInfo(
            renderArea=vkapi.VkRect2D(
                offset=vkapi.VkOffset2D(x=0, y=0),
                extent=vkapi.VkExtent2D(width=width, height=height),
            ),
            layerCount=1,
            pColorAttachments=[attachment],
        )
        bind_point = vkapi.VK_PIPELINE_BIND_POINT_GRAPHICS

        def record(command_buffer: Any) -> None:
            memory_barrier(command_buffer)
            vkapi.vkCmdBeginRendering(command_buffer, rendering)
            vkapi.vkCmdBindPipeline(command_buffer, bind_point, pipeline)
            layout.bind(command_buffer, bind_point)
            if vertex_buffers:
                handles = [vb.buffer.handle for vb in vertex_buffers]
                vkapi.vkCmdBindVertexBuffers(
                    command_buffer, 0, len(handles), handles, [0] * len(handles)
                )
            draw.record(command_buffer)
            vkapi.vkCmdEndRendering(command_buffer)
            target.record_download(command_buffer, staging, 0, 0)

        vk.submit(record)
        referenced = layout.sets.buffers()
        for extra in [vb.buffer for vb in vertex_buffers] + [
            draw.index_buffer,
            draw.indirect_buffer,
        ]:
            if extra is not None and extra not in referenced:
                referenced.append(extra)
        color = target.texels(staging)
        return RunResult(buffers=snapshot(referenced), color=np.asarray(color))
