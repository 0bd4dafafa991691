/* A render loop with 3 frames in flight, for issue 17's frame-throughput figure (target 4).
 * It knows nothing of gpuav. Each frame waits only for the fence of the frame 3 back, re-records
 * that slot's command buffer (render pass, pipeline, one descriptor set of 8 textures and a
 * storage buffer, DRAWS draws of a triangle covering the target, each pushing its index) into
 * the slot's own color image, and submits it with the slot's fence. Every access is in bounds.
 *
 * usage: frame_loop_app VERT.spv FRAG.spv [--frames N] [--warmup N] [--draws N]
 *                       [--width W] [--height H]
 * Prints one JSON line: frames per second over the N frames after the warm-up (from the first
 * measured frame's wait to the last frame's completion), the median CPU time per frame spent
 * recording and submitting, the median time waiting for a fence, the last frame's pixel hash,
 * the device's name, and how many error messages the debug messenger received (each also on
 * stderr).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "vk_app_common.h"

enum { IN_FLIGHT = 3, TEXTURES = 8, TEXTURE_SIZE = 64, WEIGHTS = 4096 };
static const VkFormat COLOR_FORMAT = VK_FORMAT_R8G8B8A8_UNORM;

static VkDevice device;
static VkPhysicalDeviceMemoryProperties memory_properties;
static uint32_t error_messages;

static VkBool32 VKAPI_PTR count_errors(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                       VkDebugUtilsMessageTypeFlagsEXT types,
                                       const VkDebugUtilsMessengerCallbackDataEXT *data,
                                       void *user) {
    (void)types;
    (void)user;
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        if (error_messages++ < 5) fprintf(stderr, "error message: %s\n", data->pMessage);
    }
    return VK_FALSE;
}

static double now_ms(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (double)time.tv_sec * 1e3 + (double)time.tv_nsec / 1e6;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, uint32_t count) {
    qsort(values, count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

static void make_image(uint32_t width, uint32_t height, VkImageUsageFlags usage, VkImage *image,
                       VkDeviceMemory *memory, VkImageView *view) {
    VkImageCreateInfo info = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = COLOR_FORMAT;
    info.extent = (VkExtent3D){width, height, 1};
    info.mipLevels = 1;
    info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = usage;
    CHECK(vkCreateImage(device, &info, NULL, image));
    VkMemoryRequirements requirements;
    vkGetImageMemoryRequirements(device, *image, &requirements);
    VkMemoryAllocateInfo allocate = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = memory_type(&memory_properties, requirements.memoryTypeBits,
                                           VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    CHECK(vkAllocateMemory(device, &allocate, NULL, memory));
    CHECK(vkBindImageMemory(device, *image, *memory, 0));
    VkImageViewCreateInfo view_info = {VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view_info.image = *image;
    view_info.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view_info.format = COLOR_FORMAT;
    view_info.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    CHECK(vkCreateImageView(device, &view_info, NULL, view));
}

static void image_barrier(VkCommandBuffer command_buffer, VkImage image, VkImageLayout from,
                          VkImageLayout to, VkAccessFlags source_access,
                          VkAccessFlags destination_access, VkPipelineStageFlags source,
                          VkPipelineStageFlags destination) {
    VkImageMemoryBarrier barrier = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    barrier.srcAccessMask = source_access;
    barrier.dstAccessMask = destination_access;
    barrier.oldLayout = from;
    barrier.newLayout = to;
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.image = image;
    barrier.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    vkCmdPipelineBarrier(command_buffer, source, destination, 0, 0, NULL, 0, NULL, 1, &barrier);
}

/* TEXTURES small textures of distinct patterns, uploaded once and left shader-readable. */
static void make_textures(VkQueue queue, VkCommandPool pool, VkImage *images,
                          VkDeviceMemory *memories, VkImageView *views) {
    const VkDeviceSize texture_bytes = TEXTURE_SIZE * TEXTURE_SIZE * 4;
    VkBuffer staging;
    VkDeviceMemory staging_memory;
    create_host_buffer(device, &memory_properties, texture_bytes * TEXTURES,
                       VK_BUFFER_USAGE_TRANSFER_SRC_BIT, NULL, ~0u, NULL, &staging,
                       &staging_memory);
    uint8_t *texels;
    CHECK(vkMapMemory(device, staging_memory, 0, VK_WHOLE_SIZE, 0, (void **)&texels));
    for (uint32_t i = 0; i < texture_bytes * TEXTURES; ++i)
        texels[i] = (uint8_t)((i / 4 % TEXTURE_SIZE) * 3 + (i / 4 / TEXTURE_SIZE) * 5 + i % 4 * 60);
    vkUnmapMemory(device, staging_memory);
    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    for (uint32_t t = 0; t < TEXTURES; ++t) {
        make_image(TEXTURE_SIZE, TEXTURE_SIZE,
                   VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT, &images[t],
                   &memories[t], &views[t]);
        image_barrier(command_buffer, images[t], VK_IMAGE_LAYOUT_UNDEFINED,
                      VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
        VkBufferImageCopy copy = {0};
        copy.bufferOffset = texture_bytes * t;
        copy.imageSubresource = (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        copy.imageExtent = (VkExtent3D){TEXTURE_SIZE, TEXTURE_SIZE, 1};
        vkCmdCopyBufferToImage(command_buffer, staging, images[t],
                               VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &copy);
        image_barrier(command_buffer, images[t], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
                      VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, VK_ACCESS_TRANSFER_WRITE_BIT,
                      VK_ACCESS_SHADER_READ_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                      VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT);
    }
    CHECK(vkEndCommandBuffer(command_buffer));
    vkDestroyFence(device, submit_and_wait(device, queue, command_buffer), NULL);
    vkFreeCommandBuffers(device, pool, 1, &command_buffer);
    vkDestroyBuffer(device, staging, NULL);
    vkFreeMemory(device, staging_memory, NULL);
}

static VkRenderPass make_render_pass(void) {
    VkAttachmentDescription attachment = {0, COLOR_FORMAT, VK_SAMPLE_COUNT_1_BIT,
                                          VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_STORE,
                                          VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                          VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                          VK_IMAGE_LAYOUT_UNDEFINED,
                                          VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL};
    VkAttachmentReference reference = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass = {0};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &reference;
    /* The copy of the last frame reads the image after the pass. */
    VkSubpassDependency dependency = {0, VK_SUBPASS_EXTERNAL,
                                      VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                                      VK_PIPELINE_STAGE_TRANSFER_BIT,
                                      VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                                      VK_ACCESS_TRANSFER_READ_BIT, 0};
    VkRenderPassCreateInfo info = {VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    info.attachmentCount = 1;
    info.pAttachments = &attachment;
    info.subpassCount = 1;
    info.pSubpasses = &subpass;
    info.dependencyCount = 1;
    info.pDependencies = &dependency;
    VkRenderPass render_pass;
    CHECK(vkCreateRenderPass(device, &info, NULL, &render_pass));
    return render_pass;
}

static VkPipeline make_pipeline(VkPipelineLayout layout, VkRenderPass render_pass,
                                VkShaderModule vert, VkShaderModule frag, uint32_t width,
                                uint32_t height) {
    VkPipelineShaderStageCreateInfo stages[2] = {
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_VERTEX_BIT,
         vert, "main", NULL},
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
         VK_SHADER_STAGE_FRAGMENT_BIT, frag, "main", NULL}};
    VkPipelineVertexInputStateCreateInfo vertex_input = {
        VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkPipelineInputAssemblyStateCreateInfo assembly = {
        VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    VkViewport viewport = {0, 0, (float)width, (float)height, 0, 1};
    VkRect2D scissor = {{0, 0}, {width, height}};
    VkPipelineViewportStateCreateInfo viewport_state = {
        VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    viewport_state.viewportCount = 1;
    viewport_state.pViewports = &viewport;
    viewport_state.scissorCount = 1;
    viewport_state.pScissors = &scissor;
    VkPipelineRasterizationStateCreateInfo raster = {
        VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    raster.polygonMode = VK_POLYGON_MODE_FILL;
    raster.cullMode = VK_CULL_MODE_NONE;
    raster.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo multisample = {
        VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineColorBlendAttachmentState blend_attachment = {0};
    blend_attachment.colorWriteMask = 0xF;
    VkPipelineColorBlendStateCreateInfo blend = {
        VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
    blend.attachmentCount = 1;
    blend.pAttachments = &blend_attachment;
    VkGraphicsPipelineCreateInfo info = {VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    info.stageCount = 2;
    info.pStages = stages;
    info.pVertexInputState = &vertex_input;
    info.pInputAssemblyState = &assembly;
    info.pViewportState = &viewport_state;
    info.pRasterizationState = &raster;
    info.pMultisampleState = &multisample;
    info.pColorBlendState = &blend;
    info.layout = layout;
    info.renderPass = render_pass;
    VkPipeline pipeline;
    CHECK(vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));
    return pipeline;
}

/* Set 0: binding 0 the textures, binding 1 the weights buffer, both for the fragment stage. */
static void make_layouts(VkDescriptorSetLayout *set_layout, VkPipelineLayout *layout) {
    VkDescriptorSetLayoutBinding bindings[2] = {
        {0, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, TEXTURES, VK_SHADER_STAGE_FRAGMENT_BIT,
         NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_FRAGMENT_BIT, NULL}};
    VkDescriptorSetLayoutCreateInfo set_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 2;
    set_info.pBindings = bindings;
    CHECK(vkCreateDescriptorSetLayout(device, &set_info, NULL, set_layout));
    VkPushConstantRange push = {VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, 8};
    VkPipelineLayoutCreateInfo info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    info.setLayoutCount = 1;
    info.pSetLayouts = set_layout;
    info.pushConstantRangeCount = 1;
    info.pPushConstantRanges = &push;
    CHECK(vkCreatePipelineLayout(device, &info, NULL, layout));
}

static VkDescriptorSet make_set(VkDescriptorSetLayout set_layout, const VkImageView *views,
                                VkSampler sampler, VkBuffer weights, VkDescriptorPool *pool) {
    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, TEXTURES},
                                     {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1}};
    VkDescriptorPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 2;
    pool_info.pPoolSizes = sizes;
    CHECK(vkCreateDescriptorPool(device, &pool_info, NULL, pool));
    VkDescriptorSetAllocateInfo allocate = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = *pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout;
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(device, &allocate, &set));
    VkDescriptorImageInfo images[TEXTURES];
    for (uint32_t t = 0; t < TEXTURES; ++t)
        images[t] = (VkDescriptorImageInfo){sampler, views[t],
                                            VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
    VkDescriptorBufferInfo buffer = {weights, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet writes[2] = {{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET},
                                      {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET}};
    writes[0].dstSet = set;
    writes[0].dstBinding = 0;
    writes[0].descriptorCount = TEXTURES;
    writes[0].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    writes[0].pImageInfo = images;
    writes[1].dstSet = set;
    writes[1].dstBinding = 1;
    writes[1].descriptorCount = 1;
    writes[1].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[1].pBufferInfo = &buffer;
    vkUpdateDescriptorSets(device, 2, writes, 0, NULL);
    return set;
}

typedef struct {
    VkRenderPass render_pass;
    VkPipeline pipeline;
    VkPipelineLayout layout;
    VkDescriptorSet set;
    uint32_t width, height, draws;
} Scene;

static void record_frame(const Scene *scene, VkCommandBuffer command_buffer,
                         VkFramebuffer framebuffer) {
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    CHECK(vkBeginCommandBuffer(command_buffer, &begin));
    VkClearValue clear = {{{0.0f, 0.0f, 0.0f, 1.0f}}};
    VkRenderPassBeginInfo pass = {VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    pass.renderPass = scene->render_pass;
    pass.framebuffer = framebuffer;
    pass.renderArea = (VkRect2D){{0, 0}, {scene->width, scene->height}};
    pass.clearValueCount = 1;
    pass.pClearValues = &clear;
    vkCmdBeginRenderPass(command_buffer, &pass, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, scene->pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, scene->layout, 0, 1,
                            &scene->set, 0, NULL);
    for (uint32_t d = 0; d < scene->draws; ++d) {
        uint32_t constants[2] = {d, scene->draws};
        vkCmdPushConstants(command_buffer, scene->layout,
                           VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0, 8,
                           constants);
        vkCmdDraw(command_buffer, 3, 1, 0, 0);
    }
    vkCmdEndRenderPass(command_buffer);
    CHECK(vkEndCommandBuffer(command_buffer));
}

/* The fnv1a hash of `image`'s pixels (left in TRANSFER_SRC_OPTIMAL by the render pass). */
static uint32_t hash_image(VkQueue queue, VkCommandPool pool, VkImage image, uint32_t width,
                           uint32_t height) {
    VkDeviceSize bytes = (VkDeviceSize)width * height * 4;
    VkBuffer readback;
    VkDeviceMemory memory;
    create_host_buffer(device, &memory_properties, bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, NULL,
                       ~0u, NULL, &readback, &memory);
    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    VkBufferImageCopy copy = {0};
    copy.imageSubresource = (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    copy.imageExtent = (VkExtent3D){width, height, 1};
    vkCmdCopyImageToBuffer(command_buffer, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback,
                           1, &copy);
    VkMemoryBarrier barrier = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                               VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, NULL, 0, NULL);
    CHECK(vkEndCommandBuffer(command_buffer));
    vkDestroyFence(device, submit_and_wait(device, queue, command_buffer), NULL);
    uint8_t *pixels;
    CHECK(vkMapMemory(device, memory, 0, bytes, 0, (void **)&pixels));
    uint32_t hash = fnv1a(pixels, (size_t)bytes);
    vkUnmapMemory(device, memory);
    vkFreeCommandBuffers(device, pool, 1, &command_buffer);
    vkDestroyBuffer(device, readback, NULL);
    vkFreeMemory(device, memory, NULL);
    return hash;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s VERT.spv FRAG.spv [options]\n", argv[0]);
        return 2;
    }
    uint32_t frames = 300, warmup = 30, draws = 100, width = 256, height = 256;
    for (int i = 3; i + 1 < argc; i += 2) {
        uint32_t value = (uint32_t)atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--frames")) frames = value;
        else if (!strcmp(argv[i], "--warmup")) warmup = value;
        else if (!strcmp(argv[i], "--draws")) draws = value;
        else if (!strcmp(argv[i], "--width")) width = value;
        else if (!strcmp(argv[i], "--height")) height = value;
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (frames == 0 || draws == 0) return 2;

    const char *extensions[1] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkInstance instance = create_instance("gpuav-frame-loop", VK_API_VERSION_1_1, NULL, 1,
                                          extensions);
    VkDebugUtilsMessengerEXT messenger =
        create_messenger(instance, VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
                         VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                             VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
                         count_errors);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(physical, &properties);
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkQueue queue;
    device = create_device(physical, NULL, 0, NULL, &queue);
    VkCommandPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(device, &pool_info, NULL, &pool));

    VkImage textures[TEXTURES];
    VkDeviceMemory texture_memories[TEXTURES];
    VkImageView texture_views[TEXTURES];
    make_textures(queue, pool, textures, texture_memories, texture_views);
    VkSamplerCreateInfo sampler_info = {VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    sampler_info.magFilter = sampler_info.minFilter = VK_FILTER_LINEAR;
    sampler_info.addressModeU = sampler_info.addressModeV = sampler_info.addressModeW =
        VK_SAMPLER_ADDRESS_MODE_REPEAT;
    VkSampler sampler;
    CHECK(vkCreateSampler(device, &sampler_info, NULL, &sampler));
    VkBuffer weights;
    VkDeviceMemory weights_memory;
    create_host_buffer(device, &memory_properties, WEIGHTS * 16, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                       NULL, ~0u, NULL, &weights, &weights_memory);
    float *weight_values;
    CHECK(vkMapMemory(device, weights_memory, 0, VK_WHOLE_SIZE, 0, (void **)&weight_values));
    for (uint32_t i = 0; i < WEIGHTS * 4; ++i) weight_values[i] = (float)(i % 17) / 16.0f;
    vkUnmapMemory(device, weights_memory);

    Scene scene = {make_render_pass(), VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE,
                   width, height, draws};
    VkDescriptorSetLayout set_layout;
    make_layouts(&set_layout, &scene.layout);
    VkShaderModule vert = load_shader_module(device, argv[1]);
    VkShaderModule frag = load_shader_module(device, argv[2]);
    scene.pipeline = make_pipeline(scene.layout, scene.render_pass, vert, frag, width, height);
    VkDescriptorPool descriptor_pool;
    scene.set = make_set(set_layout, texture_views, sampler, weights, &descriptor_pool);

    VkImage targets[IN_FLIGHT];
    VkDeviceMemory target_memories[IN_FLIGHT];
    VkImageView target_views[IN_FLIGHT];
    VkFramebuffer framebuffers[IN_FLIGHT];
    VkFence fences[IN_FLIGHT];
    VkCommandBuffer command_buffers[IN_FLIGHT];
    VkCommandBufferAllocateInfo allocate = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    allocate.commandPool = pool;
    allocate.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    allocate.commandBufferCount = IN_FLIGHT;
    CHECK(vkAllocateCommandBuffers(device, &allocate, command_buffers));
    for (uint32_t s = 0; s < IN_FLIGHT; ++s) {
        make_image(width, height,
                   VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                   &targets[s], &target_memories[s], &target_views[s]);
        VkFramebufferCreateInfo framebuffer_info = {VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
        framebuffer_info.renderPass = scene.render_pass;
        framebuffer_info.attachmentCount = 1;
        framebuffer_info.pAttachments = &target_views[s];
        framebuffer_info.width = width;
        framebuffer_info.height = height;
        framebuffer_info.layers = 1;
        CHECK(vkCreateFramebuffer(device, &framebuffer_info, NULL, &framebuffers[s]));
        VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        fence_info.flags = VK_FENCE_CREATE_SIGNALED_BIT;
        CHECK(vkCreateFence(device, &fence_info, NULL, &fences[s]));
    }

    double *cpu_ms = malloc(sizeof(double) * frames), *wait_ms = malloc(sizeof(double) * frames);
    if (!cpu_ms || !wait_ms) return 2;
    double start = 0;
    for (uint32_t frame = 0; frame < warmup + frames; ++frame) {
        uint32_t slot = frame % IN_FLIGHT;
        double before_wait = now_ms();
        if (frame == warmup) start = before_wait;
        CHECK(vkWaitForFences(device, 1, &fences[slot], VK_TRUE, UINT64_MAX));
        double after_wait = now_ms();
        CHECK(vkResetFences(device, 1, &fences[slot]));
        record_frame(&scene, command_buffers[slot], framebuffers[slot]);
        VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
        submit.commandBufferCount = 1;
        submit.pCommandBuffers = &command_buffers[slot];
        CHECK(vkQueueSubmit(queue, 1, &submit, fences[slot]));
        if (frame >= warmup) {
            wait_ms[frame - warmup] = after_wait - before_wait;
            cpu_ms[frame - warmup] = now_ms() - after_wait;
        }
    }
    CHECK(vkWaitForFences(device, IN_FLIGHT, fences, VK_TRUE, UINT64_MAX));
    double elapsed = now_ms() - start;
    uint32_t last = (warmup + frames - 1) % IN_FLIGHT;
    uint32_t hash = hash_image(queue, pool, targets[last], width, height);

    printf("{\"fps\": %.3f, \"frames\": %u, \"draws\": %u, \"width\": %u, \"height\": %u, "
           "\"cpu_ms\": %.4f, \"wait_ms\": %.4f, \"checksum\": \"%08x\", \"device\": \"%s\", "
           "\"errors\": %u}\n",
           frames * 1e3 / elapsed, frames, draws, width, height, median(cpu_ms, frames),
           median(wait_ms, frames), hash, properties.deviceName, error_messages);
    fflush(stdout);

    free(cpu_ms);
    free(wait_ms);
    for (uint32_t s = 0; s < IN_FLIGHT; ++s) {
        vkDestroyFence(device, fences[s], NULL);
        vkDestroyFramebuffer(device, framebuffers[s], NULL);
        vkDestroyImageView(device, target_views[s], NULL);
        vkDestroyImage(device, targets[s], NULL);
        vkFreeMemory(device, target_memories[s], NULL);
    }
    vkFreeCommandBuffers(device, pool, IN_FLIGHT, command_buffers);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipeline(device, scene.pipeline, NULL);
    vkDestroyShaderModule(device, vert, NULL);
    vkDestroyShaderModule(device, frag, NULL);
    vkDestroyPipelineLayout(device, scene.layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    vkDestroyRenderPass(device, scene.render_pass, NULL);
    vkDestroyBuffer(device, weights, NULL);
    vkFreeMemory(device, weights_memory, NULL);
    vkDestroySampler(device, sampler, NULL);
    for (uint32_t t = 0; t < TEXTURES; ++t) {
        vkDestroyImageView(device, texture_views[t], NULL);
        vkDestroyImage(device, textures[t], NULL);
        vkFreeMemory(device, texture_memories[t], NULL);
    }
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroyDevice(device, NULL);
    destroy_messenger(instance, messenger);
    vkDestroyInstance(instance, NULL);
    /* Error messages that came after the figures (a read-back at device destruction). */
    return error_messages ? 1 : 0;
}
