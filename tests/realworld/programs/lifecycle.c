/* Instance and device life cycles a C program may go through (issue 13, items 2 and 3).
 *
 * usage: lifecycle SHADER.spv [--rounds N] [--at-exit]
 * Each round creates an instance and a device, runs 8 dispatches of the shader (region.comp's
 * interface: one storage buffer array, push constants base and bad index) over a buffer, and
 * prints "round <n> <fnv1a hex of the buffer>", then destroys everything. With --at-exit an
 * atexit handler, registered before the first instance, runs one more round on the last
 * device and destroys it and its instance: it runs after any handler a layer registers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "vk_app_common.h"

enum { LOCAL = 64, DISPATCHES = 8 };

typedef struct {
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
} Context;

static const char *shader_path;
static Context exit_context;

static Context open_context(void) {
    Context context;
    context.instance = create_instance("gpuav-lifecycle", VK_API_VERSION_1_2, NULL, 0, NULL);
    context.physical = first_physical_device(context.instance);
    context.device = create_device(context.physical, NULL, 0, NULL, &context.queue);
    return context;
}

static void close_context(Context *context) {
    CHECK(vkDeviceWaitIdle(context->device));
    vkDestroyDevice(context->device, NULL);
    vkDestroyInstance(context->instance, NULL);
}

/* The buffer's hash after DISPATCHES dispatches, each over its own region. */
static uint32_t run_round(const Context *context) {
    VkDevice device = context->device;
    VkDeviceSize size = DISPATCHES * LOCAL * 4;
    VkPhysicalDeviceMemoryProperties memory_properties; /* queried each round, at exit too */
    vkGetPhysicalDeviceMemoryProperties(context->physical, &memory_properties);
    VkBuffer buffer;
    VkDeviceMemory memory;
    create_host_buffer(device, &memory_properties, size,
                       VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, NULL, ~0u, NULL, &buffer, &memory);
    uint32_t *values;
    CHECK(vkMapMemory(device, memory, 0, size, 0, (void **)&values));
    for (uint32_t i = 0; i < DISPATCHES * LOCAL; ++i) values[i] = i * 7u + 3u;

    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_compute_layouts(device, 1, 8, &set_layout, &layout);
    VkShaderModule module = load_shader_module(device, shader_path);
    VkPipeline pipeline = create_compute_pipeline(device, layout, module, NULL);

    VkDescriptorBufferInfo described = {buffer, 0, size};
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set = create_storage_set(device, set_layout, 1, &described, &descriptor_pool);

    VkCommandPool pool = create_command_pool(device);
    VkCommandBuffer commands = begin_command_buffer(device, pool, 0);
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                            NULL);
    for (uint32_t i = 0; i < DISPATCHES; ++i) {
        uint32_t constants[2] = {i * LOCAL, 0xFFFFFFFFu};
        vkCmdPushConstants(commands, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, constants);
        vkCmdDispatch(commands, 1, 1, 1);
    }
    CHECK(vkEndCommandBuffer(commands));
    VkFence fence = submit_and_wait(device, context->queue, commands);
    uint32_t hash = fnv1a(values, (size_t)size);

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, module, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    vkUnmapMemory(device, memory);
    vkDestroyBuffer(device, buffer, NULL);
    vkFreeMemory(device, memory, NULL);
    return hash;
}

static void finish_at_exit(void) {
    printf("at-exit %08x\n", run_round(&exit_context));
    close_context(&exit_context);
    printf("at-exit closed\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: lifecycle SHADER.spv [--rounds N] [--at-exit]\n");
        return 2;
    }
    shader_path = argv[1];
    int rounds = 1, at_exit = 0;
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--at-exit") == 0) at_exit = 1;
    }
    if (at_exit) atexit(finish_at_exit);
    for (int round = 0; round < rounds; ++round) {
        Context context = open_context();
        printf("round %d %08x\n", round, run_round(&context));
        fflush(stdout);
        if (at_exit && round == rounds - 1) exit_context = context;
        else close_context(&context);
    }
    return 0;
}
