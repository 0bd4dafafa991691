/* One dispatch of one invocation that reads or writes a buffer descriptor at an index it is
 * given: the buffer-range scenarios (knows nothing of gpuav).
 *
 *   buffer_range_app SHADER.spv TYPE SIZE OFFSET RANGE DYNAMIC INDEX [NAME [OPTIONS]]
 *
 * Set 0 binding 0 is the tested descriptor: TYPE storage | uniform | storage_dynamic |
 * uniform_dynamic | uniform_texel | storage_texel, a buffer of SIZE bytes (filled with its word
 * numbers, 1000 + k) written with OFFSET and RANGE (0: VK_WHOLE_SIZE) -- for the texel types,
 * those of an R32_UINT buffer view --, bound with the DYNAMIC offset for the dynamic types, and
 * named NAME with vkSetDebugUtilsObjectNameEXT when given. Binding 1 is a storage
 * buffer of 16 words for results. The push constant is the int INDEX. OPTIONS: "robust"
 * enables robustBufferAccess; "robust,quiet" also passes the layer setting
 * robust_buffer_warnings = false through VK_EXT_layer_settings. Prints "message" lines
 * (vk_app_common.h), then "result" and the result words, then "data" and the tested buffer's
 * first 16 words. */
#include <string.h>

#include "vk_app_common.h"

#define RESULT_WORDS 16
#define GPUAV_LAYER_NAME "VK_LAYER_GPUAV_gpu_assisted"

/* VK_EXT_layer_settings, declared here: the system's headers may predate it. */
typedef struct {
    const char *pLayerName;
    const char *pSettingName;
    uint32_t type; /* VK_LAYER_SETTING_TYPE_BOOL32_EXT = 0 */
    uint32_t valueCount;
    const void *pValues;
} LayerSetting;
typedef struct {
    VkStructureType sType; /* VK_STRUCTURE_TYPE_LAYER_SETTINGS_CREATE_INFO_EXT */
    const void *pNext;
    uint32_t settingCount;
    const LayerSetting *pSettings;
} LayerSettingsCreateInfo;

static VkDescriptorType descriptor_type(const char *name) {
    if (!strcmp(name, "storage")) return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    if (!strcmp(name, "uniform")) return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    if (!strcmp(name, "storage_dynamic")) return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC;
    if (!strcmp(name, "uniform_dynamic")) return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC;
    if (!strcmp(name, "uniform_texel")) return VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    if (!strcmp(name, "storage_texel")) return VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
    fprintf(stderr, "unknown descriptor type %s\n", name);
    exit(2);
}

static int is_texel(VkDescriptorType type) {
    return type == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER ||
           type == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
}

