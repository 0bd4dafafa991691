"""The Vulkan app of ``fuzz_layer.py``: runs a range of mutated modules on lavapipe.

It knows nothing of gpuav (the layer, if any, comes from the loader's environment). One
device, one descriptor set and one render pass serve every mutant: each mutant becomes a shader
module, then a compute pipeline (dispatched) or a graphics pipeline with the other stage's seed
(drawn), and is destroyed again. Before and after each mutant a line goes straight to the
progress file (unbuffered), so a crash names the mutant that was running:
``begin N`` / ``end N STATUS MESSAGE-IDS``.

Usage: ``python fuzz_layer_app.py --seeds SEEDS_JSON --progress FILE --run-seed S --first N
--count C`` (or ``--only N,M,...``; ``--module STAGE=PATH`` runs a saved mutant first).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import vulkan as vk

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fuzz_layer_mutants import Seed, mutant  # this folder, run as a script

ffi = vk.ffi
SIZE = 16
HOST_MEMORY = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
FENCE_TIMEOUT_NS = 30_000_000_000
HANG_EXIT = 3
COLOR_FORMAT = vk.VK_FORMAT_R8G8B8A8_UNORM
ENTRY_POINT = ffi.new("char[]", b"main")  # outlives every create info that points at it
ITEMS = 4  # binding 1: storage buffers; binding 2: sampled images
PARAMS = 2  # binding 3: uniform buffers
STAGE_BITS = {
    "comp": vk.VK_SHADER_STAGE_COMPUTE_BIT,
    "vert": vk.VK_SHADER_STAGE_VERTEX_BIT,
    "frag": vk.VK_SHADER_STAGE_FRAGMENT_BIT,
}

message_ids: Counter[str] = Counter()


def on_message(severity: int, types: int, data: Any, user_data: Any) -> int:
    message_ids[ffi.string(data.pMessageIdName).decode() if data.pMessageIdName else "?"] += 1
    return 0


class FuzzApp:
    """Instance, device and every object the mutants share."""

    def __init__(self) -> None:
        self.instance = vk.vkCreateInstance(
            vk.VkInstanceCreateInfo(
                pApplicationInfo=vk.VkApplicationInfo(
                    pApplicationName="gpuav-fuzz", apiVersion=vk.VK_MAKE_VERSION(1, 3, 0)
                ),
                enabledExtensionCount=1,
                ppEnabledExtensionNames=["VK_EXT_debug_utils"],
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
                messageType=vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
                | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT,
                pfnUserCallback=on_message,
            ),
            None,
        )
        physical = vk.vkEnumeratePhysicalDevices(self.instance)[0]
        self.memory = vk.vkGetPhysicalDeviceMemoryProperties(physical)
        # VK_KHR_maintenance5: stage code chained to the stage instead of a module (inline).
        maintenance5 = vk.VkPhysicalDeviceMaintenance5FeaturesKHR(maintenance5=vk.VK_TRUE)
        features12 = vk.VkPhysicalDeviceVulkan12Features(
            pNext=maintenance5,
            runtimeDescriptorArray=vk.VK_TRUE,
            shaderStorageBufferArrayNonUniformIndexing=vk.VK_TRUE,
            shaderSampledImageArrayNonUniformIndexing=vk.VK_TRUE,
            shaderUniformBufferArrayNonUniformIndexing=vk.VK_TRUE,
        )
        features = vk.VkPhysicalDeviceFeatures(
            shaderInt64=vk.VK_TRUE,
            fragmentStoresAndAtomics=vk.VK_TRUE,
            vertexPipelineStoresAndAtomics=vk.VK_TRUE,
            shaderSampledImageArrayDynamicIndexing=vk.VK_TRUE,
            shaderStorageBufferArrayDynamicIndexing=vk.VK_TRUE,
            shaderUniformBufferArrayDynamicIndexing=vk.VK_TRUE,
        )
        self.device = vk.vkCreateDevice(
            physical,
            vk.VkDeviceCreateInfo(
                pNext=features12,
                queueCreateInfoCount=1,
                pQueueCreateInfos=[
                    vk.VkDeviceQueueCreateInfo(
                        queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0]
                    )
                ],
                pEnabledFeatures=features,
                enabledExtensionCount=1,
                ppEnabledExtensionNames=["VK_KHR_maintenance5"],
            ),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, 0, 0)
        self.pool = vk.vkCreateCommandPool(
            self.device,
            vk.VkCommandPoolCreateInfo(
                queueFamilyIndex=0, flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT
            ),
            None,
        )
        self.command_buffer = vk.vkAllocateCommandBuffers(
            self.device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=self.pool,
                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=1,
            ),
        )[0]
        self.fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        self._create_resources()
        self._create_render_target()

    # -- shared objects ----------------------------------------------------------------------

    def _memory_type(self, bits: int, flags: int) -> int:
        for index in range(self.memory.memoryTypeCount):
            if bits & (1 << index) and (
                self.memory.memoryTypes[index].propertyFlags & flags == flags
            ):
                return index
        raise RuntimeError("no memory type")

    def _bound_memory(self, requirements: Any, flags: int) -> Any:
        return vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(
                allocationSize=requirements.size,
                memoryTypeIndex=self._memory_type(requirements.memoryTypeBits, flags),
            ),
            None,
        )

    def _buffer(self, size: int, usage: int) -> Any:
        buffer = vk.vkCreateBuffer(self.device, vk.VkBufferCreateInfo(size=size, usage=usage), None)
        memory = self._bound_memory(
            vk.vkGetBufferMemoryRequirements(self.device, buffer), HOST_MEMORY
        )
        vk.vkBindBufferMemory(self.device, buffer, memory, 0)
        mapped = vk.vkMapMemory(self.device, memory, 0, size, 0)
        mapped[:size] = bytes([1, 0, 0, 0]) * (size // 4)  # every uint is 1: indices in range
        return buffer

    def _image(self, usage: int, layout: int) -> tuple[Any, Any]:
        image = vk.vkCreateImage(
            self.device,
            vk.VkImageCreateInfo(
                imageType=vk.VK_IMAGE_TYPE_2D,
                format=COLOR_FORMAT,
                extent=vk.VkExtent3D(width=SIZE, height=SIZE, depth=1),
                mipLevels=1,
                arrayLayers=1,
                samples=vk.VK_SAMPLE_COUNT_1_BIT,
                tiling=vk.VK_IMAGE_TILING_OPTIMAL,
                usage=usage,
                initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
            ),
            None,
        )
        memory = self._bound_memory(vk.vkGetImageMemoryRequirements(self.device, image), 0)
        vk.vkBindImageMemory(self.device, image, memory, 0)
        view = vk.vkCreateImageView(
            self.device,
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
        return image, view

    def _create_resources(self) -> None:
        """Set 0: result buffer, 4 storage buffers, 4 sampled images, 2 uniform buffers."""
        all_stages = vk.VK_SHADER_STAGE_ALL
        bindings = [
            (0, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1),
            (1, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, ITEMS),
            (2, vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, ITEMS),
            (3, vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, PARAMS),
        ]
        self.set_layout = vk.vkCreateDescriptorSetLayout(
            self.device,
            vk.VkDescriptorSetLayoutCreateInfo(
                bindingCount=len(bindings),
                pBindings=[
                    vk.VkDescriptorSetLayoutBinding(
                        binding=b, descriptorType=t, descriptorCount=n, stageFlags=all_stages
                    )
                    for b, t, n in bindings
                ],
            ),
            None,
        )
        self.layout = vk.vkCreatePipelineLayout(
            self.device,
            vk.VkPipelineLayoutCreateInfo(
                setLayoutCount=1,
                pSetLayouts=[self.set_layout],
                pushConstantRangeCount=1,
                pPushConstantRanges=[
                    vk.VkPushConstantRange(stageFlags=all_stages, offset=0, size=16)
                ],
            ),
            None,
        )
        pool = vk.vkCreateDescriptorPool(
            self.device,
            vk.VkDescriptorPoolCreateInfo(
                maxSets=1,
                poolSizeCount=3,
                pPoolSizes=[
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=1 + ITEMS
                    ),
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, descriptorCount=ITEMS
                    ),
                    vk.VkDescriptorPoolSize(
                        type=vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, descriptorCount=PARAMS
                    ),
                ],
            ),
            None,
        )
        self.descriptor_set = vk.vkAllocateDescriptorSets(
            self.device,
            vk.VkDescriptorSetAllocateInfo(
                descriptorPool=pool, descriptorSetCount=1, pSetLayouts=[self.set_layout]
            ),
        )[0]
        storage = vk.VK_BUFFER_USAGE_STORAGE_BUFFER_BIT
        result = self._buffer(4096, storage)
        items = [self._buffer(256, storage) for _ in range(ITEMS)]
        params = [self._buffer(256, vk.VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT) for _ in range(PARAMS)]
        sampler = vk.vkCreateSampler(self.device, vk.VkSamplerCreateInfo(), None)
        sampled = [
            self._image(
                vk.VK_IMAGE_USAGE_SAMPLED_BIT | vk.VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
            )
            for _ in range(ITEMS)
        ]
        self._make_readable([image for image, _ in sampled])

        def buffers(items: list[Any]) -> list[Any]:
            return [vk.VkDescriptorBufferInfo(buffer=b, offset=0, range=256) for b in items]

        writes = [
            (0, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, buffers([result]), None),
            (1, vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, buffers(items), None),
            (3, vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, buffers(params), None),
            (
                2,
                vk.VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER,
                None,
                [
                    vk.VkDescriptorImageInfo(
                        sampler=sampler,
                        imageView=view,
                        imageLayout=vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                    )
                    for _, view in sampled
                ],
            ),
        ]
        vk.vkUpdateDescriptorSets(
            self.device,
            len(writes),
            [
                vk.VkWriteDescriptorSet(
                    dstSet=self.descriptor_set,
                    dstBinding=binding,
                    descriptorCount=len(buffer_infos or image_infos or []),
                    descriptorType=kind,
                    pBufferInfo=buffer_infos,
                    pImageInfo=image_infos,
                )
                for binding, kind, buffer_infos, image_infos in writes
            ],
            0,
            None,
        )

    def _make_readable(self, images: list[Any]) -> None:
        """Clear the sampled images once and leave them in SHADER_READ_ONLY_OPTIMAL."""
        everything = vk.VkImageSubresourceRange(
            aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, levelCount=1, layerCount=1
        )

        def barrier(image: Any, old: int, new: int) -> Any:
            return vk.VkImageMemoryBarrier(
                srcAccessMask=vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                dstAccessMask=vk.VK_ACCESS_SHADER_READ_BIT | vk.VK_ACCESS_TRANSFER_WRITE_BIT,
                oldLayout=old,
                newLayout=new,
                srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                image=image,
                subresourceRange=everything,
            )

        transfer = vk.VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL
        self._begin()
        vk.vkCmdPipelineBarrier(
            self.command_buffer, vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
            vk.VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, None, 0, None, len(images),
            [barrier(image, vk.VK_IMAGE_LAYOUT_UNDEFINED, transfer) for image in images],
        )  # fmt: skip
        for image in images:
            vk.vkCmdClearColorImage(
                self.command_buffer, image, transfer,
                vk.VkClearColorValue(float32=[0.25, 0.5, 0.75, 1.0]), 1, [everything],
            )  # fmt: skip
        vk.vkCmdPipelineBarrier(
            self.command_buffer, vk.VK_PIPELINE_STAGE_TRANSFER_BIT,
            vk.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, None, 0, None, len(images),
            [barrier(i, transfer, vk.VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL) for i in images],
        )  # fmt: skip
        self._submit()

    def _create_render_target(self) -> None:
        _, view = self._image(
            vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
        )
        attachment = vk.VkAttachmentDescription(
            format=COLOR_FORMAT,
            samples=vk.VK_SAMPLE_COUNT_1_BIT,
            loadOp=vk.VK_ATTACHMENT_LOAD_OP_CLEAR,
            storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
            stencilLoadOp=vk.VK_ATTACHMENT_LOAD_OP_DONT_CARE,
            stencilStoreOp=vk.VK_ATTACHMENT_STORE_OP_DONT_CARE,
            initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
            finalLayout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
        )
        subpass = vk.VkSubpassDescription(
            pipelineBindPoint=vk.VK_PIPELINE_BIND_POINT_GRAPHICS,
            colorAttachmentCount=1,
            pColorAttachments=[
                vk.VkAttachmentReference(
                    attachment=0, layout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL
                )
            ],
        )
        self.render_pass = vk.vkCreateRenderPass(
            self.device,
            vk.VkRenderPassCreateInfo(
                attachmentCount=1, pAttachments=[attachment], subpassCount=1, pSubpasses=[subpass]
            ),
            None,
        )
        self.framebuffer = vk.vkCreateFramebuffer(
            self.device,
            vk.VkFramebufferCreateInfo(
                renderPass=self.render_pass,
                attachmentCount=1,
                pAttachments=[view],
                width=SIZE,
                height=SIZE,
                layers=1,
            ),
            None,
        )

    # -- per mutant --------------------------------------------------------------------------

    def _begin(self) -> None:
        vk.vkResetCommandBuffer(self.command_buffer, 0)
        vk.vkBeginCommandBuffer(self.command_buffer, vk.VkCommandBufferBeginInfo())

    def _submit(self) -> None:
        vk.vkEndCommandBuffer(self.command_buffer)
        vk.vkResetFences(self.device, 1, [self.fence])
        vk.vkQueueSubmit(
            self.queue,
            1,
            [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[self.command_buffer])],
            self.fence,
        )
        if vk.vkWaitForFences(self.device, 1, [self.fence], vk.VK_TRUE, FENCE_TIMEOUT_NS):
            raise TimeoutError("the submission did not finish")

    def module(self, words: list[int]) -> Any:
        code = b"".join(word.to_bytes(4, "little") for word in words)
        return vk.vkCreateShaderModule(
            self.device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None
        )

    def stage(self, stage: str, module: Any) -> Any:
        return vk.VkPipelineShaderStageCreateInfo(
            stage=STAGE_BITS[stage], module=module, pName=ENTRY_POINT
        )

    def run_compute(self, module: Any, inline_words: list[int] | None = None) -> None:
        """With ``inline_words``, the code rides in the stage's pNext chain (no module)."""
        stage = self.stage("comp", module)
        if inline_words is not None:
            code = b"".join(word.to_bytes(4, "little") for word in inline_words)
            stage = vk.VkPipelineShaderStageCreateInfo(
                pNext=vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code),
                stage=vk.VK_SHADER_STAGE_COMPUTE_BIT,
                pName=ENTRY_POINT,
            )
        pipeline = vk.vkCreateComputePipelines(
            self.device,
            None,
            1,
            [vk.VkComputePipelineCreateInfo(stage=stage, layout=self.layout)],
            None,
        )[0]
        try:
            self._begin()
            self._bind(vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
            vk.vkCmdDispatch(self.command_buffer, 1, 1, 1)
            self._submit()
        finally:
            vk.vkDestroyPipeline(self.device, pipeline, None)

    def run_graphics(self, vertex: Any, fragment: Any) -> None:
        viewport = vk.VkViewport(x=0, y=0, width=SIZE, height=SIZE, minDepth=0, maxDepth=1)
        scissor = vk.VkRect2D(offset=vk.VkOffset2D(x=0, y=0), extent=vk.VkExtent2D(SIZE, SIZE))
        info = vk.VkGraphicsPipelineCreateInfo(
            stageCount=2,
            pStages=[self.stage("vert", vertex), self.stage("frag", fragment)],
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
                attachmentCount=1,
                pAttachments=[vk.VkPipelineColorBlendAttachmentState(colorWriteMask=0xF)],
            ),
            layout=self.layout,
            renderPass=self.render_pass,
            subpass=0,
        )
        pipeline = vk.vkCreateGraphicsPipelines(self.device, None, 1, [info], None)[0]
        try:
            self._begin()
            vk.vkCmdBeginRenderPass(
                self.command_buffer,
                vk.VkRenderPassBeginInfo(
                    renderPass=self.render_pass,
                    framebuffer=self.framebuffer,
                    renderArea=vk.VkRect2D(
                        offset=vk.VkOffset2D(x=0, y=0), extent=vk.VkExtent2D(SIZE, SIZE)
                    ),
                    clearValueCount=1,
                    pClearValues=[vk.VkClearValue(color=vk.VkClearColorValue(float32=[0] * 4))],
                ),
                vk.VK_SUBPASS_CONTENTS_INLINE,
            )
            self._bind(vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline)
            vk.vkCmdDraw(self.command_buffer, 3, 1, 0, 0)
            vk.vkCmdEndRenderPass(self.command_buffer)
            self._submit()
        finally:
            vk.vkDestroyPipeline(self.device, pipeline, None)

    def _bind(self, bind_point: int, pipeline: Any) -> None:
        vk.vkCmdBindPipeline(self.command_buffer, bind_point, pipeline)
        vk.vkCmdBindDescriptorSets(
            self.command_buffer, bind_point, self.layout, 0, 1, [self.descriptor_set], 0, None
        )
        push = ffi.new("uint32_t[4]", [1, 2, 0, 0])
        vk.vkCmdPushConstants(self.command_buffer, self.layout, vk.VK_SHADER_STAGE_ALL, 0, 16, push)


