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
 * buffer of 16 words for results. The push constant is the int INDEX. OPTIONS, comma-separated:
 * "robust" enables robustBufferAccess; "quiet" passes the layer setting
 * robust_buffer_warnings = false through VK_EXT_layer_settings; "template" writes the set with
 * a descriptor update template; "push" pushes the descriptors (VK_KHR_push_descriptor)
 * instead of binding a set, with a push template too when "template" is given;
 * "per_pipeline" asks for robust buffer access in the pipeline (VK_EXT_pipeline_robustness). Prints "message" lines
 * (vk_app_common.h), then "result" and the result words, then "data" and the tested buffer's
 * first 16 words. */
#include <stddef.h>
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
                                          option_listed(options, "quiet") ? &settings : NULL, 1,
                                          extensions);
    VkDebugUtilsMessengerEXT messenger = create_printing_messenger(instance, INFO_AND_ABOVE);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory_properties;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkQueue queue;
    int per_pipeline = option_listed(options, "per_pipeline");
    VkPhysicalDevicePipelineRobustnessFeaturesEXT pipeline_robustness = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_ROBUSTNESS_FEATURES_EXT};
    pipeline_robustness.pipelineRobustness = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          per_pipeline ? &pipeline_robustness : NULL};
    features.features.robustBufferAccess = option_listed(options, "robust") ? VK_TRUE : VK_FALSE;
    int pushing = option_listed(options, "push");
    int templated = option_listed(options, "template");
    const char *device_extensions[2];
    uint32_t extension_count = 0;
    if (pushing) device_extensions[extension_count++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    if (per_pipeline)
        device_extensions[extension_count++] = VK_EXT_PIPELINE_ROBUSTNESS_EXTENSION_NAME;
    VkDevice device =
        create_device(physical, &features, extension_count, device_extensions, &queue);

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
    if (argc > 8 && argv[8][0]) CHECK(name_buffer(device, tested, argv[8]));

    VkDescriptorSetLayoutBinding bindings[2] = {
        {0, type, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
    };
    VkDescriptorSetLayoutCreateInfo set_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 2;
    set_info.pBindings = bindings;
    if (pushing) set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
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

    VkDescriptorPool pool = VK_NULL_HANDLE;
    VkDescriptorSet set = VK_NULL_HANDLE;
    if (!pushing) {
        VkDescriptorPoolSize pool_sizes[2] = {{type, 1}, {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1}};
        set = allocate_one_set(device, 2, pool_sizes, NULL, set_layout, &pool);
    }
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
    /* The template's data: the tested descriptor (a buffer info or a view), then the results. */
    struct {
        VkDescriptorBufferInfo tested;
        VkBufferView view;
        VkDescriptorBufferInfo results;
    } data = {infos[0], view, infos[1]};
    VkDescriptorUpdateTemplateEntry entries[2] = {
        {0, 0, 1, type, is_texel(type) ? offsetof(__typeof__(data), view) : 0, 0},
        {1, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, offsetof(__typeof__(data), results), 0},
    };
    VkDescriptorUpdateTemplateCreateInfo template_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO};
    template_info.descriptorUpdateEntryCount = 2;
    template_info.pDescriptorUpdateEntries = entries;
    template_info.templateType = pushing ? VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR
                                         : VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET;
    template_info.descriptorSetLayout = set_layout;
    template_info.pipelineBindPoint = VK_PIPELINE_BIND_POINT_COMPUTE;
    template_info.pipelineLayout = layout;
    VkDescriptorUpdateTemplate update_template = VK_NULL_HANDLE;
    if (templated)
        CHECK(vkCreateDescriptorUpdateTemplate(device, &template_info, NULL, &update_template));
    if (!pushing && templated) vkUpdateDescriptorSetWithTemplate(device, set, update_template, &data);
    if (!pushing && !templated) vkUpdateDescriptorSets(device, 2, writes, 0, NULL);

    VkShaderModule module = load_shader_module(device, argv[1]);
    VkPipelineRobustnessCreateInfoEXT robustness = {
        VK_STRUCTURE_TYPE_PIPELINE_ROBUSTNESS_CREATE_INFO_EXT};
    robustness.storageBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_ROBUST_BUFFER_ACCESS_EXT;
    robustness.uniformBuffers = VK_PIPELINE_ROBUSTNESS_BUFFER_BEHAVIOR_ROBUST_BUFFER_ACCESS_EXT;
    VkComputePipelineCreateInfo pipeline_info = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                                 per_pipeline ? &robustness : NULL};
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = module;
    pipeline_info.stage.pName = "main";
    pipeline_info.layout = layout;
    VkPipeline pipeline;
    CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, NULL, &pipeline));
    VkCommandPool command_pool = create_command_pool(device);
    VkCommandBuffer command_buffer = begin_command_buffer(device, command_pool, 0);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    if (pushing && templated) {
        PFN_vkCmdPushDescriptorSetWithTemplateKHR push_template =
            (PFN_vkCmdPushDescriptorSetWithTemplateKHR)vkGetDeviceProcAddr(
                device, "vkCmdPushDescriptorSetWithTemplateKHR");
        push_template(command_buffer, update_template, layout, 0, &data);
    } else if (pushing) {
        PFN_vkCmdPushDescriptorSetKHR push_set = (PFN_vkCmdPushDescriptorSetKHR)vkGetDeviceProcAddr(
            device, "vkCmdPushDescriptorSetKHR");
        push_set(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 2, writes);
    } else {
        vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1,
                                &set, is_dynamic(type) ? 1 : 0, &dynamic);
    }
    vkCmdPushConstants(command_buffer, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 4, &index);
    vkCmdDispatch(command_buffer, 1, 1, 1);
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait_idle(device, queue, command_buffer);

    print_results_and_data(result_words, RESULT_WORDS, tested_words, size / 4);

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, command_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, module, NULL);
    if (pool) vkDestroyDescriptorPool(device, pool, NULL);
    if (update_template) vkDestroyDescriptorUpdateTemplate(device, update_template, NULL);
    if (view) vkDestroyBufferView(device, view, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    VkBuffer buffers[2] = {tested, results};
    VkDeviceMemory memories[2] = {tested_memory, results_memory};
    destroy_mapped_buffers(device, 2, buffers, memories);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
