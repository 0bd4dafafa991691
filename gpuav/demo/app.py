"""The demo application: two ordinary-looking Vulkan passes, each with an indexing bug.

1. A compute pass shades 16 particles; each samples the texture of its material, and one
   particle's material id is 6 although only 6 materials (0..5) are bound.
2. A graphics pass draws a "cube face" offscreen with the texture a push constant selects;
   face 6 of a 6-texture array is asked for (the example of the GPU-AV design document).

Run alone, the app reads garbage or crashes, silently; under `gpuav run` every bad access is
skipped and reported with its shader source line. ``--correct`` runs the same work without
the bugs (used to check that gpuav never changes a correct program's results).
"""

from __future__ import annotations

import argparse
import struct
from importlib import resources
from typing import Any

import vulkan as vk

from gpuav.demo.device import COLOR_RANGE, Device

MATERIALS = 6
PARTICLES = 16
IMAGE_SIZE = 32
# RGBA8 colors of the six material textures.
PALETTE = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255)]


def spirv(name: str) -> bytes:
    return (resources.files("gpuav.demo") / "shaders" / f"{name}.spv").read_bytes()


class Demo:
    def __init__(self, device: Device) -> None:
        self.device = device
        self.sampler = vk.vkCreateSampler(device.device, vk.VkSamplerCreateInfo(), None)
        device.defer(lambda: vk.vkDestroySampler(device.device, self.sampler, None))
        self.textures = [self._texture(color) for color in PALETTE]

    def _texture(self, rgb: tuple[int, int, int]) -> Any:
        """A 1x1 sampled texture filled with one color (through a staging buffer)."""
        device = self.device
        usage = vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT
        image, view = device.image(1, 1, usage)
        staging, mapped = device.buffer(4, vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT)
        mapped[0:4] = bytes([*rgb, 255])

        def upload(command_buffer: Any) -> None:
            _transition(
                command_buffer,
                image,
                vk.VK_IMAGE_LAYOUT_UNDEFINED,
                vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
            )
            region = vk.VkBufferImageCopy(
                imageSubresource=vk.VkImageSubresourceLayers(
                    aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, layerCount=1
                ),
                imageExtent=vk.VkExtent3D(width=1, height=1, depth=1),
            )
            vk.vkCmdCopyBufferToImage(
                command_buffer, staging, image, vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, [region]
            )
            _transition(
                command_buffer,
                image,
                vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
            )

        device.run(upload, "TextureUpload")
        return view

    def _descriptor_set(self, bindings: list[Any]) -> tuple[Any, Any, Any]:
        """Layout, pool and set for ``bindings``; the 6 textures at binding 0 written."""
        device = self.device.device
        layout = vk.vkCreateDescriptorSetLayout(
            device, vk.VkDescriptorSetLayoutCreateInfo(pBindings=bindings), None
        )
        sizes = [
            vk.VkDescriptorPoolSize(type=b.descriptorType, descriptorCount=b.descriptorCount)
            for b in bindings
        ]
        pool = vk.vkCreateDescriptorPool(
            device, vk.VkDescriptorPoolCreateInfo(maxSets=1, pPoolSizes=sizes), None
        )
        descriptor_set = vk.vkAllocateDescriptorSets(
            device, vk.VkDescriptorSetAllocateInfo(descriptorPool=pool, pSetLayouts=[layout])
        )[0]
        images = [
            vk.VkDescriptorImageInfo(
                sampler=self.sampler,
                imageView=view,
                imageLayout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
            )
            for view in self.textures
        ]
        write = vk.VkWriteDescriptorSet(
            dstSet=descriptor_set,
            dstBinding=0,
            descriptorCount=MATERIALS,
            descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
            pImageInfo=images,
        )
        vk.vkUpdateDescriptorSets(device, 1, [write], 0, None)
        self.device.defer(lambda: vk.vkDestroyDescriptorPool(device, pool, None))
        self.device.defer(lambda: vk.vkDestroyDescriptorSetLayout(device, layout, None))
        return layout, pool, descriptor_set

    def _shader(self, name: str) -> Any:
        code = spirv(name)
        module = vk.vkCreateShaderModule(
            self.device.device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None
        )
        self.device.set_name(vk.VK_OBJECT_TYPE_SHADER_MODULE, module, name)
        return module

    def shade_particles(self, materials: list[int]) -> list[tuple[float, ...]]:
        """Compute pass: color_of[p] = texture of material_of[p]."""
        device = self.device
        compute = vk.VK_SHADER_STAGE_COMPUTE_BIT
        storage = vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
        bindings = [
            vk.VkDescriptorSetLayoutBinding(
                binding=0,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                descriptorCount=MATERIALS,
                stageFlags=compute,
            ),
            vk.VkDescriptorSetLayoutBinding(
                binding=1, descriptorType=storage, descriptorCount=1, stageFlags=compute
            ),
            vk.VkDescriptorSetLayoutBinding(
                binding=2, descriptorType=storage, descriptorCount=1, stageFlags=compute
            ),
        ]
        layout, _pool, descriptor_set = self._descriptor_set(bindings)
        usage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
        ids, ids_memory = device.buffer(4 * PARTICLES, usage)
        colors, colors_memory = device.buffer(16 * PARTICLES, usage)
        ids_memory[:] = struct.pack(f"<{PARTICLES}i", *materials)
        colors_memory[:] = bytes(16 * PARTICLES)
        writes = [
            vk.VkWriteDescriptorSet(
                dstSet=descriptor_set,
                dstBinding=binding,
                descriptorCount=1,
                descriptorType=storage,
                pBufferInfo=[vk.VkDescriptorBufferInfo(buffer=buffer, offset=0, range=size)],
            )
            for binding, buffer, size in ((1, ids, 4 * PARTICLES), (2, colors, 16 * PARTICLES))
        ]
        vk.vkUpdateDescriptorSets(device.device, len(writes), writes, 0, None)
        pipeline_layout = vk.vkCreatePipelineLayout(
            device.device, vk.VkPipelineLayoutCreateInfo(pSetLayouts=[layout]), None
        )
        module = self._shader("shade_particles.comp")
        # The vulkan package frees a nested struct's strings with the Python object: keep it.
        stage = vk.VkPipelineShaderStageCreateInfo(stage=compute, module=module, pName="main")
        pipeline = vk.vkCreateComputePipelines(
            device.device,
            None,
            1,
            [vk.VkComputePipelineCreateInfo(stage=stage, layout=pipeline_layout)],
            None,
        )[0]
        device.set_name(vk.VK_OBJECT_TYPE_PIPELINE, pipeline, "ShadeParticles")

        def record(command_buffer: Any) -> None:
            vk.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
            vk.vkCmdBindDescriptorSets(
                command_buffer,
                vk.VK_PIPELINE_BIND_POINT_COMPUTE,
                pipeline_layout,
                0,
                1,
                [descriptor_set],
                0,
                None,
            )
            vk.vkCmdDispatch(command_buffer, PARTICLES // 8, 1, 1)

        device.run(record, "ParticleCommands")
        for destroy in (vk.vkDestroyPipeline, vk.vkDestroyShaderModule):
            destroy(device.device, pipeline if destroy is vk.vkDestroyPipeline else module, None)
        vk.vkDestroyPipelineLayout(device.device, pipeline_layout, None)
        floats = struct.unpack(f"<{4 * PARTICLES}f", bytes(colors_memory))
        return [tuple(round(c, 3) for c in floats[i : i + 4]) for i in range(0, len(floats), 4)]

    def draw_face(self, texture_index: int) -> bytes:
        """Graphics pass: a full-screen triangle textured with tex[texture_index]."""
        device = self.device
        fragment = vk.VK_SHADER_STAGE_FRAGMENT_BIT
        bindings = [
            vk.VkDescriptorSetLayoutBinding(
                binding=0,
                descriptorType=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                descriptorCount=MATERIALS,
                stageFlags=fragment,
            )
        ]
        layout, _pool, descriptor_set = self._descriptor_set(bindings)
        usage = vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | vk.VK_IMAGE_USAGE_TRANSFER_SRC_BIT
        target, target_view = device.image(IMAGE_SIZE, IMAGE_SIZE, usage)
        readback, readback_memory = device.buffer(
            4 * IMAGE_SIZE * IMAGE_SIZE, vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
        )
        push = vk.VkPushConstantRange(stageFlags=fragment, offset=0, size=4)
        pipeline_layout = vk.vkCreatePipelineLayout(
            device.device,
            vk.VkPipelineLayoutCreateInfo(pSetLayouts=[layout], pPushConstantRanges=[push]),
            None,
        )
        pipeline, modules = self._graphics_pipeline(pipeline_layout)

        def record(command_buffer: Any) -> None:
            _transition(
                command_buffer,
                target,
                vk.VK_IMAGE_LAYOUT_UNDEFINED,
                vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
            )
            clear = vk.VkClearValue(color=vk.VkClearColorValue(float32=[0, 0, 0, 1]))
            attachment = vk.VkRenderingAttachmentInfo(
                imageView=target_view,
                imageLayout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                loadOp=vk.VK_ATTACHMENT_LOAD_OP_CLEAR,
                storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
                clearValue=clear,
            )
            area = vk.VkRect2D(extent=vk.VkExtent2D(width=IMAGE_SIZE, height=IMAGE_SIZE))
            rendering = vk.VkRenderingInfo(
                renderArea=area, layerCount=1, pColorAttachments=[attachment]
            )
            vk.vkCmdBeginRendering(command_buffer, rendering)
            vk.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline)
            vk.vkCmdBindDescriptorSets(
                command_buffer,
                vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
                pipeline_layout,
                0,
                1,
                [descriptor_set],
                0,
                None,
            )
            index = ffi_int(texture_index)
            vk.vkCmdPushConstants(command_buffer, pipeline_layout, fragment, 0, 4, index)
            vk.vkCmdDraw(command_buffer, 3, 1, 0, 0)
            vk.vkCmdEndRendering(command_buffer)
            _transition(
                command_buffer,
                target,
                vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
            )
            region = vk.VkBufferImageCopy(
                imageSubresource=vk.VkImageSubresourceLayers(
                    aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, layerCount=1
                ),
                imageExtent=vk.VkExtent3D(width=IMAGE_SIZE, height=IMAGE_SIZE, depth=1),
            )
            vk.vkCmdCopyImageToBuffer(
                command_buffer,
                target,
                vk.VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                readback,
                1,
                [region],
            )

        device.run(record, "CubeDrawCommandBuf")
        vk.vkDestroyPipeline(device.device, pipeline, None)
        for module in modules:
            vk.vkDestroyShaderModule(device.device, module, None)
        vk.vkDestroyPipelineLayout(device.device, pipeline_layout, None)
        return bytes(readback_memory)

    def _graphics_pipeline(self, pipeline_layout: Any) -> tuple[Any, list[Any]]:
        modules = [self._shader("fullscreen.vert"), self._shader("textured_face.frag")]
        stages = [
            vk.VkPipelineShaderStageCreateInfo(stage=stage, module=module, pName="main")
            for stage, module in zip(
                (vk.VK_SHADER_STAGE_VERTEX_BIT, vk.VK_SHADER_STAGE_FRAGMENT_BIT),
                modules,
                strict=True,
            )
        ]
        extent = vk.VkExtent2D(width=IMAGE_SIZE, height=IMAGE_SIZE)
        # Every nested struct stays referenced until the call (see shade_particles).
        keep = {
            "rendering": vk.VkPipelineRenderingCreateInfo(
                pColorAttachmentFormats=[vk.VK_FORMAT_R8G8B8A8_UNORM]
            ),
            "vertex_input": vk.VkPipelineVertexInputStateCreateInfo(),
            "assembly": vk.VkPipelineInputAssemblyStateCreateInfo(
                topology=vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST
            ),
            "viewport": vk.VkPipelineViewportStateCreateInfo(
                pViewports=[vk.VkViewport(width=IMAGE_SIZE, height=IMAGE_SIZE, maxDepth=1.0)],
                pScissors=[vk.VkRect2D(extent=extent)],
            ),
            "raster": vk.VkPipelineRasterizationStateCreateInfo(
                polygonMode=vk.VK_POLYGON_MODE_FILL, cullMode=vk.VK_CULL_MODE_NONE, lineWidth=1.0
            ),
            "multisample": vk.VkPipelineMultisampleStateCreateInfo(
                rasterizationSamples=vk.VK_SAMPLE_COUNT_1_BIT
            ),
            "blend": vk.VkPipelineColorBlendStateCreateInfo(
                pAttachments=[vk.VkPipelineColorBlendAttachmentState(colorWriteMask=0xF)]
            ),
        }
        info = vk.VkGraphicsPipelineCreateInfo(
            pNext=keep["rendering"],
            pStages=stages,
            pVertexInputState=keep["vertex_input"],
            pInputAssemblyState=keep["assembly"],
            pViewportState=keep["viewport"],
            pRasterizationState=keep["raster"],
            pMultisampleState=keep["multisample"],
            pColorBlendState=keep["blend"],
            layout=pipeline_layout,
        )
        pipeline = vk.vkCreateGraphicsPipelines(self.device.device, None, 1, [info], None)[0]
        self.device.set_name(vk.VK_OBJECT_TYPE_PIPELINE, pipeline, "CubeFace")
        return pipeline, modules


