/* Acceleration structures chosen from an array, as a renderer with several scenes (or a
 * level-of-detail TLAS per object) does: two top-level acceleration structures over one
 * triangle's BLAS (scene 1's instance moved one unit along x), in a descriptor array of two.
 * Knows nothing of gpuav.
 *
 *   ray_query_app query COMP.spv WRITTEN SCENE PIXEL RAY
 *   ray_query_app trace RGEN.spv RMISS.spv RCHIT.spv WRITTEN SCENE PIXEL RAY
 *
 * "query": a compute pipeline of 4 x 4 invocations doing ray queries (VK_KHR_ray_query);
 * "trace": a ray-tracing pipeline launched 4 x 4 (ray generation, miss, closest hit).
 * Set 0: binding 0 the scenes (2 acceleration structures, the first WRITTEN of them written),
 * binding 1 the image (a storage buffer of 16 words, "image"), binding 2 the rays (a storage
 * buffer of 16 vec4 ray origins, "rays", origin k at (x, y) of pixel k). The push constants
 * are (int SCENE, int PIXEL, int RAY), for the shaders to misuse. Prints "message" lines
 * (vk_app_common.h), then "result" and the image's words. */
#include <string.h>

#include "vk_app_common.h"

#define SIDE 4
#define PIXELS (SIDE * SIDE)
#define SCENES 2

typedef struct {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;
    VkDeviceAddress address;
} Buffer;

static PFN_vkGetBufferDeviceAddress get_buffer_address;

static Buffer make_buffer(VkDevice device, const VkPhysicalDeviceMemoryProperties *memory,
                          VkDeviceSize size, VkBufferUsageFlags usage) {
    Buffer made = {0};
    VkMemoryAllocateFlagsInfo flags = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    create_host_buffer(device, memory, size, usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                       NULL, ~0u, &flags, &made.buffer, &made.memory);
    CHECK(vkMapMemory(device, made.memory, 0, VK_WHOLE_SIZE, 0, &made.mapped));
    memset(made.mapped, 0, size);
    VkBufferDeviceAddressInfo info = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    info.buffer = made.buffer;
    made.address = get_buffer_address(device, &info);
    return made;
}

static void free_buffer(VkDevice device, Buffer *buffer) {
    vkUnmapMemory(device, buffer->memory);
    vkDestroyBuffer(device, buffer->buffer, NULL);
    vkFreeMemory(device, buffer->memory, NULL);
}

static void run_once(VkDevice device, VkQueue queue, VkCommandPool pool,
                     VkCommandBuffer command_buffer) {
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait(device, queue, command_buffer);
    vkDestroyFence(device, fence, NULL);
    vkFreeCommandBuffers(device, pool, 1, &command_buffer);
}

typedef struct {
    VkAccelerationStructureKHR structure;
    Buffer storage;
} Structure;

