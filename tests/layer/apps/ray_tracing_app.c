/* A tiny ray tracer, as a glTF viewer's is built (knows nothing of gpuav): one triangle in a
 * bottom-level acceleration structure, one instance of it in the top level, a ray generation
 * shader tracing one ray per pixel of a WIDTH x HEIGHT launch, a miss shader and a closest-hit
 * shader that reads its material from a bindless runtime array of storage buffers.
 *
 *   ray_tracing_app RGEN.spv RMISS.spv RCHIT.spv MATERIAL INDEX PIXEL [MODE]
 *
 * Set 0: binding 0 the top-level acceleration structure, binding 1 the image (a storage buffer
 * of WIDTH * HEIGHT words), binding 2 the materials: a variable-count array of storage buffers
 * (room for 8, MATERIALS allocated, each of MATERIAL_WORDS words k * 100 + word), named
 * "material k". The push constants are (uint MATERIAL, int INDEX, int PIXEL), for the shaders
 * to misuse. MODE: "direct" (vkCmdTraceRaysKHR, the default), "indirect"
 * (vkCmdTraceRaysIndirectKHR) or "indirect2" (vkCmdTraceRaysIndirect2KHR). The pipeline is
 * created with a deferred operation, as engines that compile in the background do. Prints
 * "message" lines (vk_app_common.h), then "result" and the image's words. */
#include <string.h>

#include "vk_ray_tracing_common.h"

#define WIDTH 4
#define HEIGHT 4
#define MATERIALS 3
#define MATERIAL_CAPACITY 8
#define MATERIAL_WORDS 4

static PFN_vkGetBufferDeviceAddress get_buffer_address;

