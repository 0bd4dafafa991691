/* One dispatch whose compute shader reads image descriptors that may not fit the shader's image
 * type or sampling: the view type, format, sample count and sampler scenarios (knows nothing
 * of gpuav).
 *
 *   image_fit_app SHADER.spv KIND SPEC[,SPEC...]
 *
 * Binding 0 holds one descriptor per SPEC (at most 4): KIND "combined" (combined image
 * samplers), "immutable" (combined image samplers whose samplers are the layout's immutable
 * ones; the writes give none), "separate" (sampled images; binding 2 is one sampler, made as the first SPEC
 * says) or "storage" (storage images). Binding 1 is a storage buffer of 16 result words.
 * A SPEC is VIEW:FORMAT:SAMPLES:SAMPLER, where VIEW is 2d | 2darray | 3d | cube, FORMAT r32ui |
 * r32i | r32f | rgba8, SAMPLES 1 | 4, SAMPLER n (normalized) | u (unnormalizedCoordinates).
 * Every image is 1x1 (6 layers for a cube, 2 for a 2D array), cleared to 7 (integer formats)
 * or 0.25 (float formats). Prints "message" lines (vk_app_common.h), then "result" and the
 * result words. */
#include <string.h>

#include "vk_image_common.h"

#define RESULT_WORDS 16
#define MAX_SPECS 4

typedef struct {
    VkImageViewType view_type;
    VkFormat format;
    VkSampleCountFlagBits samples;
    VkBool32 unnormalized;
    VkImage image;
    VkDeviceMemory memory;
    VkImageView view;
    VkSampler sampler;
} Spec;

static void parse_spec(const char *text, Spec *spec) {
    char view[16], format[16], sampler[4];
    unsigned samples;
    if (sscanf(text, "%15[^:]:%15[^:]:%u:%3s", view, format, &samples, sampler) != 4) {
        fprintf(stderr, "bad spec %s\n", text);
        exit(2);
    }
    spec->view_type = !strcmp(view, "2darray") ? VK_IMAGE_VIEW_TYPE_2D_ARRAY
                      : !strcmp(view, "3d")    ? VK_IMAGE_VIEW_TYPE_3D
                      : !strcmp(view, "cube")  ? VK_IMAGE_VIEW_TYPE_CUBE
                                               : VK_IMAGE_VIEW_TYPE_2D;
    spec->format = !strcmp(format, "r32i")    ? VK_FORMAT_R32_SINT
                   : !strcmp(format, "r32f")  ? VK_FORMAT_R32_SFLOAT
                   : !strcmp(format, "rgba8") ? VK_FORMAT_R8G8B8A8_UNORM
                                              : VK_FORMAT_R32_UINT;
    spec->samples = samples == 4 ? VK_SAMPLE_COUNT_4_BIT : VK_SAMPLE_COUNT_1_BIT;
    spec->unnormalized = sampler[0] == 'u';
}

static int is_integer(VkFormat format) {
    return format == VK_FORMAT_R32_UINT || format == VK_FORMAT_R32_SINT;
}

static uint32_t layer_count(VkImageViewType view_type) {
    return view_type == VK_IMAGE_VIEW_TYPE_CUBE ? 6 : view_type == VK_IMAGE_VIEW_TYPE_2D_ARRAY ? 2 : 1;
}

static void create_spec_objects(VkDevice device, const VkPhysicalDeviceMemoryProperties *memory,
                                VkDescriptorType type, Spec *spec) {
    VkImageCreateInfo info = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = spec->view_type == VK_IMAGE_VIEW_TYPE_3D ? VK_IMAGE_TYPE_3D : VK_IMAGE_TYPE_2D;
    info.flags = spec->view_type == VK_IMAGE_VIEW_TYPE_CUBE ? VK_IMAGE_CREATE_CUBE_COMPATIBLE_BIT : 0;
    info.format = spec->format;
    info.extent = (VkExtent3D){1, 1, 1};
    info.mipLevels = 1;
    info.arrayLayers = layer_count(spec->view_type);
    info.samples = spec->samples;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = VK_IMAGE_USAGE_TRANSFER_DST_BIT |
                 (type == VK_DESCRIPTOR_TYPE_STORAGE_IMAGE ? VK_IMAGE_USAGE_STORAGE_BIT
                                                           : VK_IMAGE_USAGE_SAMPLED_BIT);
    create_image_and_view_of(device, memory, &info, spec->view_type, 0, &spec->image,
                             &spec->memory, &spec->view);
    spec->sampler = create_nearest_sampler(device, VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE,
                                           spec->unnormalized);
}

