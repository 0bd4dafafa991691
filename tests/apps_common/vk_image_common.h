/* What the test programs that make images do alike: an image with its memory and view, a
 * nearest-filtering sampler, layout barriers and clears. Static inline, like vk_app_common.h,
 * which it builds on; knows nothing of gpuav. */
#ifndef VK_IMAGE_COMMON_H
#define VK_IMAGE_COMMON_H
#include "vk_app_common.h"

/* The one level and layer of a color image. */
#define COLOR_SUBRESOURCE_RANGE ((VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1})

/* The image of `info` (one level), bound to new memory of `memory_flags`, and a view of
 * `view_type` over all its layers. */
static inline void create_image_and_view_of(VkDevice device,
                                            const VkPhysicalDeviceMemoryProperties *properties,
                                            const VkImageCreateInfo *info,
                                            VkImageViewType view_type,
                                            VkMemoryPropertyFlags memory_flags, VkImage *image,
                                            VkDeviceMemory *memory, VkImageView *view) {
    CHECK(vkCreateImage(device, info, NULL, image));
    VkMemoryRequirements requirements;
    vkGetImageMemoryRequirements(device, *image, &requirements);
    VkMemoryAllocateInfo allocate = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = memory_type(properties, requirements.memoryTypeBits, memory_flags);
    CHECK(vkAllocateMemory(device, &allocate, NULL, memory));
    CHECK(vkBindImageMemory(device, *image, *memory, 0));
    VkImageViewCreateInfo view_info = {VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view_info.image = *image;
    view_info.viewType = view_type;
    view_info.format = info->format;
    view_info.subresourceRange =
        (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, info->arrayLayers};
    CHECK(vkCreateImageView(device, &view_info, NULL, view));
}

/* The create info of a 2D single-sample image of one level and layer (`format`, `width` x
 * `height`, optimal tiling, `usage`). */
static inline VkImageCreateInfo image_2d_info(VkFormat format, uint32_t width, uint32_t height,
                                              VkImageUsageFlags usage) {
    VkImageCreateInfo info = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = format;
    info.extent = (VkExtent3D){width, height, 1};
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = usage;
    return info;
}

/* A 2D image of image_2d_info bound to new memory of `memory_flags`, and a 2D view of it. */
static inline void create_image_and_view(VkDevice device,
                                         const VkPhysicalDeviceMemoryProperties *properties,
                                         VkFormat format, uint32_t width, uint32_t height,
                                         VkImageUsageFlags usage,
                                         VkMemoryPropertyFlags memory_flags, VkImage *image,
                                         VkDeviceMemory *memory, VkImageView *view) {
    VkImageCreateInfo info = image_2d_info(format, width, height, usage);
    create_image_and_view_of(device, properties, &info, VK_IMAGE_VIEW_TYPE_2D, memory_flags,
                             image, memory, view);
}

/* Destroys what create_image_and_view made: the view, the image, then its memory. */
static inline void destroy_image_and_view(VkDevice device, VkImage image, VkDeviceMemory memory,
                                          VkImageView view) {
    vkDestroyImageView(device, view, NULL);
    vkDestroyImage(device, image, NULL);
    vkFreeMemory(device, memory, NULL);
}

/* Records a layout change of a color image's one level and layer, waiting on `source_access`
 * of `source` stages before `destination_access` of `destination` stages. */
static inline void color_image_barrier(VkCommandBuffer command_buffer, VkImage image,
                                       VkImageLayout from, VkImageLayout to,
                                       VkAccessFlags source_access,
                                       VkAccessFlags destination_access,
                                       VkPipelineStageFlags source,
                                       VkPipelineStageFlags destination) {
    VkImageMemoryBarrier barrier = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    barrier.srcAccessMask = source_access;
    barrier.dstAccessMask = destination_access;
    barrier.oldLayout = from;
    barrier.newLayout = to;
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.image = image;
    barrier.subresourceRange = COLOR_SUBRESOURCE_RANGE;
    vkCmdPipelineBarrier(command_buffer, source, destination, 0, 0, NULL, 0, NULL, 1, &barrier);
}

/* A sampler with nearest filtering, addressing `address_mode` on all three axes, with
 * unnormalized coordinates where `unnormalized`. */
static inline VkSampler create_nearest_sampler(VkDevice device, VkSamplerAddressMode address_mode,
                                               VkBool32 unnormalized) {
    VkSamplerCreateInfo info = {VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    info.magFilter = VK_FILTER_NEAREST;
    info.minFilter = VK_FILTER_NEAREST;
    info.addressModeU = address_mode;
    info.addressModeV = address_mode;
    info.addressModeW = address_mode;
    info.unnormalizedCoordinates = unnormalized;
    VkSampler sampler;
    CHECK(vkCreateSampler(device, &info, NULL, &sampler));
    return sampler;
}

/* Records the `range` of `image` moved to GENERAL and cleared to `value`, then made visible to
 * `access` of the `stages` that follow. */
static inline void clear_image_to_general(VkCommandBuffer command_buffer, VkImage image,
                                          VkImageSubresourceRange range, VkClearColorValue value,
                                          VkPipelineStageFlags stages, VkAccessFlags access) {
    VkImageMemoryBarrier barrier = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    barrier.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    barrier.newLayout = VK_IMAGE_LAYOUT_GENERAL;
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.image = image;
    barrier.subresourceRange = range;
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1, &barrier);
    vkCmdClearColorImage(command_buffer, image, VK_IMAGE_LAYOUT_GENERAL, &value, 1, &range);
    barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    barrier.dstAccessMask = access;
    barrier.oldLayout = VK_IMAGE_LAYOUT_GENERAL;
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TRANSFER_BIT, stages, 0, 0, NULL, 0,
                         NULL, 1, &barrier);
}
#endif
