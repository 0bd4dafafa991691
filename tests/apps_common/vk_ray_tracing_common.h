/* What the ray-tracing test programs (ray_query_app, ray_tracing_app) do alike: host-visible
 * buffers with device addresses, one-primitive acceleration structures built and waited for,
 * a ray generation / miss / triangle hit group pipeline and its shader binding table. Static
 * inline, like vk_app_common.h, which it builds on; knows nothing of gpuav. */
#ifndef VK_RAY_TRACING_COMMON_H
#define VK_RAY_TRACING_COMMON_H
#include <string.h>

#include "vk_app_common.h"

/* A host-visible buffer, mapped, with its device address. */
typedef struct {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;
    VkDeviceAddress address;
} AddressedBuffer;

/* A zeroed, mapped buffer of `usage` (and device addresses), its address from `get_address`. */
static inline AddressedBuffer create_addressed_buffer(
    VkDevice device, const VkPhysicalDeviceMemoryProperties *memory,
    PFN_vkGetBufferDeviceAddress get_address, VkDeviceSize size, VkBufferUsageFlags usage) {
    AddressedBuffer made = {0};
    VkMemoryAllocateFlagsInfo flags = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    create_host_buffer(device, memory, size, usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT,
                       NULL, ~0u, &flags, &made.buffer, &made.memory);
    CHECK(vkMapMemory(device, made.memory, 0, VK_WHOLE_SIZE, 0, &made.mapped));
    memset(made.mapped, 0, size);
    VkBufferDeviceAddressInfo info = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    info.buffer = made.buffer;
    made.address = get_address(device, &info);
    return made;
}

/* Unmaps `buffer` and frees it with its memory. */
static inline void destroy_addressed_buffer(VkDevice device, AddressedBuffer *buffer) {
    vkUnmapMemory(device, buffer->memory);
    vkDestroyBuffer(device, buffer->buffer, NULL);
    vkFreeMemory(device, buffer->memory, NULL);
}

/* An acceleration structure and the buffer that stores it. */
typedef struct {
    VkAccelerationStructureKHR structure;
    AddressedBuffer storage;
} AccelerationStructure;

