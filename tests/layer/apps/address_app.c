/* One dispatch of one invocation that reaches a buffer through its device address: the
 * buffer-device-address scenarios (knows nothing of gpuav).
 *
 *   address_app SHADER.spv SIZE OFFSET INDEX [NAME [OPTIONS]]
 *
 * A buffer of SIZE bytes with SHADER_DEVICE_ADDRESS usage (filled with its word numbers,
 * 1000 + k, and named NAME with vkSetDebugUtilsObjectNameEXT when given) is the target; the
 * push constant is {uint64 address + OFFSET (signed); int INDEX}. Set 0 binding 0 is a storage
 * buffer of 16 words for results. OPTIONS: "destroyed" pushes the address of a second buffer
 * of SIZE bytes, created, bound, named "freed" and destroyed before the submit. Prints
 * "message" lines (vk_app_common.h), then "result" and the result words, then "data" and the
 * target's first 16 words. */
#include <string.h>

#include "vk_app_common.h"

#define RESULT_WORDS 16

typedef struct {
    uint64_t address;
    int32_t index;
    int32_t padding;
} Push;

static VkDeviceAddress address_of(VkDevice device, VkBuffer buffer) {
    VkBufferDeviceAddressInfo info = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    info.buffer = buffer;
    return vkGetBufferDeviceAddress(device, &info);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s SHADER SIZE OFFSET INDEX [NAME [OPTIONS]]\n", argv[0]);
        return 2;
    }
    VkDeviceSize size = strtoull(argv[2], NULL, 0);
    int64_t offset = strtoll(argv[3], NULL, 0);
    int32_t index = (int32_t)strtol(argv[4], NULL, 0);
    const char *options = argc > 6 ? argv[6] : "";
    VkDebugUtilsMessengerEXT messenger;
    VkInstance instance = create_printing_instance("address_app", VK_API_VERSION_1_2,
                                                   WARNINGS_AND_ERRORS, &messenger);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory_properties;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkPhysicalDeviceVulkan12Features features12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    features12.bufferDeviceAddress = VK_TRUE;
    features12.scalarBlockLayout = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          &features12};
    features.features.shaderInt64 = VK_TRUE;
    VkQueue queue;
    VkDevice device = create_device(physical, &features, 0, NULL, &queue);

    VkMemoryAllocateFlagsInfo address_memory = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    address_memory.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    VkBuffer target, results;
    VkDeviceMemory target_memory, results_memory;
    create_host_buffer(device, &memory_properties, size, usage, NULL, ~0u, &address_memory,
                       &target, &target_memory);
    create_host_buffer(device, &memory_properties, 4 * RESULT_WORDS,
                       VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, NULL, ~0u, NULL, &results,
                       &results_memory);
    uint32_t *target_words, *result_words;
    CHECK(vkMapMemory(device, target_memory, 0, VK_WHOLE_SIZE, 0, (void **)&target_words));
    CHECK(vkMapMemory(device, results_memory, 0, VK_WHOLE_SIZE, 0, (void **)&result_words));
    for (VkDeviceSize k = 0; k < size / 4; ++k) target_words[k] = 1000 + (uint32_t)k;
    memset(result_words, 0, 4 * RESULT_WORDS);
    if (argc > 5 && argv[5][0]) CHECK(name_buffer(device, target, argv[5]));
    Push push = {address_of(device, target) + (uint64_t)offset, index, 0};
    if (strstr(options, "destroyed")) {
        VkBuffer freed;
        VkDeviceMemory freed_memory;
        create_host_buffer(device, &memory_properties, size, usage, NULL, ~0u, &address_memory,
                           &freed, &freed_memory);
        CHECK(name_buffer(device, freed, "freed"));
        push.address = address_of(device, freed) + (uint64_t)offset;
        vkDestroyBuffer(device, freed, NULL);
        vkFreeMemory(device, freed_memory, NULL);
    }

    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_compute_layouts(device, 1, sizeof(Push), &set_layout, &layout);
    VkDescriptorBufferInfo result_info = {results, 0, VK_WHOLE_SIZE};
    VkDescriptorPool pool;
    VkDescriptorSet set = create_storage_set(device, set_layout, 1, &result_info, &pool);
    VkShaderModule module = load_shader_module(device, argv[1]);
    VkPipeline pipeline = create_compute_pipeline(device, layout, module, NULL);
    VkCommandPool command_pool = create_command_pool(device);
    VkCommandBuffer command_buffer = begin_command_buffer(device, command_pool, 0);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                            NULL);
    vkCmdPushConstants(command_buffer, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof(Push),
                       &push);
    vkCmdDispatch(command_buffer, 1, 1, 1);
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait_idle(device, queue, command_buffer);

    print_results_and_data(result_words, RESULT_WORDS, target_words, size / 4);

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, command_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, module, NULL);
    vkDestroyDescriptorPool(device, pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    VkBuffer buffers[2] = {target, results};
    VkDeviceMemory memories[2] = {target_memory, results_memory};
    destroy_mapped_buffers(device, 2, buffers, memories);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