def run_mutant(app: FuzzApp, seeds: list[Seed], words: list[int], stage: str) -> str:
    """What became of one mutant: ok, or the step that returned a Vulkan error. Stage
    ``comp-inline`` is compute code given inline to the pipeline."""
    if stage == "comp-inline":
        try:
            app.run_compute(None, words)
        except vk.VkError as error:
            return f"pipeline-error:{type(error).__name__}"
        return "ok"
    try:
        module = app.module(words)
    except vk.VkError as error:
        return f"module-error:{type(error).__name__}"
    try:
        if stage == "comp":
            app.run_compute(module)
        else:
            partner_stage = "frag" if stage == "vert" else "vert"
            partner_seed = next(seed for seed in seeds if seed.stage == partner_stage)
            partner = app.module(list(partner_seed.words))
            try:
                pair = (module, partner) if stage == "vert" else (partner, module)
                app.run_graphics(*pair)
            finally:
                vk.vkDestroyShaderModule(app.device, partner, None)
    except vk.VkError as error:
        return f"pipeline-error:{type(error).__name__}"
    finally:
        vk.vkDestroyShaderModule(app.device, module, None)
    return "ok"


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="run mutated modules through Vulkan")
    parser.add_argument("--seeds", type=Path, required=True, help="seeds JSON (fuzz_layer.py)")
    parser.add_argument("--progress", type=Path, required=True)
    parser.add_argument("--run-seed", type=int, default=1)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--count", type=int, default=0)
    parser.add_argument("--only", default="", help="mutant numbers, comma-separated")
    parser.add_argument(
        "--module",
        action="append",
        default=[],
        help="STAGE=PATH: a saved mutant (comp, comp-inline, vert, frag)",
    )
    return parser.parse_args(argv)