/* An acceleration structure of `geometry` (one primitive), built on `queue` and waited for. */
static inline AccelerationStructure build_acceleration_structure(
    VkDevice device, const VkPhysicalDeviceMemoryProperties *memory,
    PFN_vkGetBufferDeviceAddress get_address, VkQueue queue, VkCommandPool pool,
    VkAccelerationStructureTypeKHR type, const VkAccelerationStructureGeometryKHR *geometry) {
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
    AccelerationStructure made;
    made.storage = create_addressed_buffer(device, memory, get_address,
                                           sizes.accelerationStructureSize,
                                           VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_STORAGE_BIT_KHR);
    VkAccelerationStructureCreateInfoKHR create = {
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_CREATE_INFO_KHR};
    create.buffer = made.storage.buffer;
    create.size = sizes.accelerationStructureSize;
    create.type = type;
    CHECK(create_structure(device, &create, NULL, &made.structure));
    /* Scratch addresses must be aligned (minAccelerationStructureScratchOffsetAlignment). */
    AddressedBuffer scratch = create_addressed_buffer(
        device, memory, get_address, sizes.buildScratchSize + 256,
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    info.dstAccelerationStructure = made.structure;
    info.scratchData.deviceAddress = (scratch.address + 255) & ~(VkDeviceAddress)255;
    VkAccelerationStructureBuildRangeInfoKHR range = {1, 0, 0, 0};
    const VkAccelerationStructureBuildRangeInfoKHR *ranges = &range;
    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    build(command_buffer, 1, &info, &ranges);
    submit_once(device, queue, pool, command_buffer);
    destroy_addressed_buffer(device, &scratch);
    return made;
}

/* Destroys `structure` and frees its storage. */
static inline void destroy_acceleration_structure(VkDevice device,
                                                  AccelerationStructure *structure) {
    PFN_vkDestroyAccelerationStructureKHR destroy =
        (PFN_vkDestroyAccelerationStructureKHR)vkGetDeviceProcAddr(
            device, "vkDestroyAccelerationStructureKHR");
    destroy(device, structure->structure, NULL);
    destroy_addressed_buffer(device, &structure->storage);
}

/* The device address of `structure`, as instances refer to it. */
static inline VkDeviceAddress acceleration_structure_address(
    VkDevice device, VkAccelerationStructureKHR structure) {
    PFN_vkGetAccelerationStructureDeviceAddressKHR get =
        (PFN_vkGetAccelerationStructureDeviceAddressKHR)vkGetDeviceProcAddr(
            device, "vkGetAccelerationStructureDeviceAddressKHR");
    VkAccelerationStructureDeviceAddressInfoKHR info = {
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_DEVICE_ADDRESS_INFO_KHR};
    info.accelerationStructure = structure;
    return get(device, &info);
}

/* An opaque geometry of one triangle of three packed vec3 vertices at `vertices`. */
static inline VkAccelerationStructureGeometryKHR triangle_geometry(VkDeviceAddress vertices) {
    VkAccelerationStructureGeometryKHR triangle = {
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_KHR};
    triangle.geometryType = VK_GEOMETRY_TYPE_TRIANGLES_KHR;
    triangle.flags = VK_GEOMETRY_OPAQUE_BIT_KHR;
    VkAccelerationStructureGeometryTrianglesDataKHR *triangles = &triangle.geometry.triangles;
    triangles->sType = VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_TRIANGLES_DATA_KHR;
    triangles->vertexFormat = VK_FORMAT_R32G32B32_SFLOAT;
    triangles->vertexData.deviceAddress = vertices;
    triangles->vertexStride = 12;
    triangles->maxVertex = 2;
    triangles->indexType = VK_INDEX_TYPE_NONE_KHR;
    return triangle;
}

/* An instance of the bottom level at `bottom`, moved `x` along x, both faces hit. */
static inline VkAccelerationStructureInstanceKHR moved_instance(VkDeviceAddress bottom,
                                                                float x) {
    VkAccelerationStructureInstanceKHR instance = {0};
    instance.transform.matrix[0][0] = 1.0f;
    instance.transform.matrix[1][1] = 1.0f;
    instance.transform.matrix[2][2] = 1.0f;
    instance.transform.matrix[0][3] = x;
    instance.mask = 0xFF;
    instance.flags = VK_GEOMETRY_INSTANCE_TRIANGLE_FACING_CULL_DISABLE_BIT_KHR;
    instance.accelerationStructureReference = bottom;
    return instance;
}

/* A geometry of the instance records at `instances`, for a top level. */
static inline VkAccelerationStructureGeometryKHR instances_geometry(VkDeviceAddress instances) {
    VkAccelerationStructureGeometryKHR geometry = {
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_KHR};
    geometry.geometryType = VK_GEOMETRY_TYPE_INSTANCES_KHR;
    geometry.geometry.instances.sType =
        VK_STRUCTURE_TYPE_ACCELERATION_STRUCTURE_GEOMETRY_INSTANCES_DATA_KHR;
    geometry.geometry.instances.data.deviceAddress = instances;
    return geometry;
}

/* The bottom level of one triangle in front of the camera (corners within 0.9 of the origin at
 * z 0), built from the vertex buffer it makes in `vertices`. */
static inline AccelerationStructure build_triangle_bottom_level(
    VkDevice device, const VkPhysicalDeviceMemoryProperties *memory,
    PFN_vkGetBufferDeviceAddress get_address, VkQueue queue, VkCommandPool pool,
    AddressedBuffer *vertices) {
    const float corners[9] = {-0.9f, -0.9f, 0.0f, 0.9f, -0.9f, 0.0f, 0.0f, 0.9f, 0.0f};
    *vertices = create_addressed_buffer(
        device, memory, get_address, sizeof(corners),
        VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_BIT_KHR);
    memcpy(vertices->mapped, corners, sizeof(corners));
    VkAccelerationStructureGeometryKHR triangle = triangle_geometry(vertices->address);
    return build_acceleration_structure(device, memory, get_address, queue, pool,
                                        VK_ACCELERATION_STRUCTURE_TYPE_BOTTOM_LEVEL_KHR,
                                        &triangle);
}

/* A top level of one instance of `bottom` moved `x` along x (moved_instance), built from the
 * instance buffer it makes in `instances`. */
static inline AccelerationStructure build_moved_top_level(
    VkDevice device, const VkPhysicalDeviceMemoryProperties *memory,
    PFN_vkGetBufferDeviceAddress get_address, VkQueue queue, VkCommandPool pool,
    VkAccelerationStructureKHR bottom, float x, AddressedBuffer *instances) {
    VkAccelerationStructureInstanceKHR record =
        moved_instance(acceleration_structure_address(device, bottom), x);
    *instances = create_addressed_buffer(
        device, memory, get_address, sizeof(record),
        VK_BUFFER_USAGE_ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_BIT_KHR);
    memcpy(instances->mapped, &record, sizeof(record));
    VkAccelerationStructureGeometryKHR geometry = instances_geometry(instances->address);
    return build_acceleration_structure(device, memory, get_address, queue, pool,
                                        VK_ACCELERATION_STRUCTURE_TYPE_TOP_LEVEL_KHR, &geometry);
}

/* The create info of a pipeline of three groups: ray generation, miss and a triangle hit group
 * of a closest-hit shader, from the modules loaded from `paths` into `modules`; it points into
 * `stages` and `groups`, which the caller keeps until the pipeline is created. */
static inline VkRayTracingPipelineCreateInfoKHR ray_tracing_pipeline_info(
    VkDevice device, VkPipelineLayout layout, char *const *paths, VkShaderModule modules[3],
    VkPipelineShaderStageCreateInfo stages[3], VkRayTracingShaderGroupCreateInfoKHR groups[3]) {
    VkShaderStageFlagBits stage_bits[3] = {VK_SHADER_STAGE_RAYGEN_BIT_KHR,
                                           VK_SHADER_STAGE_MISS_BIT_KHR,
                                           VK_SHADER_STAGE_CLOSEST_HIT_BIT_KHR};
    load_shader_stages(device, 3, paths, stage_bits, modules, stages);
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
    info.pStages = stages;
    info.groupCount = 3;
    info.pGroups = groups;
    info.maxPipelineRayRecursionDepth = 1;
    info.layout = layout;
    return info;
}

/* The shader binding table of `pipeline`'s three groups: one record per group, each at the
 * base alignment; `regions` gets the ray generation, miss and hit regions. */
static inline AddressedBuffer create_shader_binding_table(
    VkDevice device, VkPhysicalDevice physical, const VkPhysicalDeviceMemoryProperties *memory,
    PFN_vkGetBufferDeviceAddress get_address, VkPipeline pipeline,
    VkStridedDeviceAddressRegionKHR regions[3]) {
    VkPhysicalDeviceRayTracingPipelinePropertiesKHR rt_properties = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_PROPERTIES_KHR};
    VkPhysicalDeviceProperties2 properties = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                              &rt_properties};
    vkGetPhysicalDeviceProperties2(physical, &properties);
    uint32_t handle_size = rt_properties.shaderGroupHandleSize;
    VkDeviceSize stride = align_up(align_up(handle_size, rt_properties.shaderGroupHandleAlignment),
                                   rt_properties.shaderGroupBaseAlignment);
    uint8_t handles[3 * 64];
    if (handle_size > 64) exit(2);
    PFN_vkGetRayTracingShaderGroupHandlesKHR get_handles =
        (PFN_vkGetRayTracingShaderGroupHandlesKHR)vkGetDeviceProcAddr(
            device, "vkGetRayTracingShaderGroupHandlesKHR");
    CHECK(get_handles(device, pipeline, 0, 3, 3 * handle_size, handles));
    AddressedBuffer table = create_addressed_buffer(
        device, memory, get_address, 3 * stride + rt_properties.shaderGroupBaseAlignment,
        VK_BUFFER_USAGE_SHADER_BINDING_TABLE_BIT_KHR);
    VkDeviceAddress table_start = align_up(table.address, rt_properties.shaderGroupBaseAlignment);
    for (int k = 0; k < 3; ++k) {
        memcpy((uint8_t *)table.mapped + (table_start - table.address) + k * stride,
               handles + k * handle_size, handle_size);
        regions[k] = (VkStridedDeviceAddressRegionKHR){table_start + k * stride, stride, stride};
    }
    return table;
}
#endif