def ffi_int(value: int) -> Any:
    return vk.ffi.new("int32_t*", value)


def _transition(command_buffer: Any, image: Any, old: int, new: int) -> None:
    barrier = vk.VkImageMemoryBarrier(
        srcAccessMask=vk.VK_ACCESS_MEMORY_WRITE_BIT,
        dstAccessMask=vk.VK_ACCESS_MEMORY_READ_BIT | vk.VK_ACCESS_MEMORY_WRITE_BIT,
        oldLayout=old,
        newLayout=new,
        srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
        dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
        image=image,
        subresourceRange=COLOR_RANGE,
    )
    vk.vkCmdPipelineBarrier(
        command_buffer,
        vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
        vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
        0,
        0,
        None,
        0,
        None,
        1,
        [barrier],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpuav.demo", description=__doc__)
    parser.add_argument("--correct", action="store_true", help="run without the indexing bugs")
    args = parser.parse_args(argv)
    materials = [particle % MATERIALS for particle in range(PARTICLES)]
    face = 2 if args.correct else MATERIALS  # the bug: faces are numbered 0..5
    if not args.correct:
        materials[11] = MATERIALS  # the bug: one particle refers to a 7th material
    device = Device("gpuav-demo")
    try:
        demo = Demo(device)
        colors = demo.shade_particles(materials)
        pixels = demo.draw_face(face)
    finally:
        device.close()
    print(f"demo: shaded {len(colors)} particles on {device.name}; particle 11 -> {colors[11]}")
    center = 4 * (IMAGE_SIZE * IMAGE_SIZE // 2 + IMAGE_SIZE // 2)
    print(f"demo: drew face {face}; center pixel RGBA = {tuple(pixels[center : center + 4])}")
    return 0