def _work(options: argparse.Namespace, seeds: list[Seed]) -> Iterator[tuple[str, str, list[int]]]:
    """(label, stage, words) of every module to run, in order."""
    for index, item in enumerate(options.module):
        stage, _, path = item.partition("=")
        yield f"file{index}", stage, array("I", Path(path).read_bytes()).tolist()
    numbers: Iterable[int] = range(options.first, options.first + options.count)
    if options.only:
        numbers = [int(n) for n in options.only.split(",")]
    for number in numbers:
        seed, words = mutant(seeds, options.run_seed, number)
        yield str(number), seed.stage, words


def main(argv: list[str]) -> int:
    options = _parse(argv)
    seeds = [Seed.from_json(item) for item in json.loads(options.seeds.read_text())]
    progress = os.open(options.progress, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    app = FuzzApp()
    for label, stage, words in _work(options, seeds):
        os.write(progress, f"begin {label}\n".encode())
        message_ids.clear()
        try:
            status = run_mutant(app, seeds, words, stage)
        except TimeoutError:
            os.write(progress, f"hang {label}\n".encode())
            os._exit(HANG_EXIT)
        ids = ",".join(f"{name}={n}" for name, n in sorted(message_ids.items()))
        os.write(progress, f"end {label} {status} {ids}\n".encode())
    os.write(progress, b"finished\n")
    os.close(progress)
    # No clean-up: the process ends here (exit-time behaviour is not what this app tests).
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