/* Build one acceleration structure of `geometry` (one primitive) and wait for it. */
static Structure build_structure(VkDevice device, const VkPhysicalDeviceMemoryProperties *memory,
                                 VkQueue queue, VkCommandPool pool,
                                 VkAccelerationStructureTypeKHR type,
                                 const VkAccelerationStructureGeometryKHR *geometry) {
    PFN_vkGetAccelerationStructureBuildSizesKHR build_sizes =
        (PFN_vkGetAccelerationStructureBuildSizesKHR)vkGetDeviceProcAddr(
            device, "vkGetAccelerationStructureBuildSizesKHR");
    PFN_vkCreateAccelerationStructureKHR create_structure =
        (PFN_vkCreateAccelerationStructureKHR)vkGetDeviceProcAddr(
            device, "vkCreateAccelerationStructureKHR");
    PFN_vkCmdBuildAccelerationStructuresKHR build =
        (PFN_vkCmdBuildAccelerationStructuresKHR)vkGetDeviceProcAddr(
            device, "vkCmdBuildAccelerationStructuresKHR");
    VkAccelerationStructureBuildGeometryInfoKHR info = {
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_BUILD_GEOMETRY_INFO_KHR};
    info.type = type;
    info.mode = VK_BUILD_ACCELERATION_STRUCTURE_MODE_BUILD_KHR;
    info.geometryCount = 1;
    info.pGeometries = geometry;
    uint32_t primitives = 1;
    VkAccelerationStructureBuildSizesInfoKHR sizes = {
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_BUILD_SIZES_INFO_KHR};
    build_sizes(device, VK_ACCELERATION_STRUCTURE_BUILD_TYPE_DEVICE_KHR, &info, &primitives,
                &sizes);
    Structure made;
    made.storage = make_buffer(device, memory, sizes.accelerationStructureSize,
                               VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_STORAGE_BIT_KHR);
    VkAccelerationStructureCreateInfoKHR create = {
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_CREATE_INFO_KHR};
    create.buffer = made.storage.buffer;
    create.size = sizes.accelerationStructureSize;
    create.type = type;
    CHECK(create_structure(device, &create, NULL, &made.structure));
    Buffer scratch = make_buffer(device, memory, sizes.buildScratchSize + 256,
                                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    info.dstAccelerationStructure = made.structure;
    info.scratchData.deviceAddress = (scratch.address + 255) & ~(VkDeviceAddress)255;
    VkAccelerationStructureBuildRangeInfoKHR range = {1, 0, 0, 0};
    const VkAccelerationStructureBuildRangeInfoKHR *ranges = &range;
    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    build(command_buffer, 1, &info, &ranges);
    run_once(device, queue, pool, command_buffer);
    free_buffer(device, &scratch);
    return made;
}

static VkDeviceAddress structure_address(VkDevice device, VkAccelerationStructureKHR structure) {
    PFN_vkGetAccelerationStructureDeviceAddressKHR get =
        (PFN_vkGetAccelerationStructureDeviceAddressKHR)vkGetDeviceProcAddr(
            device, "vkGetAccelerationStructureDeviceAddressKHR");
    VkAccelerationStructureDeviceAddressInfoKHR info = {
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_DEVICE_ADDRESS_INFO_KHR};
    info.accelerationStructure = structure;
    return get(device, &info);
}

static void name_buffer(VkDevice device, VkBuffer buffer, const char *name) {
    PFN_vkSetDebugUtilsObjectNameEXT set_name =
        (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(device,
                                                              "vkSetDebugUtilsObjectNameEXT");
    VkDebugUtilsObjectNameInfoEXT info = {VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
    info.objectType = VK_OBJECT_TYPE_BUFFER;
    info.objectHandle = (uint64_t)buffer;
    info.pObjectName = name;
    set_name(device, &info);
}

static VkDeviceSize align_up(VkDeviceSize value, VkDeviceSize alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

static VkPipeline ray_tracing_pipeline(VkDevice device, VkPipelineLayout layout,
                                       char **paths, VkShaderModule *modules) {
    VkPipelineShaderStageCreateInfo shader_stages[3];
    VkShaderStageFlagBits stage_bits[3] = {VK_SHADER_STAGE_RAYGEN_BIT_KHR,
                                           VK_SHADER_STAGE_MISS_BIT_KHR,
                                           VK_SHADER_STAGE_CLOSEST_HIT_BIT_KHR};
    for (int k = 0; k < 3; ++k) {
        modules[k] = load_shader_module(device, paths[k]);
        shader_stages[k] = (VkPipelineShaderStageCreateInfo){
            VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        shader_stages[k].stage = stage_bits[k];
        shader_stages[k].module = modules[k];
        shader_stages[k].pName = "main";
    }
    VkRayTracingShaderGroupCreateInfoKHR groups[3];
    for (uint32_t k = 0; k < 3; ++k) {
        groups[k] = (VkRayTracingShaderGroupCreateInfoKHR){
            VK_STRUCTURE_TYPE_RAY_TRACING_SHADER_GROUP_CREATE_INFO_KHR};
        groups[k].type = k < 2 ? VK_RAY_TRACING_SHADER_GROUP_TYPE_GENERAL_KHR
                               : VK_RAY_TRACING_SHADER_GROUP_TYPE_TRIANGLES_HIT_GROUP_KHR;
        groups[k].generalShader = k < 2 ? k : VK_SHADER_UNUSED_KHR;
        groups[k].closestHitShader = k < 2 ? VK_SHADER_UNUSED_KHR : k;
        groups[k].anyHitShader = VK_SHADER_UNUSED_KHR;
        groups[k].intersectionShader = VK_SHADER_UNUSED_KHR;
    }
    VkRayTracingPipelineCreateInfoKHR info = {
        VK_STRUCTURE_TYPE_RAY_TRACING_PIPELINE_CREATE_INFO_KHR};
    info.stageCount = 3;
    info.pStages = shader_stages;
    info.groupCount = 3;
    info.pGroups = groups;
    info.maxPipelineRayRecursionDepth = 1;
    info.layout = layout;
    PFN_vkCreateRayTracingPipelinesKHR create_pipelines =
        (PFN_vkCreateRayTracingPipelinesKHR)vkGetDeviceProcAddr(
            device, "vkCreateRayTracingPipelinesKHR");
    VkPipeline pipeline;
    CHECK(create_pipelines(device, VK_NULL_HANDLE, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));
    return pipeline;
}

int main(int argc, char **argv) {
    int trace = argc > 1 && !strcmp(argv[1], "trace");
    int shaders = trace ? 3 : 1;
    if (argc != 6 + shaders || (!trace && strcmp(argv[1], "query"))) {
        fprintf(stderr, "usage: %s query|trace SHADER.spv... WRITTEN SCENE PIXEL RAY\n", argv[0]);
        return 2;
    }
    uint32_t written = (uint32_t)strtoul(argv[2 + shaders], NULL, 0);
    if (written > SCENES) return 2;
    int32_t push[3] = {(int32_t)strtol(argv[3 + shaders], NULL, 0),
                       (int32_t)strtol(argv[4 + shaders], NULL, 0),
                       (int32_t)strtol(argv[5 + shaders], NULL, 0)};
    const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkInstance instance = create_instance("ray_query_app", VK_API_VERSION_1_3, NULL, 1, extensions);
    VkDebugUtilsMessengerEXT messenger = create_messenger(
        instance,
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT, print_message);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);

    VkPhysicalDeviceRayQueryFeaturesKHR query_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_QUERY_FEATURES_KHR};
    query_features.rayQuery = VK_TRUE;
    VkPhysicalDeviceRayTracingPipelineFeaturesKHR pipeline_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_FEATURES_KHR, &query_features};
    pipeline_features.rayTracingPipeline = VK_TRUE;
    VkPhysicalDeviceAccelerationStructureFeaturesKHR structure_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ACCELERATION_STRUCTURE_FEATURES_KHR,
        &pipeline_features};
    structure_features.accelerationStructure = VK_TRUE;
    VkPhysicalDeviceVulkan12Features features12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &structure_features};
    features12.bufferDeviceAddress = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          &features12};
    const char *device_extensions[] = {
        VK_KHR_ACCELERATION_STRUCTURE_EXTENSION_NAME, VK_KHR_RAY_TRACING_PIPELINE_EXTENSION_NAME,
        VK_KHR_RAY_QUERY_EXTENSION_NAME, VK_KHR_DEFERRED_HOST_OPERATIONS_EXTENSION_NAME};
    VkQueue queue;
    VkDevice device = create_device(physical, &features, 4, device_extensions, &queue);
    get_buffer_address =
        (PFN_vkGetBufferDeviceAddress)vkGetDeviceProcAddr(device, "vkGetBufferDeviceAddress");
    VkCommandPool pool = create_command_pool(device);

    /* The scenes: one triangle in front of the camera, moved one unit along x in scene 1. */
    const float vertices[9] = {-0.9f, -0.9f, 0.0f, 0.9f, -0.9f, 0.0f, 0.0f, 0.9f, 0.0f};
    Buffer vertex_buffer =
        make_buffer(device, &memory, sizeof(vertices),
                    VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_BIT_KHR);
    memcpy(vertex_buffer.mapped, vertices, sizeof(vertices));
    VkAccelerationStructureGeometryKHR triangle = {
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_KHR};
    triangle.geometryType = VK_GEOMETRY_TYPE_TRIANGLES_KHR;
    triangle.flags = VK_GEOMETRY_OPAQUE_BIT_KHR;
    VkAccelerationStructureGeometryTrianglesDataKHR *triangles = &triangle.geometry.triangles;
    triangles->sType = VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_TRIANGLES_DATA_KHR;
    triangles->vertexFormat = VK_FORMAT_R32G32B32_SFLOAT;
    triangles->vertexData.deviceAddress = vertex_buffer.address;
    triangles->vertexStride = 12;
    triangles->maxVertex = 2;
    triangles->indexType = VK_INDEX_TYPE_NONE_KHR;
    Structure bottom = build_structure(device, &memory, queue, pool,
                                       VK_ACCELERATION_STRUCTURE_TYPE_BOTTOM_LEVEL_KHR, &triangle);
    Structure tops[SCENES];
    Buffer instance_buffers[SCENES];
    for (int scene = 0; scene < SCENES; ++scene) {
        VkAccelerationStructureInstanceKHR instance_record = {0};
        instance_record.transform.matrix[0][0] = 1.0f;
        instance_record.transform.matrix[1][1] = 1.0f;
        instance_record.transform.matrix[2][2] = 1.0f;
        instance_record.transform.matrix[0][3] = (float)scene;
        instance_record.mask = 0xFF;
        instance_record.flags = VK_GEOMETRY_INSTANCE_TRIANGLE_FACING_CULL_DISABLE_BIT_KHR;
        instance_record.accelerationStructureReference =
            structure_address(device, bottom.structure);
        instance_buffers[scene] =
            make_buffer(device, &memory, sizeof(instance_record),
                        VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_BIT_KHR);
        memcpy(instance_buffers[scene].mapped, &instance_record, sizeof(instance_record));
        VkAccelerationStructureGeometryKHR instances = {
            VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_KHR};
        instances.geometryType = VK_GEOMETRY_TYPE_INSTANCES_KHR;
        instances.geometry.instances.sType =
            VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_INSTANCES_DATA_KHR;
        instances.geometry.instances.data.deviceAddress = instance_buffers[scene].address;
        tops[scene] = build_structure(device, &memory, queue, pool,
                                      VK_ACCELERATION_STRUCTURE_TYPE_TOP_LEVEL_KHR, &instances);
    }

    /* The image and the rays. */
    Buffer image = make_buffer(device, &memory, 4 * PIXELS, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    name_buffer(device, image.buffer, "image");
    Buffer rays = make_buffer(device, &memory, 16 * PIXELS, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    name_buffer(device, rays.buffer, "rays");
    for (int k = 0; k < PIXELS; ++k) {
        float *origin = (float *)rays.mapped + 4 * k;
        origin[0] = ((float)(k % SIDE) + 0.5f) / SIDE * 2.0f - 1.0f;
        origin[1] = ((float)(k / SIDE) + 0.5f) / SIDE * 2.0f - 1.0f;
        origin[2] = -1.0f;
        origin[3] = 0.0f;
    }

    VkShaderStageFlags stages = trace ? VK_SHADER_STAGE_RAYGEN_BIT_KHR |
                                            VK_SHADER_STAGE_MISS_BIT_KHR |
                                            VK_SHADER_STAGE_CLOSEST_HIT_BIT_KHR
                                      : VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorSetLayoutBinding bindings[3] = {
        {0, VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR, SCENES, stages, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, stages, NULL},
        {2, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, stages, NULL},
    };
    VkDescriptorSetLayoutCreateInfo set_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 3;
    set_info.pBindings = bindings;
    VkDescriptorSetLayout set_layout;
    CHECK(vkCreateDescriptorSetLayout(device, &set_info, NULL, &set_layout));
    VkPushConstantRange push_range = {stages, 0, sizeof(push)};
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push_range;
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(device, &layout_info, NULL, &layout));

    VkDescriptorPoolSize pool_sizes[2] = {
        {VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR, SCENES},
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2},
    };
    VkDescriptorPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 2;
    pool_info.pPoolSizes = pool_sizes;
    VkDescriptorPool descriptor_pool;
    CHECK(vkCreateDescriptorPool(device, &pool_info, NULL, &descriptor_pool));
    VkDescriptorSetAllocateInfo allocate = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = descriptor_pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout;
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(device, &allocate, &set));
    VkAccelerationStructureKHR scene_handles[SCENES];
    for (int scene = 0; scene < SCENES; ++scene) scene_handles[scene] = tops[scene].structure;
    VkWriteDescriptorSetAccelerationStructureKHR structure_write = {
        VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET_ACCELERATION_STRUCTURE_KHR};
    structure_write.accelerationStructureCount = written;
    structure_write.pAccelerationStructures = scene_handles;
    VkDescriptorBufferInfo image_info = {image.buffer, 0, VK_WHOLE_SIZE};
    VkDescriptorBufferInfo rays_info = {rays.buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet writes[3] = {
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 1, 0, 1,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &image_info, NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 2, 0, 1,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &rays_info, NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, &structure_write, set, 0, 0, written,
         VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR, NULL, NULL, NULL},
    };
    vkUpdateDescriptorSets(device, written ? 3 : 2, writes, 0, NULL);

    VkShaderModule modules[3] = {VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE};
    VkPipeline pipeline;
    VkPipelineBindPoint bind_point;
    if (trace) {
        pipeline = ray_tracing_pipeline(device, layout, argv + 2, modules);
        bind_point = VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR;
    } else {
        modules[0] = load_shader_module(device, argv[2]);
        pipeline = create_compute_pipeline(device, layout, modules[0], NULL);
        bind_point = VK_PIPELINE_BIND_POINT_COMPUTE;
    }

    /* The shader binding table ("trace"): one record per group, each at the base alignment. */
    Buffer table = {0};
    VkStridedDeviceAddressRegionKHR regions[4] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    if (trace) {
        VkPhysicalDeviceRayTracingPipelinePropertiesKHR rt_properties = {
            VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_PROPERTIES_KHR};
        VkPhysicalDeviceProperties2 properties = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                                  &rt_properties};
        vkGetPhysicalDeviceProperties2(physical, &properties);
        uint32_t handle_size = rt_properties.shaderGroupHandleSize;
        VkDeviceSize stride =
            align_up(align_up(handle_size, rt_properties.shaderGroupHandleAlignment),
                     rt_properties.shaderGroupBaseAlignment);
        uint8_t handles[3 * 64];
        if (handle_size > 64) exit(2);
        PFN_vkGetRayTracingShaderGroupHandlesKHR get_handles =
            (PFN_vkGetRayTracingShaderGroupHandlesKHR)vkGetDeviceProcAddr(
                device, "vkGetRayTracingShaderGroupHandlesKHR");
        CHECK(get_handles(device, pipeline, 0, 3, 3 * handle_size, handles));
        table = make_buffer(device, &memory, 3 * stride + rt_properties.shaderGroupBaseAlignment,
                            VK_BUFFER_USAGE_SHADER_BINDING_TABLE_BIT_KHR);
        VkDeviceAddress table_start =
            align_up(table.address, rt_properties.shaderGroupBaseAlignment);
        for (int k = 0; k < 3; ++k) {
            memcpy((uint8_t *)table.mapped + (table_start - table.address) + k * stride,
                   handles + k * handle_size, handle_size);
            regions[k] = (VkStridedDeviceAddressRegionKHR){table_start + k * stride, stride,
                                                           stride};
        }
    }

    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    vkCmdBindPipeline(command_buffer, bind_point, pipeline);
    vkCmdBindDescriptorSets(command_buffer, bind_point, layout, 0, 1, &set, 0, NULL);
    vkCmdPushConstants(command_buffer, layout, stages, 0, sizeof(push), push);
    if (trace) {
        PFN_vkCmdTraceRaysKHR trace_rays =
            (PFN_vkCmdTraceRaysKHR)vkGetDeviceProcAddr(device, "vkCmdTraceRaysKHR");
        trace_rays(command_buffer, &regions[0], &regions[1], &regions[2], &regions[3], SIDE, SIDE,
                   1);
    } else {
        vkCmdDispatch(command_buffer, 1, 1, 1);
    }
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait(device, queue, command_buffer);
    /* The Khronos layer reads its GPU-AV results back when a wait shows the work done; its
     * own timeline may trail the app's fence, so give it an idle wait as well. */
    CHECK(vkQueueWaitIdle(queue));
    CHECK(vkDeviceWaitIdle(device));

    printf("result");
    for (int k = 0; k < PIXELS; ++k) printf(" %u", ((uint32_t *)image.mapped)[k]);
    printf("\n");

    PFN_vkDestroyAccelerationStructureKHR destroy_structure =
        (PFN_vkDestroyAccelerationStructureKHR)vkGetDeviceProcAddr(
            device, "vkDestroyAccelerationStructureKHR");
    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    for (int k = 0; k < 3; ++k)
        if (modules[k]) vkDestroyShaderModule(device, modules[k], NULL);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    for (int scene = 0; scene < SCENES; ++scene) {
        destroy_structure(device, tops[scene].structure, NULL);
        free_buffer(device, &tops[scene].storage);
        free_buffer(device, &instance_buffers[scene]);
    }
    destroy_structure(device, bottom.structure, NULL);
    free_buffer(device, &bottom.storage);
    if (trace) free_buffer(device, &table);
    free_buffer(device, &rays);
    free_buffer(device, &image);
    free_buffer(device, &vertex_buffer);
    vkDestroyDevice(device, NULL);
    destroy_messenger(instance, messenger);
    vkDestroyInstance(instance, NULL);
    return 0;
}