static AddressedBuffer make_buffer(VkDevice device, const VkPhysicalDeviceMemoryProperties *memory,
                                   VkDeviceSize size, VkBufferUsageFlags usage) {
    return create_addressed_buffer(device, memory, get_buffer_address, size, usage);
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s RGEN RMISS RCHIT MATERIAL INDEX PIXEL [MODE]\n", argv[0]);
        return 2;
    }
    struct {
        uint32_t material;
        int32_t index;
        int32_t pixel;
    } push = {(uint32_t)strtoul(argv[4], NULL, 0), (int32_t)strtol(argv[5], NULL, 0),
              (int32_t)strtol(argv[6], NULL, 0)};
    const char *mode = argc > 7 ? argv[7] : "direct";
    VkDebugUtilsMessengerEXT messenger;
    VkInstance instance =
        create_printing_instance("ray_tracing_app", VK_API_VERSION_1_3, INFO_AND_ABOVE, &messenger);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);

    VkPhysicalDeviceRayTracingMaintenance1FeaturesKHR maintenance = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_MAINTENANCE_1_FEATURES_KHR};
    maintenance.rayTracingPipelineTraceRaysIndirect2 = VK_TRUE;
    VkPhysicalDeviceRayTracingPipelineFeaturesKHR pipeline_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_FEATURES_KHR, &maintenance};
    pipeline_features.rayTracingPipeline = VK_TRUE;
    pipeline_features.rayTracingPipelineTraceRaysIndirect = VK_TRUE;
    VkPhysicalDeviceAccelerationStructureFeaturesKHR structure_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ACCELERATION_STRUCTURE_FEATURES_KHR,
        &pipeline_features};
    structure_features.accelerationStructure = VK_TRUE;
    VkPhysicalDeviceVulkan12Features features12 =
        storage_buffer_array_features(&structure_features);
    features12.bufferDeviceAddress = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          &features12};
    const char *device_extensions[] = {
        VK_KHR_ACCELERATION_STRUCTURE_EXTENSION_NAME, VK_KHR_RAY_TRACING_PIPELINE_EXTENSION_NAME,
        VK_KHR_DEFERRED_HOST_OPERATIONS_EXTENSION_NAME,
        VK_KHR_RAY_TRACING_MAINTENANCE_1_EXTENSION_NAME};
    VkQueue queue;
    VkDevice device = create_device(physical, &features, 4, device_extensions, &queue);
    get_buffer_address =
        (PFN_vkGetBufferDeviceAddress)vkGetDeviceProcAddr(device, "vkGetBufferDeviceAddress");
    VkCommandPool pool = create_command_pool(device);

    /* The scene: one triangle in front of the camera. */
    AddressedBuffer vertex_buffer, instance_buffer;
    AccelerationStructure bottom = build_triangle_bottom_level(
        device, &memory, get_buffer_address, queue, pool, &vertex_buffer);
    AccelerationStructure top = build_moved_top_level(
        device, &memory, get_buffer_address, queue, pool, bottom.structure, 0.0f, &instance_buffer);

    /* The image and the materials. */
    AddressedBuffer image =
        make_buffer(device, &memory, 4 * WIDTH * HEIGHT, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    name_buffer(device, image.buffer, "image");
    AddressedBuffer materials[MATERIALS];
    for (uint32_t k = 0; k < MATERIALS; ++k) {
        materials[k] = make_buffer(device, &memory, 4 * MATERIAL_WORDS,
                                   VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        for (uint32_t word = 0; word < MATERIAL_WORDS; ++word)
            ((uint32_t *)materials[k].mapped)[word] = k * 100 + word;
        char name[32];
        snprintf(name, sizeof(name), "material %u", k);
        name_buffer(device, materials[k].buffer, name);
    }

    VkShaderStageFlags stages = VK_SHADER_STAGE_RAYGEN_BIT_KHR |
                                VK_SHADER_STAGE_MISS_BIT_KHR |
                                VK_SHADER_STAGE_CLOSEST_HIT_BIT_KHR;
    VkDescriptorSetLayoutBinding bindings[3] = {
        {0, VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR, 1, stages, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, stages, NULL},
        {2, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, MATERIAL_CAPACITY, stages, NULL},
    };
    VkDescriptorBindingFlags binding_flags[3] = {
        0, 0, VK_DESCRIPTOR_BINDING_VARIABLE_DESCRIPTOR_COUNT_BIT};
    VkDescriptorSetLayoutBindingFlagsCreateInfo flags_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO};
    flags_info.bindingCount = 3;
    flags_info.pBindingFlags = binding_flags;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_set_and_pipeline_layouts(device, &flags_info, 3, bindings, stages, sizeof(push),
                                    &set_layout, &layout);

    VkDescriptorPoolSize pool_sizes[2] = {
        {VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR, 1},
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1 + MATERIAL_CAPACITY},
    };
    uint32_t variable_count = MATERIALS;
    VkDescriptorSetVariableDescriptorCountAllocateInfo count_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_VARIABLE_DESCRIPTOR_COUNT_ALLOCATE_INFO};
    count_info.descriptorSetCount = 1;
    count_info.pDescriptorCounts = &variable_count;
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set = allocate_one_set(device, 2, pool_sizes, &count_info, set_layout,
                                           &descriptor_pool);
    VkWriteDescriptorSetAccelerationStructureKHR structure_write = {
        VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET_ACCELERATION_STRUCTURE_KHR};
    structure_write.accelerationStructureCount = 1;
    structure_write.pAccelerationStructures = &top.structure;
    VkDescriptorBufferInfo image_info = {image.buffer, 0, VK_WHOLE_SIZE};
    VkDescriptorBufferInfo material_infos[MATERIALS];
    for (uint32_t k = 0; k < MATERIALS; ++k)
        material_infos[k] = (VkDescriptorBufferInfo){materials[k].buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet writes[3] = {
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, &structure_write, set, 0, 0, 1,
         VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR, NULL, NULL, NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 1, 0, 1,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &image_info, NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 2, 0, MATERIALS,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, material_infos, NULL},
    };
    vkUpdateDescriptorSets(device, 3, writes, 0, NULL);

    /* The pipeline: ray generation, miss, and a triangle hit group. */
    VkShaderModule modules[3];
    VkPipelineShaderStageCreateInfo shader_stages[3];
    VkRayTracingShaderGroupCreateInfoKHR groups[3];
    VkRayTracingPipelineCreateInfoKHR pipeline_info =
        ray_tracing_pipeline_info(device, layout, argv + 1, modules, shader_stages, groups);
    PFN_vkCreateDeferredOperationKHR create_deferred =
        (PFN_vkCreateDeferredOperationKHR)vkGetDeviceProcAddr(device,
                                                              "vkCreateDeferredOperationKHR");
    PFN_vkDeferredOperationJoinKHR join =
        (PFN_vkDeferredOperationJoinKHR)vkGetDeviceProcAddr(device, "vkDeferredOperationJoinKHR");
    PFN_vkGetDeferredOperationResultKHR deferred_result =
        (PFN_vkGetDeferredOperationResultKHR)vkGetDeviceProcAddr(
            device, "vkGetDeferredOperationResultKHR");
    PFN_vkDestroyDeferredOperationKHR destroy_deferred =
        (PFN_vkDestroyDeferredOperationKHR)vkGetDeviceProcAddr(device,
                                                               "vkDestroyDeferredOperationKHR");
    PFN_vkCreateRayTracingPipelinesKHR create_pipelines =
        (PFN_vkCreateRayTracingPipelinesKHR)vkGetDeviceProcAddr(
            device, "vkCreateRayTracingPipelinesKHR");
    VkDeferredOperationKHR deferred;
    CHECK(create_deferred(device, NULL, &deferred));
    VkPipeline pipeline;
    VkResult created =
        create_pipelines(device, deferred, VK_NULL_HANDLE, 1, &pipeline_info, NULL, &pipeline);
    if (created == VK_OPERATION_DEFERRED_KHR) {
        while (join(device, deferred) == VK_THREAD_IDLE_KHR) {
        }
        created = deferred_result(device, deferred);
    } else if (created == VK_OPERATION_NOT_DEFERRED_KHR) {
        created = VK_SUCCESS;
    }
    CHECK(created);
    destroy_deferred(device, deferred, NULL);

    /* The shader binding table: one record per group, each at the base alignment. */
    VkStridedDeviceAddressRegionKHR regions[3];
    AddressedBuffer table = create_shader_binding_table(device, physical, &memory,
                                                        get_buffer_address, pipeline, regions);
    VkStridedDeviceAddressRegionKHR raygen = regions[0], miss = regions[1], hit = regions[2];
    VkStridedDeviceAddressRegionKHR callable = {0, 0, 0};
    VkTraceRaysIndirectCommand2KHR indirect = {0};
    indirect.raygenShaderRecordAddress = raygen.deviceAddress;
    indirect.raygenShaderRecordSize = raygen.size;
    indirect.missShaderBindingTableAddress = miss.deviceAddress;
    indirect.missShaderBindingTableSize = miss.size;
    indirect.missShaderBindingTableStride = miss.stride;
    indirect.hitShaderBindingTableAddress = hit.deviceAddress;
    indirect.hitShaderBindingTableSize = hit.size;
    indirect.hitShaderBindingTableStride = hit.stride;
    indirect.width = WIDTH;
    indirect.height = HEIGHT;
    indirect.depth = 1;
    AddressedBuffer indirect_buffer =
        make_buffer(device, &memory, sizeof(indirect), VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT);
    memcpy(indirect_buffer.mapped, &indirect, sizeof(indirect));
    /* vkCmdTraceRaysIndirectKHR reads the VkTraceRaysIndirectCommandKHR at the end of it. */
    VkDeviceAddress dimensions = indirect_buffer.address +
                                 offsetof(VkTraceRaysIndirectCommand2KHR, width);

    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR, pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR, layout, 0, 1,
                            &set, 0, NULL);
    vkCmdPushConstants(command_buffer, layout, stages, 0, sizeof(push), &push);
    if (!strcmp(mode, "indirect")) {
        PFN_vkCmdTraceRaysIndirectKHR trace = (PFN_vkCmdTraceRaysIndirectKHR)vkGetDeviceProcAddr(
            device, "vkCmdTraceRaysIndirectKHR");
        trace(command_buffer, &raygen, &miss, &hit, &callable, dimensions);
    } else if (!strcmp(mode, "indirect2")) {
        PFN_vkCmdTraceRaysIndirect2KHR trace =
            (PFN_vkCmdTraceRaysIndirect2KHR)vkGetDeviceProcAddr(device,
                                                                "vkCmdTraceRaysIndirect2KHR");
        trace(command_buffer, indirect_buffer.address);
    } else {
        PFN_vkCmdTraceRaysKHR trace =
            (PFN_vkCmdTraceRaysKHR)vkGetDeviceProcAddr(device, "vkCmdTraceRaysKHR");
        trace(command_buffer, &raygen, &miss, &hit, &callable, WIDTH, HEIGHT, 1);
    }
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait_idle(device, queue, command_buffer);

    printf("result");
    for (int k = 0; k < WIDTH * HEIGHT; ++k) printf(" %u", ((uint32_t *)image.mapped)[k]);
    printf("\n");

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    for (int k = 0; k < 3; ++k) vkDestroyShaderModule(device, modules[k], NULL);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    destroy_acceleration_structure(device, &top);
    destroy_acceleration_structure(device, &bottom);
    destroy_addressed_buffer(device, &indirect_buffer);
    destroy_addressed_buffer(device, &table);
    for (uint32_t k = 0; k < MATERIALS; ++k) destroy_addressed_buffer(device, &materials[k]);
    destroy_addressed_buffer(device, &image);
    destroy_addressed_buffer(device, &instance_buffer);
    destroy_addressed_buffer(device, &vertex_buffer);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