static int is_dynamic(VkDescriptorType type) {
    return type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER_DYNAMIC ||
           type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER_DYNAMIC;
}

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: %s SHADER TYPE SIZE OFFSET RANGE DYNAMIC INDEX [NAME]\n", argv[0]);
        return 2;
    }
    VkDescriptorType type = descriptor_type(argv[2]);
    VkDeviceSize size = strtoull(argv[3], NULL, 0);
    VkDeviceSize offset = strtoull(argv[4], NULL, 0);
    VkDeviceSize range = strtoull(argv[5], NULL, 0);
    uint32_t dynamic = (uint32_t)strtoul(argv[6], NULL, 0);
    int32_t index = (int32_t)strtol(argv[7], NULL, 0);
    const char *options = argc > 9 ? argv[9] : "";
    const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkBool32 warnings = VK_FALSE;
    LayerSetting quiet = {GPUAV_LAYER_NAME, "robust_buffer_warnings", 0, 1, &warnings};
    LayerSettingsCreateInfo settings = {(VkStructureType)1000496000, NULL, 1, &quiet};
    VkInstance instance = create_instance("buffer_range_app", VK_API_VERSION_1_2,
                                          strstr(options, "quiet") ? &settings : NULL, 1,
                                          extensions);
    VkDebugUtilsMessengerEXT messenger = create_messenger(
        instance,
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT, print_message);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory_properties;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkQueue queue;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features.features.robustBufferAccess = strstr(options, "robust") ? VK_TRUE : VK_FALSE;
    VkDevice device = create_device(physical, &features, 0, NULL, &queue);

    VkBuffer tested, results;
    VkDeviceMemory tested_memory, results_memory;
    VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
        VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT;
    create_host_buffer(device, &memory_properties, size, usage, NULL, ~0u, NULL, &tested,
                       &tested_memory);
    create_host_buffer(device, &memory_properties, 4 * RESULT_WORDS,
                       VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, NULL, ~0u, NULL, &results,
                       &results_memory);
    uint32_t *tested_words, *result_words;
    CHECK(vkMapMemory(device, tested_memory, 0, VK_WHOLE_SIZE, 0, (void **)&tested_words));
    CHECK(vkMapMemory(device, results_memory, 0, VK_WHOLE_SIZE, 0, (void **)&result_words));
    for (VkDeviceSize k = 0; k < size / 4; ++k) tested_words[k] = 1000 + (uint32_t)k;
    memset(result_words, 0, 4 * RESULT_WORDS);
    if (argc > 8 && argv[8][0]) {
        PFN_vkSetDebugUtilsObjectNameEXT set_name =
            (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(device,
                                                                   "vkSetDebugUtilsObjectNameEXT");
        VkDebugUtilsObjectNameInfoEXT name = {VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
        name.objectType = VK_OBJECT_TYPE_BUFFER;
        name.objectHandle = (uint64_t)tested;
        name.pObjectName = argv[8];
        CHECK(set_name(device, &name));
    }

    VkDescriptorSetLayoutBinding bindings[2] = {
        {0, type, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
    };
    VkDescriptorSetLayoutCreateInfo set_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 2;
    set_info.pBindings = bindings;
    VkDescriptorSetLayout set_layout;
    CHECK(vkCreateDescriptorSetLayout(device, &set_info, NULL, &set_layout));
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 4};
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(device, &layout_info, NULL, &layout));

    VkDescriptorPoolSize pool_sizes[2] = {{type, 1}, {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1}};
    VkDescriptorPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 2;
    pool_info.pPoolSizes = pool_sizes;
    VkDescriptorPool pool;
    CHECK(vkCreateDescriptorPool(device, &pool_info, NULL, &pool));
    VkDescriptorSetAllocateInfo allocate = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout;
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(device, &allocate, &set));
    VkDescriptorBufferInfo infos[2] = {
        {tested, offset, range ? range : VK_WHOLE_SIZE},
        {results, 0, VK_WHOLE_SIZE},
    };
    VkBufferView view = VK_NULL_HANDLE;
    if (is_texel(type)) {
        VkBufferViewCreateInfo view_info = {VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
        view_info.buffer = tested;
        view_info.format = VK_FORMAT_R32_UINT;
        view_info.offset = offset;
        view_info.range = range ? range : VK_WHOLE_SIZE;
        CHECK(vkCreateBufferView(device, &view_info, NULL, &view));
    }
    VkWriteDescriptorSet writes[2] = {
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 0, 0, 1, type, NULL,
         is_texel(type) ? NULL : &infos[0], is_texel(type) ? &view : NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 1, 0, 1,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &infos[1]},
    };
    vkUpdateDescriptorSets(device, 2, writes, 0, NULL);

    VkShaderModule module = load_shader_module(device, argv[1]);
    VkPipeline pipeline = create_compute_pipeline(device, layout, module, NULL);
    VkCommandPool command_pool = create_command_pool(device);
    VkCommandBuffer command_buffer = begin_command_buffer(device, command_pool, 0);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set,
                            is_dynamic(type) ? 1 : 0, &dynamic);
    vkCmdPushConstants(command_buffer, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &index);
    vkCmdDispatch(command_buffer, 1, 1, 1);
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait(device, queue, command_buffer);
    /* The Khronos layer reads its GPU-AV results back when a wait shows the work done; its
     * own timeline may trail the app's fence, so give it an idle wait as well. */
    CHECK(vkQueueWaitIdle(queue));
    CHECK(vkDeviceWaitIdle(device));

    printf("result");
    for (int k = 0; k < RESULT_WORDS; ++k) printf(" %u", result_words[k]);
    printf("\ndata");
    for (VkDeviceSize k = 0; k < RESULT_WORDS && k < size / 4; ++k) printf(" %u", tested_words[k]);
    printf("\n");

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, command_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, module, NULL);
    vkDestroyDescriptorPool(device, pool, NULL);
    if (view) vkDestroyBufferView(device, view, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    vkUnmapMemory(device, tested_memory);
    vkUnmapMemory(device, results_memory);
    vkDestroyBuffer(device, tested, NULL);
    vkDestroyBuffer(device, results, NULL);
    vkFreeMemory(device, tested_memory, NULL);
    vkFreeMemory(device, results_memory, NULL);
    vkDestroyDevice(device, NULL);
    destroy_messenger(instance, messenger);
    vkDestroyInstance(instance, NULL);
    return 0;
}
