/* A small Vulkan app in C for the layer tests: compute dispatches over regions of a buffer,
 * then an offscreen draw of N stripes into a 16x16 image. It knows nothing of gpuav.
 *
 * usage: c_app COMPUTE.spv VERT.spv FRAG.spv [--bad-dispatch N] [--bad-draw N]
 *              [--dispatches N] [--draws N] [--messenger] [--validation-features]
 *              [--layer-settings] [--only-instance] [--fork-after-instance]
 * Prints "instance_ms <ms>" (how long vkCreateInstance took), "compute <fnv1a hex>",
 * "pixels <fnv1a hex>", "maxBoundDescriptorSets <n>" and one
 * "message <severity>|<id>|<text>" line per message its debug messenger received.
 *
 * --layer-settings asks gpuav for its checks through VK_EXT_layer_settings, as an app
 * configures any layer; --only-instance returns from main right after vkCreateInstance;
 * --fork-after-instance forks there, the child calling exit(0) at once (the parent prints
 * "child <status>").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vulkan/vulkan.h>

#include "vk_graphics_common.h"

enum { SIZE = 16, LOCAL = 64 };

/* VK_EXT_layer_settings, newer than some systems' headers. */
typedef struct {
    const char *pLayerName;
    const char *pSettingName;
    int32_t type; /* VkLayerSettingTypeEXT */
    uint32_t valueCount;
    const void *pValues;
} LayerSetting;
typedef struct {
    int32_t sType;
    const void *pNext;
    uint32_t settingCount;
    const LayerSetting *pSettings;
} LayerSettingsCreateInfo;
enum {
    LAYER_SETTINGS_CREATE_INFO = 1000496000,
    SETTING_BOOL32 = 0,
    SETTING_UINT32 = 3,
    SETTING_STRING = 7,
};

static double now_ms(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return time.tv_sec * 1e3 + time.tv_nsec / 1e6;
}

static VkDevice device;
static VkPhysicalDeviceMemoryProperties memory_properties;

static void make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, VkBuffer *buffer,
                        VkDeviceMemory *memory) {
    create_host_buffer(device, &memory_properties, size, usage, NULL, ~0u, NULL, buffer, memory);
}

static uint32_t run_compute(VkQueue queue, VkCommandPool pool, const char *path,
                            uint32_t dispatches, int bad_dispatch) {
    VkDeviceSize size = (VkDeviceSize)dispatches * LOCAL * 4;
    VkBuffer buffer;
    VkDeviceMemory memory;
    make_buffer(size, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, &buffer, &memory);
    uint32_t *values;
    CHECK(vkMapMemory(device, memory, 0, size, 0, (void **)&values));
    for (uint32_t i = 0; i < dispatches * LOCAL; ++i) values[i] = i * 7u + 3u;

    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_compute_layouts(device, 1, 8, &set_layout, &layout);
    VkShaderModule module = load_shader_module(device, path);
    VkPipeline pipeline = create_compute_pipeline(device, layout, module, NULL);
    vkDestroyShaderModule(device, module, NULL); /* before submit, on purpose */

    VkDescriptorBufferInfo buffer_info = {buffer, 0, size};
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set = create_storage_set(device, set_layout, 1, &buffer_info, &descriptor_pool);

    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                            NULL);
    for (uint32_t i = 0; i < dispatches; ++i) {
        uint32_t constants[2] = {i * LOCAL, (int)i == bad_dispatch ? 5u : 0xFFFFFFFFu};
        vkCmdPushConstants(command_buffer, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, constants);
        vkCmdDispatch(command_buffer, 1, 1, 1);
    }
    CHECK(vkEndCommandBuffer(command_buffer));
    vkDestroyFence(device, submit_and_wait(device, queue, command_buffer), NULL);
    uint32_t hash = fnv1a(values, (size_t)size);

    vkFreeCommandBuffers(device, pool, 1, &command_buffer);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    vkUnmapMemory(device, memory);
    vkDestroyBuffer(device, buffer, NULL);
    vkFreeMemory(device, memory, NULL);
    return hash;
}