/* Every image to GENERAL, cleared. */
static void clear_images(VkCommandBuffer command_buffer, const Spec *specs, uint32_t count) {
    for (uint32_t k = 0; k < count; ++k) {
        VkImageSubresourceRange range = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0,
                                         layer_count(specs[k].view_type)};
        VkClearColorValue value;
        if (is_integer(specs[k].format))
            value = (VkClearColorValue){.uint32 = {7, 0, 0, 0}};
        else
            value = (VkClearColorValue){.float32 = {0.25f, 0, 0, 0}};
        clear_image_to_general(command_buffer, specs[k].image, range, value,
                               VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT);
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s SHADER KIND SPEC[,SPEC...]\n", argv[0]);
        return 2;
    }
    int separate = !strcmp(argv[2], "separate");
    int immutable = !strcmp(argv[2], "immutable");
    VkDescriptorType type = !strcmp(argv[2], "storage") ? VK_DESCRIPTOR_TYPE_STORAGE_IMAGE
                            : separate                 ? VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE
                                                       : VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    Spec specs[MAX_SPECS];
    uint32_t count = 0;
    char *list = strdup(argv[3]);
    for (char *item = strtok(list, ","); item && count < MAX_SPECS; item = strtok(NULL, ","))
        parse_spec(item, &specs[count++]);
    free(list);

    VkDebugUtilsMessengerEXT messenger;
    VkInstance instance = create_printing_instance("image_fit_app", VK_API_VERSION_1_2,
                                                   WARNINGS_AND_ERRORS, &messenger);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory_properties;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features.features.shaderStorageImageReadWithoutFormat = VK_TRUE;
    features.features.shaderSampledImageArrayDynamicIndexing = VK_TRUE;
    features.features.shaderStorageImageArrayDynamicIndexing = VK_TRUE;
    VkQueue queue;
    VkDevice device = create_device(physical, &features, 0, NULL, &queue);
    for (uint32_t k = 0; k < count; ++k)
        create_spec_objects(device, &memory_properties, type, &specs[k]);

    VkBuffer results;
    VkDeviceMemory results_memory;
    uint32_t *result_words =
        create_mapped_host_buffer(device, &memory_properties, 4 * RESULT_WORDS,
                                  VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, &results, &results_memory);

    VkSampler immutable_samplers[MAX_SPECS];
    for (uint32_t k = 0; k < count; ++k) immutable_samplers[k] = specs[k].sampler;
    VkDescriptorSetLayoutBinding bindings[3] = {
        {0, type, count, VK_SHADER_STAGE_COMPUTE_BIT, immutable ? immutable_samplers : NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
        {2, VK_DESCRIPTOR_TYPE_SAMPLER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
    };
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_set_and_pipeline_layouts(device, NULL, separate ? 3 : 2, bindings, 0, 0, &set_layout,
                                    &layout);
    VkDescriptorPoolSize pool_sizes[3] = {
        {type, count},
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1},
        {VK_DESCRIPTOR_TYPE_SAMPLER, 1},
    };
    VkDescriptorPool pool;
    VkDescriptorSet set = allocate_one_set(device, 3, pool_sizes, NULL, set_layout, &pool);

    VkDescriptorImageInfo images[MAX_SPECS];
    for (uint32_t k = 0; k < count; ++k)
        images[k] = (VkDescriptorImageInfo){immutable ? VK_NULL_HANDLE : specs[k].sampler,
                                            specs[k].view, VK_IMAGE_LAYOUT_GENERAL};
    VkDescriptorBufferInfo result_info = {results, 0, VK_WHOLE_SIZE};
    VkDescriptorImageInfo sampler_info = {specs[0].sampler, VK_NULL_HANDLE,
                                          VK_IMAGE_LAYOUT_UNDEFINED};
    VkWriteDescriptorSet writes[3] = {
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 0, 0, count, type, images, NULL,
         NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 1, 0, 1,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &result_info, NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 2, 0, 1, VK_DESCRIPTOR_TYPE_SAMPLER,
         &sampler_info, NULL, NULL},
    };
    vkUpdateDescriptorSets(device, separate ? 3 : 2, writes, 0, NULL);

    VkShaderModule module = load_shader_module(device, argv[1]);
    VkPipeline pipeline = create_compute_pipeline(device, layout, module, NULL);
    VkCommandPool command_pool = create_command_pool(device);
    VkCommandBuffer command_buffer = begin_command_buffer(device, command_pool, 0);
    clear_images(command_buffer, specs, count);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set,
                            0, NULL);
    vkCmdDispatch(command_buffer, 1, 1, 1);
    CHECK(vkEndCommandBuffer(command_buffer));
    vkDestroyFence(device, submit_and_wait_idle(device, queue, command_buffer), NULL);

    printf("result");
    for (int k = 0; k < RESULT_WORDS; ++k) printf(" %u", result_words[k]);
    printf("\n");

    vkDestroyCommandPool(device, command_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, module, NULL);
    vkDestroyDescriptorPool(device, pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    for (uint32_t k = 0; k < count; ++k) {
        vkDestroySampler(device, specs[k].sampler, NULL);
        destroy_image_and_view(device, specs[k].image, specs[k].memory, specs[k].view);
    }
    vkUnmapMemory(device, results_memory);
    vkDestroyBuffer(device, results, NULL);
    vkFreeMemory(device, results_memory, NULL);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
