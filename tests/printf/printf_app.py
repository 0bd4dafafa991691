"""A small Vulkan 1.3 program (``vulkan`` package) whose shaders call debugPrintfEXT.

It knows nothing of gpuav or the Khronos layer: whichever the loader loads does the printing.
``compute SHADER.spv`` dispatches ``--groups`` workgroups; ``graphics --vert V --frag F
[--tesc C --tese E] [--geom G]`` draws one triangle (a patch of three with tessellation) into
a 4x4 image with dynamic rendering. Prints one JSON object: the messages its debug-utils
messenger received (severity, id, text).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import vulkan as vk

ffi = vk.ffi
SIZE = 4
COLOR_FORMAT = vk.VK_FORMAT_R8G8B8A8_UNORM
FENCE_TIMEOUT = 60_000_000_000

messages: list[dict[str, Any]] = []


def on_message(severity: int, types: int, data: Any, user_data: Any) -> int:
    messages.append(
        {
            "severity": int(severity),
            "id": ffi.string(data.pMessageIdName).decode() if data.pMessageIdName else "",
            "text": ffi.string(data.pMessage).decode(),
        }
    )
    return 0


class App:
    def __init__(self) -> None:
        app_info = vk.VkApplicationInfo(
            pApplicationName="gpuav-printf-app", apiVersion=vk.VK_MAKE_VERSION(1, 3, 0)
        )
        self.instance = vk.vkCreateInstance(
            vk.VkInstanceCreateInfo(
                pApplicationInfo=app_info,
                enabledExtensionCount=1,
                ppEnabledExtensionNames=["VK_EXT_debug_utils"],
            ),
            None,
        )
        create = vk.vkGetInstanceProcAddr(self.instance, "vkCreateDebugUtilsMessengerEXT")
        self.messenger = create(
            self.instance,
            vk.VkDebugUtilsMessengerCreateInfoEXT(
                messageSeverity=vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT
                | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
                | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                messageType=vk.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT
                | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
                | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
                pfnUserCallback=on_message,
            ),
            None,
        )
        devices = vk.vkEnumeratePhysicalDevices(self.instance)
        self.physical = next(
            (d for d in devices if "llvmpipe" in vk.vkGetPhysicalDeviceProperties(d).deviceName),
            devices[0],
        )
        self.memory = vk.vkGetPhysicalDeviceMemoryProperties(self.physical)
        features13 = vk.VkPhysicalDeviceVulkan13Features(
            dynamicRendering=vk.VK_TRUE, maintenance4=vk.VK_TRUE
        )
        features = vk.VkPhysicalDeviceFeatures2(
            pNext=features13,
            features=vk.VkPhysicalDeviceFeatures(
                tessellationShader=vk.VK_TRUE,
                geometryShader=vk.VK_TRUE,
                shaderInt64=vk.VK_TRUE,
                shaderFloat64=vk.VK_TRUE,
                vertexPipelineStoresAndAtomics=vk.VK_TRUE,
                fragmentStoresAndAtomics=vk.VK_TRUE,
            ),
        )
        self.device = vk.vkCreateDevice(
            self.physical,
            vk.VkDeviceCreateInfo(
                pNext=features,
                queueCreateInfoCount=1,
                pQueueCreateInfos=[
                    vk.VkDeviceQueueCreateInfo(
                        queueFamilyIndex=0, queueCount=1, pQueuePriorities=[1.0]
                    )
                ],
            ),
            None,
        )
        self.queue = vk.vkGetDeviceQueue(self.device, 0, 0)
        self.pool = vk.vkCreateCommandPool(
            self.device, vk.VkCommandPoolCreateInfo(queueFamilyIndex=0), None
        )
        self.layout = vk.vkCreatePipelineLayout(self.device, vk.VkPipelineLayoutCreateInfo(), None)
        self.objects: list[tuple[Any, Any]] = [(vk.vkDestroyPipelineLayout, self.layout)]

    def module(self, path: str) -> Any:
        code = Path(path).read_bytes()
        module = vk.vkCreateShaderModule(
            self.device, vk.VkShaderModuleCreateInfo(codeSize=len(code), pCode=code), None
        )
        self.objects.append((vk.vkDestroyShaderModule, module))
        return module

    def record_and_submit(self, record: Any) -> None:
        command_buffer = vk.vkAllocateCommandBuffers(
            self.device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=self.pool,
                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=1,
            ),
        )[0]
        vk.vkBeginCommandBuffer(command_buffer, vk.VkCommandBufferBeginInfo())
        record(command_buffer)
        vk.vkEndCommandBuffer(command_buffer)
        fence = vk.vkCreateFence(self.device, vk.VkFenceCreateInfo(), None)
        vk.vkQueueSubmit(
            self.queue,
            1,
            [vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[command_buffer])],
            fence,
        )
        vk.vkWaitForFences(self.device, 1, [fence], vk.VK_TRUE, FENCE_TIMEOUT)
        vk.vkDestroyFence(self.device, fence, None)

    def compute(self, shader: str, groups: int) -> None:
        module = self.module(shader)
        # The create infos stay referenced until the call returns (cffi frees what is not).
        stage = vk.VkPipelineShaderStageCreateInfo(
            stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName="main"
        )
        info = vk.VkComputePipelineCreateInfo(stage=stage, layout=self.layout)
        pipeline = vk.vkCreateComputePipelines(self.device, None, 1, [info], None)[0]
        self.objects.append((vk.vkDestroyPipeline, pipeline))

        def record(command_buffer: Any) -> None:
            vk.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline)
            vk.vkCmdDispatch(command_buffer, groups, 1, 1)

        self.record_and_submit(record)

    def _image_view(self) -> Any:
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
                usage=vk.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT,
                initialLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
            ),
            None,
        )
        requirements = vk.vkGetImageMemoryRequirements(self.device, image)
        index = next(
            k for k in range(self.memory.memoryTypeCount) if requirements.memoryTypeBits >> k & 1
        )
        memory = vk.vkAllocateMemory(
            self.device,
            vk.VkMemoryAllocateInfo(allocationSize=requirements.size, memoryTypeIndex=index),
            None,
        )
        vk.vkBindImageMemory(self.device, image, memory, 0)
        self.image = image
        self.objects += [(vk.vkFreeMemory, memory), (vk.vkDestroyImage, image)]
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
        self.objects.append((vk.vkDestroyImageView, view))
        return view

    def graphics(self, stages: dict[int, str]) -> None:
        view = self._image_view()
        tessellation = vk.VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT in stages
        infos = [
            vk.VkPipelineShaderStageCreateInfo(stage=stage, module=self.module(path), pName="main")
            for stage, path in stages.items()
        ]
        topology = (
            vk.VK_PRIMITIVE_TOPOLOGY_PATCH_LIST
            if tessellation
            else vk.VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST
        )
        viewport = vk.VkViewport(width=SIZE, height=SIZE, maxDepth=1.0)
        scissor = vk.VkRect2D(extent=vk.VkExtent2D(width=SIZE, height=SIZE))
        blend = vk.VkPipelineColorBlendAttachmentState(colorWriteMask=0xF)
        info = vk.VkGraphicsPipelineCreateInfo(
            pNext=vk.VkPipelineRenderingCreateInfo(
                colorAttachmentCount=1, pColorAttachmentFormats=[COLOR_FORMAT]
            ),
            stageCount=len(infos),
            pStages=infos,
            pVertexInputState=vk.VkPipelineVertexInputStateCreateInfo(),
            pInputAssemblyState=vk.VkPipelineInputAssemblyStateCreateInfo(topology=topology),
            pTessellationState=vk.VkPipelineTessellationStateCreateInfo(patchControlPoints=3)
            if tessellation
            else None,
            pViewportState=vk.VkPipelineViewportStateCreateInfo(
                viewportCount=1, pViewports=[viewport], scissorCount=1, pScissors=[scissor]
            ),
            pRasterizationState=vk.VkPipelineRasterizationStateCreateInfo(
                polygonMode=vk.VK_POLYGON_MODE_FILL,
                cullMode=vk.VK_CULL_MODE_NONE,
                lineWidth=1.0,
            ),
            pMultisampleState=vk.VkPipelineMultisampleStateCreateInfo(
                rasterizationSamples=vk.VK_SAMPLE_COUNT_1_BIT
            ),
            pColorBlendState=vk.VkPipelineColorBlendStateCreateInfo(
                attachmentCount=1, pAttachments=[blend]
            ),
            layout=self.layout,
        )
        pipeline = vk.vkCreateGraphicsPipelines(self.device, None, 1, [info], None)[0]
        self.objects.append((vk.vkDestroyPipeline, pipeline))

        def record(command_buffer: Any) -> None:
            barrier = vk.VkImageMemoryBarrier(
                srcAccessMask=0,
                dstAccessMask=vk.VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                oldLayout=vk.VK_IMAGE_LAYOUT_UNDEFINED,
                newLayout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                srcQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                dstQueueFamilyIndex=vk.VK_QUEUE_FAMILY_IGNORED,
                image=self.image,
                subresourceRange=vk.VkImageSubresourceRange(
                    aspectMask=vk.VK_IMAGE_ASPECT_COLOR_BIT, levelCount=1, layerCount=1
                ),
            )
            vk.vkCmdPipelineBarrier(
                command_buffer,
                vk.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                vk.VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                0, 0, None, 0, None, 1, [barrier],
            )  # fmt: skip
            attachment = vk.VkRenderingAttachmentInfo(
                imageView=view,
                imageLayout=vk.VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                loadOp=vk.VK_ATTACHMENT_LOAD_OP_CLEAR,
                storeOp=vk.VK_ATTACHMENT_STORE_OP_STORE,
            )
            vk.vkCmdBeginRendering(
                command_buffer,
                vk.VkRenderingInfo(
                    renderArea=scissor,
                    layerCount=1,
                    colorAttachmentCount=1,
                    pColorAttachments=[attachment],
                ),
            )
            vk.vkCmdBindPipeline(command_buffer, vk.VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline)
            vk.vkCmdDraw(command_buffer, 3, 1, 0, 0)
            vk.vkCmdEndRendering(command_buffer)

        self.record_and_submit(record)

    def close(self) -> None:
        vk.vkDeviceWaitIdle(self.device)
        for destroy_object, handle in reversed(self.objects):
            destroy_object(self.device, handle, None)
        vk.vkDestroyCommandPool(self.device, self.pool, None)
        vk.vkDestroyDevice(self.device, None)
        destroy = vk.vkGetInstanceProcAddr(self.instance, "vkDestroyDebugUtilsMessengerEXT")
        destroy(self.instance, self.messenger, None)
        vk.vkDestroyInstance(self.instance, None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="mode", required=True)
    compute = sub.add_parser("compute")
    compute.add_argument("shader")
    compute.add_argument("--groups", type=int, default=1)
    graphics = sub.add_parser("graphics")
    for stage in ("vert", "frag", "tesc", "tese", "geom"):
        graphics.add_argument(f"--{stage}")
    options = parser.parse_args(argv)
    app = App()
    if options.mode == "compute":
        app.compute(options.shader, options.groups)
    else:
        bits = {
            "vert": vk.VK_SHADER_STAGE_VERTEX_BIT,
            "tesc": vk.VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT,
            "tese": vk.VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT,
            "geom": vk.VK_SHADER_STAGE_GEOMETRY_BIT,
            "frag": vk.VK_SHADER_STAGE_FRAGMENT_BIT,
        }
        app.graphics(
            {bit: getattr(options, name) for name, bit in bits.items() if getattr(options, name)}
        )
    app.close()
    print(json.dumps({"messages": messages}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
