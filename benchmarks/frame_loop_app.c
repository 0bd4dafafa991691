/* A render loop with 3 frames in flight, for issue 17's frame-throughput figure (target 4).
 * It knows nothing of gpuav. Each frame waits only for the fence of the frame 3 back, re-records
 * that slot's command buffer (render pass, pipeline, one descriptor set of 8 textures and a
 * storage buffer, DRAWS draws of a triangle covering the target, each pushing its index) into
 * the slot's own color image, and submits it with the slot's fence. Every access is in bounds.
 *
 * usage: frame_loop_app VERT.spv FRAG.spv [--frames N] [--warmup N] [--draws N]
 *                       [--width W] [--height H] [--print-messages 1] [--push2 1]
 * With --push2 1 (VK_KHR_maintenance6), each draw first pushes index 0 with vkCmdPushConstants,
 * then its own index with vkCmdPushConstants2KHR (what a layer must follow to know it).
 * Prints one JSON line: frames per second over the N frames after the warm-up (from the first
 * measured frame's wait to the last frame's completion), the median CPU time per frame spent
 * recording and submitting, the median time waiting for a fence, the last frame's pixel hash,
 * the device's name, and how many error messages the debug messenger received (the first few
 * on stderr; with --print-messages 1, every one as a "message <severity>|<id>|<text>" line on
 * stdout before the figures, as the layer tests read them).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vulkan/vulkan.h>

#include "maintenance6_ext.h"
#include "vk_graphics_common.h"

enum { IN_FLIGHT = 3, TEXTURES = 8, TEXTURE_SIZE = 64, WEIGHTS = 4096 };
static const VkFormat COLOR_FORMAT = VK_FORMAT_R8G8B8A8_UNORM;

static VkDevice device;
static PFN_vkCmdPushConstants2KHR push_constants2; /* with --push2 1 */
static VkPhysicalDeviceMemoryProperties memory_properties;
static uint32_t error_messages;
static int print_messages;

static VkBool32 VKAPI_PTR count_errors(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                       VkDebugUtilsMessageTypeFlagsEXT types,
                                       const VkDebugUtilsMessengerCallbackDataEXT *data,
                                       void *user) {
    if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
        if (print_messages) print_message(severity, types, data, user);
        else if (error_messages < 5) fprintf(stderr, "error message: %s\n", data->pMessage);
        ++error_messages;
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
        create_image_and_view(device, &memory_properties, COLOR_FORMAT, TEXTURE_SIZE,
                              TEXTURE_SIZE,
                              VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                              VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &images[t], &memories[t],
                              &views[t]);
        color_image_barrier(command_buffer, images[t], VK_IMAGE_LAYOUT_UNDEFINED,
                            VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 0, VK_ACCESS_TRANSFER_WRITE_BIT,
                            VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT);
        VkBufferImageCopy copy = {0};
        copy.bufferOffset = texture_bytes * t;
        copy.imageSubresource = (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        copy.imageExtent = (VkExtent3D){TEXTURE_SIZE, TEXTURE_SIZE, 1};
        vkCmdCopyBufferToImage(command_buffer, staging, images[t],
                               VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1, &copy);
        color_image_barrier(command_buffer, images[t], VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL,
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

static VkPipeline make_pipeline(VkPipelineLayout layout, VkRenderPass render_pass,
                                VkShaderModule vert, VkShaderModule frag, uint32_t width,
                                uint32_t height) {
    VkPipelineShaderStageCreateInfo stages[2];
    vertex_fragment_stages(vert, frag, stages);
    DrawState state;
    init_draw_state(&state, width, height, 1, 0xF);
    VkGraphicsPipelineCreateInfo info =
        draw_pipeline_info(&state, NULL, 2, stages, layout, render_pass);
    VkPipeline pipeline;
    CHECK(vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));
    return pipeline;
}

/* Set 0: binding 0 the textures, binding 1 the weights buffer, both for the fragment stage. */
static VkDescriptorSet make_set(VkDescriptorSetLayout set_layout, const VkImageView *views,
                                VkSampler sampler, VkBuffer weights, VkDescriptorPool *pool) {
    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, TEXTURES},
                                     {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1}};
    VkDescriptorSet set = allocate_one_set(device, 2, sizes, NULL, set_layout, pool);
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
        uint32_t constants[2] = {push_constants2 ? 0 : d, scene->draws};
        VkShaderStageFlags stages = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
        vkCmdPushConstants(command_buffer, scene->layout, stages, 0, 8, constants);
        if (push_constants2) {
            VkPushConstantsInfoKHR info = {VK_STRUCTURE_TYPE_PUSH_CONSTANTS_INFO_KHR};
            info.layout = scene->layout;
            info.stageFlags = stages;
            info.size = 4;
            info.pValues = &d;
            push_constants2(command_buffer, &info);
        }
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
    copy_color_image_to_buffer(command_buffer, image, width, height, readback);
    transfer_to_host_barrier(command_buffer);
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
    int push2 = 0;
    for (int i = 3; i + 1 < argc; i += 2) {
        uint32_t value = (uint32_t)atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--frames")) frames = value;
        else if (!strcmp(argv[i], "--warmup")) warmup = value;
        else if (!strcmp(argv[i], "--draws")) draws = value;
        else if (!strcmp(argv[i], "--width")) width = value;
        else if (!strcmp(argv[i], "--height")) height = value;
        else if (!strcmp(argv[i], "--print-messages")) print_messages = (int)value;
        else if (!strcmp(argv[i], "--push2")) push2 = (int)value;
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
    VkPhysicalDeviceMaintenance6FeaturesKHR maintenance6 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_6_FEATURES_KHR, NULL, VK_TRUE};
    const char *device_extensions[1] = {VK_KHR_MAINTENANCE_6_EXTENSION_NAME};
    device = create_device(physical, push2 ? &maintenance6 : NULL, push2 ? 1 : 0,
                           device_extensions, &queue);
    if (push2) {
        push_constants2 =
            (PFN_vkCmdPushConstants2KHR)vkGetDeviceProcAddr(device, "vkCmdPushConstants2KHR");
        if (!push_constants2) return 2;
    }
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

    VkRenderPass render_pass =
        create_color_render_pass(device, COLOR_FORMAT, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    Scene scene = {render_pass, VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE,
                   width, height, draws};
    /* Set 0: binding 0 the textures, binding 1 the weights buffer, both for the fragment stage. */
    VkDescriptorSetLayoutBinding bindings[2] = {
        {0, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, TEXTURES, VK_SHADER_STAGE_FRAGMENT_BIT,
         NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_FRAGMENT_BIT, NULL}};
    VkDescriptorSetLayout set_layout;
    create_set_and_pipeline_layouts(device, NULL, 2, bindings,
                                    VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 8,
                                    &set_layout, &scene.layout);
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
        create_image_and_view(device, &memory_properties, COLOR_FORMAT, width, height,
                              VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                              VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, &targets[s],
                              &target_memories[s], &target_views[s]);
        framebuffers[s] =
            create_framebuffer(device, scene.render_pass, target_views[s], width, height);
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
        destroy_image_and_view(device, targets[s], target_memories[s], target_views[s]);
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
        destroy_image_and_view(device, textures[t], texture_memories[t], texture_views[t]);
    }
    vkDestroyCommandPool(device, pool, NULL);
    destroy_device_and_instance(device, instance, messenger);
    /* Error messages that came after the figures (a read-back at device destruction). */
    return error_messages ? 1 : 0;
}
