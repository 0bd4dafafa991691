"""Images, image views and samplers for tests.

Images live in ``VK_IMAGE_LAYOUT_GENERAL`` from creation to destruction: every use a test makes
of them (sampling, storage, colour attachment, copies) is legal in that layout, which removes
layout tracking from the harness. Uploads and downloads go through a mapped staging buffer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import vulkan as vkapi

from tests.harness.buffers import Buffer, BytesLike, allocate_memory, as_bytes, memory_barrier
from tests.harness.formats import FormatInfo, format_info

if TYPE_CHECKING:
    from tests.harness.context import VulkanContext

GENERAL = vkapi.VK_IMAGE_LAYOUT_GENERAL


class Image:
    """A 2D image (optionally layered and mipmapped), kept in the GENERAL layout."""

    def __init__(
        self,
        vk: VulkanContext,
        width: int,
        height: int,
        fmt: str | int = "R8G8B8A8_UNORM",
        layers: int = 1,
        mip_levels: int = 1,
    ) -> None:
        self.vk = vk
        self.width, self.height = width, height
        self.format: FormatInfo = format_info(fmt)
        self.layers, self.mip_levels = layers, mip_levels
        self.usage = _image_usage(vk, self.format.vk_format)
        info = vkapi.VkImageCreateInfo(
            imageType=vkapi.VK_IMAGE_TYPE_2D,
            format=self.format.vk_format,
            extent=vkapi.VkExtent3D(width=width, height=height, depth=1),
            mipLevels=mip_levels,
            arrayLayers=layers,
            samples=vkapi.VK_SAMPLE_COUNT_1_BIT,
            tiling=vkapi.VK_IMAGE_TILING_OPTIMAL,
            usage=self.usage,
            sharingMode=vkapi.VK_SHARING_MODE_EXCLUSIVE,
            initialLayout=vkapi.VK_IMAGE_LAYOUT_UNDEFINED,
        )
        self.handle = vkapi.vkCreateImage(vk.device, info, None)
        requirements = vkapi.vkGetImageMemoryRequirements(vk.device, self.handle)
        self.memory = allocate_memory(vk, requirements, 0)
        vkapi.vkBindImageMemory(vk.device, self.handle, self.memory, 0)
        vk.own(self)
        vk.submit(self._to_general)

    def _to_general(self, command_buffer: Any) -> None:
        barrier = vkapi.VkImageMemoryBarrier(
            srcAccessMask=0,
            dstAccessMask=vkapi.VK_ACCESS_MEMORY_READ_BIT | vkapi.VK_ACCESS_MEMORY_WRITE_BIT,
            oldLayout=vkapi.VK_IMAGE_LAYOUT_UNDEFINED,
            newLayout=GENERAL,
            srcQueueFamilyIndex=vkapi.VK_QUEUE_FAMILY_IGNORED,
            dstQueueFamilyIndex=vkapi.VK_QUEUE_FAMILY_IGNORED,
            image=self.handle,
            subresourceRange=self.subresource_range(),
        )
        vkapi.vkCmdPipelineBarrier(
            command_buffer,
            vkapi.VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
            vkapi.VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
            0,
            0,
            None,
            0,
            None,
            1,
            [barrier],
        )

    def subresource_range(self) -> Any:
        return vkapi.VkImageSubresourceRange(
            aspectMask=vkapi.VK_IMAGE_ASPECT_COLOR_BIT,
            baseMipLevel=0,
            levelCount=self.mip_levels,
            baseArrayLayer=0,
            layerCount=self.layers,
        )

    def level_size(self, level: int) -> tuple[int, int]:
        return max(1, self.width >> level), max(1, self.height >> level)

    def copy_region(self, layer: int, level: int) -> Any:
        width, height = self.level_size(level)
        return vkapi.VkBufferImageCopy(
            bufferOffset=0,
            bufferRowLength=0,
            bufferImageHeight=0,
            imageSubresource=vkapi.VkImageSubresourceLayers(
                aspectMask=vkapi.VK_IMAGE_ASPECT_COLOR_BIT,
                mipLevel=level,
                baseArrayLayer=layer,
                layerCount=1,
            ),
            imageOffset=vkapi.VkOffset3D(x=0, y=0, z=0),
            imageExtent=vkapi.VkExtent3D(width=width, height=height, depth=1),
        )

    def upload(self, data: BytesLike, layer: int = 0, level: int = 0) -> None:
        """Replace one layer of one mip level with tightly packed texels."""
        width, height = self.level_size(level)
        expected = width * height * self.format.texel_size
        raw = as_bytes(data)
        if len(raw) != expected:
            raise ValueError(f"level {level} of {self.format.name} needs {expected} bytes")
        staging = Buffer(self.vk, expected, raw)
        region = self.copy_region(layer, level)

        def record(command_buffer: Any) -> None:
            memory_barrier(command_buffer)
            vkapi.vkCmdCopyBufferToImage(
                command_buffer, staging.handle, self.handle, GENERAL, 1, [region]
            )
            memory_barrier(command_buffer)

        try:
            self.vk.submit(record)
        finally:
            staging.destroy()

    def download(self, layer: int = 0, level: int = 0) -> Any:
        """One layer of one level as an array of shape (height, width[, channels])."""
        staging = Buffer(self.vk, self.byte_size(level))
        try:
            self.vk.submit(lambda cb: self.record_download(cb, staging, layer, level))
            return self.texels(staging, level)
        finally:
            staging.destroy()

    def byte_size(self, level: int = 0) -> int:
        width, height = self.level_size(level)
        return width * height * self.format.texel_size

    def record_download(self, command_buffer: Any, staging: Buffer, layer: int, level: int) -> None:
        region = self.copy_region(layer, level)
        memory_barrier(command_buffer)
        vkapi.vkCmdCopyImageToBuffer(
            command_buffer, self.handle, GENERAL, staging.handle, 1, [region]
        )
        memory_barrier(command_buffer, host_read=True)

    def texels(self, staging: Buffer, level: int = 0) -> Any:
        width, height = self.level_size(level)
        fmt = self.format
        flat = np.frombuffer(staging.read(0, self.byte_size(level)), dtype=fmt.dtype).copy()
        shape = (height, width) if fmt.channels == 1 else (height, width, fmt.channels)
        return flat.reshape(shape)

    def view(
        self,
        view_type: int | None = None,
        base_layer: int = 0,
        layer_count: int | None = None,
        base_level: int = 0,
        level_count: int | None = None,
    ) -> ImageView:
        """A view; 2D for a single layer, 2D array otherwise, unless ``view_type`` says."""
        return ImageView(self, view_type, base_layer, layer_count, base_level, level_count)

    def destroy(self) -> None:
        if self.handle is not None:
            vkapi.vkDestroyImage(self.vk.device, self.handle, None)
            vkapi.vkFreeMemory(self.vk.device, self.memory, None)
            self.handle = None
            self.vk.disown(self)


def _image_usage(vk: VulkanContext, vk_format: int) -> int:
    """Every usage the format supports with optimal tiling, so one image serves any test."""
    properties = vkapi.vkGetPhysicalDeviceFormatProperties(vk.physical_device, vk_format)
    features = properties.optimalTilingFeatures
    usage = vkapi.VK_IMAGE_USAGE_TRANSFER_SRC_BIT | vkapi.VK_IMAGE_USAGE_TRANSFER_DST_BIT
    for feature, bit in (
        (vkapi.VK_FORMAT_FEATURE_SAMPLED_IMAGE_BIT, vkapi.VK_IMAGE_USAGE_SAMPLED_BIT),
        (vkapi.VK_FORMAT_FEATURE_STORAGE_IMAGE_BIT, vkapi.VK_IMAGE_USAGE_STORAGE_BIT),
        (vkapi.VK_FORMAT_FEATURE_COLOR_ATTACHMENT_BIT, vkapi.VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT),
    ):
        if features & feature:
            usage |= bit
    return int(usage)


class ImageView:
    def __init__(
        self,
        image: Image,
        view_type: int | None,
        base_layer: int,
        layer_count: int | None,
        base_level: int,
        level_count: int | None,
    ) -> None:
        self.vk = image.vk
        self.image = image
        layer_count = image.layers - base_layer if layer_count is None else layer_count
        level_count = image.mip_levels - base_level if level_count is None else level_count
        if view_type is None:
            view_type = (
                vkapi.VK_IMAGE_VIEW_TYPE_2D
                if image.layers == 1
                else (vkapi.VK_IMAGE_VIEW_TYPE_2D_ARRAY)
            )
        info = vkapi.VkImageViewCreateInfo(
            image=image.handle,
            viewType=view_type,
            format=image.format.vk_format,
            subresourceRange=vkapi.VkImageSubresourceRange(
                aspectMask=vkapi.VK_IMAGE_ASPECT_COLOR_BIT,
                baseMipLevel=base_level,
                levelCount=level_count,
                baseArrayLayer=base_layer,
                layerCount=layer_count,
            ),
        )
        self.handle = vkapi.vkCreateImageView(self.vk.device, info, None)
        self.vk.own(self)

    def destroy(self) -> None:
        if self.handle is not None:
            vkapi.vkDestroyImageView(self.vk.device, self.handle, None)
            self.handle = None
            self.vk.disown(self)


class Sampler:
    """Nearest filtering and clamp-to-edge by default, so sampled texels are exact."""

    def __init__(self, vk: VulkanContext, linear: bool = False, repeat: bool = False) -> None:
        self.vk = vk
        filt = vkapi.VK_FILTER_LINEAR if linear else vkapi.VK_FILTER_NEAREST
        address = (
            vkapi.VK_SAMPLER_ADDRESS_MODE_REPEAT
            if repeat
            else vkapi.VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE
        )
        info = vkapi.VkSamplerCreateInfo(
            magFilter=filt,
            minFilter=filt,
            mipmapMode=vkapi.VK_SAMPLER_MIPMAP_MODE_NEAREST,
            addressModeU=address,
            addressModeV=address,
            addressModeW=address,
            maxLod=vkapi.VK_LOD_CLAMP_NONE,
            borderColor=vkapi.VK_BORDER_COLOR_FLOAT_TRANSPARENT_BLACK,
        )
        self.handle = vkapi.vkCreateSampler(vk.device, info, None)
        vk.own(self)

    def destroy(self) -> None:
        if self.handle is not None:
            vkapi.vkDestroySampler(self.vk.device, self.handle, None)
            self.handle = None
            self.vk.disown(self)