static uint32_t run_graphics(VkQueue queue, VkCommandPool pool, const char *vert_path,
                             const char *frag_path, uint32_t draws, int bad_draw) {
    VkImage image;
    VkDeviceMemory image_memory;
    VkImageView view;
    create_image_and_view(device, &memory_properties, VK_FORMAT_R8G8B8A8_UNORM, SIZE, SIZE,
                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, 0,
                          &image, &image_memory, &view);
    VkRenderPass render_pass = create_color_render_pass(device, VK_FORMAT_R8G8B8A8_UNORM,
                                                        VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    VkFramebuffer framebuffer = create_framebuffer(device, render_pass, view, SIZE, SIZE);

    VkShaderStageFlags stages = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
    VkPushConstantRange push = {stages, 0, 12};
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(device, &layout_info, NULL, &layout));
    VkShaderModule vert = load_shader_module(device, vert_path),
                   frag = load_shader_module(device, frag_path);
    VkPipelineShaderStageCreateInfo shader_stages[2];
    vertex_fragment_stages(vert, frag, shader_stages);
    DrawState state;
    init_draw_state(&state, SIZE, SIZE, 1, 0xF);
    VkGraphicsPipelineCreateInfo pipeline_info =
        draw_pipeline_info(&state, NULL, 2, shader_stages, layout, render_pass);
    VkPipeline pipeline;
    CHECK(vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, NULL, &pipeline));

    VkBuffer readback;
    VkDeviceMemory readback_memory;
    make_buffer(SIZE * SIZE * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, &readback, &readback_memory);
    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    VkClearValue clear = {{{0.0f, 0.0f, 0.0f, 1.0f}}};
    VkRenderPassBeginInfo pass_begin = {VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    pass_begin.renderPass = render_pass;
    pass_begin.framebuffer = framebuffer;
    pass_begin.renderArea = state.scissor;
    pass_begin.clearValueCount = 1;
    pass_begin.pClearValues = &clear;
    vkCmdBeginRenderPass(command_buffer, &pass_begin, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
    for (uint32_t i = 0; i < draws; ++i) {
        uint32_t constants[3] = {i, draws, (uint32_t)bad_draw};
        vkCmdPushConstants(command_buffer, layout, stages, 0, 12, constants);
        vkCmdDraw(command_buffer, 6, 1, 0, 0);
    }
    vkCmdEndRenderPass(command_buffer);
    copy_color_image_to_buffer(command_buffer, image, SIZE, SIZE, readback);
    transfer_to_host_barrier(command_buffer);
    CHECK(vkEndCommandBuffer(command_buffer));
    vkDestroyFence(device, submit_and_wait(device, queue, command_buffer), NULL);
    uint8_t *pixels;
    CHECK(vkMapMemory(device, readback_memory, 0, SIZE * SIZE * 4, 0, (void **)&pixels));
    uint32_t hash = fnv1a(pixels, SIZE * SIZE * 4);
    vkUnmapMemory(device, readback_memory);

    vkFreeCommandBuffers(device, pool, 1, &command_buffer);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, vert, NULL);
    vkDestroyShaderModule(device, frag, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyFramebuffer(device, framebuffer, NULL);
    vkDestroyRenderPass(device, render_pass, NULL);
    destroy_image_and_view(device, image, image_memory, view);
    vkDestroyBuffer(device, readback, NULL);
    vkFreeMemory(device, readback_memory, NULL);
    return hash;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s COMPUTE.spv VERT.spv FRAG.spv [options]\n", argv[0]);
        return 2;
    }
    int bad_dispatch = -1, bad_draw = -1, messenger_wanted = 0, features_wanted = 0;
    int settings_wanted = 0, only_instance = 0, fork_wanted = 0;
    uint32_t dispatches = 4, draws = 2;
    for (int i = 4; i < argc; ++i) {
        if (!strcmp(argv[i], "--bad-dispatch") && i + 1 < argc) bad_dispatch = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bad-draw") && i + 1 < argc) bad_draw = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--dispatches") && i + 1 < argc) dispatches = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--draws") && i + 1 < argc) draws = (uint32_t)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--messenger")) messenger_wanted = 1;
        else if (!strcmp(argv[i], "--validation-features")) features_wanted = 1;
        else if (!strcmp(argv[i], "--layer-settings")) settings_wanted = 1;
        else if (!strcmp(argv[i], "--only-instance")) only_instance = 1;
        else if (!strcmp(argv[i], "--fork-after-instance")) fork_wanted = 1;
    }
    const char *extensions[2];
    uint32_t extension_count = 0;
    if (messenger_wanted) extensions[extension_count++] = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkValidationFeatureEnableEXT enables[1] = {VK_VALIDATION_FEATURE_ENABLE_GPU_ASSISTED_EXT};
    VkValidationFeaturesEXT features = {VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = enables;
    if (features_wanted) extensions[extension_count++] = VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME;
    /* gpuav's checks with the reserved binding slot (a list of strings); a setting of another
     * layer's, and gpuav settings of two other value types that change nothing here. */
    const char *validation[2] = {"all", "reserve_binding_slot"};
    const char *other_layer[1] = {"best"};
    uint32_t printf_on = 1, printf_size = 4096;
    LayerSetting settings[4] = {
        {"VK_LAYER_GPUAV_gpu_assisted", "gpu_validation", SETTING_STRING, 2, validation},
        {"VK_LAYER_OTHER_example", "gpu_validation", SETTING_STRING, 1, other_layer},
        {"VK_LAYER_GPUAV_gpu_assisted", "printf_enable", SETTING_BOOL32, 1, &printf_on},
        {"VK_LAYER_GPUAV_gpu_assisted", "printf_buffer_size", SETTING_UINT32, 1, &printf_size},
    };
    LayerSettingsCreateInfo layer_settings = {LAYER_SETTINGS_CREATE_INFO, NULL, 4, settings};
    const void *chain = NULL;
    if (features_wanted) {
        features.pNext = chain;
        chain = &features;
    }
    if (settings_wanted) {
        layer_settings.pNext = chain;
        chain = &layer_settings;
    }
    double started = now_ms();
    VkInstance instance =
        create_instance("gpuav-c-test-app", VK_API_VERSION_1_1, chain, extension_count, extensions);
    printf("instance_ms %.3f\n", now_ms() - started);
    fflush(stdout);
    if (only_instance) return 0;
    if (fork_wanted) {
        pid_t child = fork();
        if (child == 0) exit(0);
        int status = -1;
        waitpid(child, &status, 0);
        printf("child %d\n", status);
    }
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    if (messenger_wanted)
        messenger = create_printing_messenger(instance, WARNINGS_AND_ERRORS);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(physical, &properties);
    printf("maxBoundDescriptorSets %u\n", properties.limits.maxBoundDescriptorSets);
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkQueue queue;
    device = create_device(physical, NULL, 0, NULL, &queue);
    VkCommandPool pool = create_command_pool(device);

    printf("compute %08x\n", run_compute(queue, pool, argv[1], dispatches, bad_dispatch));
    printf("pixels %08x\n", run_graphics(queue, pool, argv[2], argv[3], draws, bad_draw));

    vkDestroyCommandPool(device, pool, NULL);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
