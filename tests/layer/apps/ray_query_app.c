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

#include "vk_ray_tracing_common.h"

#define SIDE 4
#define PIXELS (SIDE * SIDE)
#define SCENES 2

static PFN_vkGetBufferDeviceAddress get_buffer_address;

static AddressedBuffer make_buffer(VkDevice device, const VkPhysicalDeviceMemoryProperties *memory,
                                   VkDeviceSize size, VkBufferUsageFlags usage) {
    return create_addressed_buffer(device, memory, get_buffer_address, size, usage);
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
    VkDebugUtilsMessengerEXT messenger;
    VkInstance instance =
        create_printing_instance("ray_query_app", VK_API_VERSION_1_3, INFO_AND_ABOVE, &messenger);
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
    AddressedBuffer vertex_buffer;
    AccelerationStructure bottom = build_triangle_bottom_level(
        device, &memory, get_buffer_address, queue, pool, &vertex_buffer);
    AccelerationStructure tops[SCENES];
    AddressedBuffer instance_buffers[SCENES];
    for (int scene = 0; scene < SCENES; ++scene)
        tops[scene] = build_moved_top_level(device, &memory, get_buffer_address, queue, pool,
                                            bottom.structure, (float)scene,
                                            &instance_buffers[scene]);

    /* The image and the rays. */
    AddressedBuffer image =
        make_buffer(device, &memory, 4 * PIXELS, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    name_buffer(device, image.buffer, "image");
    AddressedBuffer rays =
        make_buffer(device, &memory, 16 * PIXELS, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
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
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_set_and_pipeline_layouts(device, NULL, 3, bindings, stages, sizeof(push), &set_layout,
                                    &layout);

    VkDescriptorPoolSize pool_sizes[2] = {
        {VK_DESCRIPTOR_TYPE_ACCELERATION_STRUCTURE_KHR, SCENES},
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2},
    };
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set = allocate_one_set(device, 2, pool_sizes, NULL, set_layout,
                                           &descriptor_pool);
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
        VkPipelineShaderStageCreateInfo shader_stages[3];
        VkRayTracingShaderGroupCreateInfoKHR groups[3];
        VkRayTracingPipelineCreateInfoKHR info =
            ray_tracing_pipeline_info(device, layout, argv + 2, modules, shader_stages, groups);
        PFN_vkCreateRayTracingPipelinesKHR create_pipelines =
            (PFN_vkCreateRayTracingPipelinesKHR)vkGetDeviceProcAddr(
                device, "vkCreateRayTracingPipelinesKHR");
        CHECK(create_pipelines(device, VK_NULL_HANDLE, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));
        bind_point = VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR;
    } else {
        modules[0] = load_shader_module(device, argv[2]);
        pipeline = create_compute_pipeline(device, layout, modules[0], NULL);
        bind_point = VK_PIPELINE_BIND_POINT_COMPUTE;
    }

    /* The shader binding table ("trace"): one record per group, each at the base alignment. */
    AddressedBuffer table = {0};
    VkStridedDeviceAddressRegionKHR regions[4] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    if (trace)
        table = create_shader_binding_table(device, physical, &memory, get_buffer_address, pipeline,
                                            regions);

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
    VkFence fence = submit_and_wait_idle(device, queue, command_buffer);

    printf("result");
    for (int k = 0; k < PIXELS; ++k) printf(" %u", ((uint32_t *)image.mapped)[k]);
    printf("\n");

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    for (int k = 0; k < 3; ++k)
        if (modules[k]) vkDestroyShaderModule(device, modules[k], NULL);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    for (int scene = 0; scene < SCENES; ++scene) {
        destroy_acceleration_structure(device, &tops[scene]);
        destroy_addressed_buffer(device, &instance_buffers[scene]);
    }
    destroy_acceleration_structure(device, &bottom);
    if (trace) destroy_addressed_buffer(device, &table);
    destroy_addressed_buffer(device, &rays);
    destroy_addressed_buffer(device, &image);
    destroy_addressed_buffer(device, &vertex_buffer);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
