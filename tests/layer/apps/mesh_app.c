/* Task and mesh shaders drawing into a small image (knows nothing of gpuav): two task
 * workgroups of 4 invocations each fill a payload of colors from a bindless array of palettes
 * and emit one mesh workgroup, which draws one triangle of the image's left (task 0) or right
 * half (task 1) with corners from a shape buffer, colored per primitive.
 *
 *   mesh_app TASK.spv MESH.spv FRAG.spv PALETTE INDEX CORNER LANE [MODE]
 *
 * Set 0: binding 0 the shape (a storage buffer of exactly three vec2 corners), binding 1 the
 * palettes, a variable-count array of storage buffers (room for 8, PALETTES allocated, each of
 * PALETTE_WORDS words). The push constants are (uint PALETTE, int INDEX, int CORNER,
 * int LANE), for the shaders to misuse. MODE: "direct" (vkCmdDrawMeshTasksEXT, the default),
 * "indirect" (vkCmdDrawMeshTasksIndirectEXT) or "objects" (vkCmdDrawMeshTasksEXT with task,
 * mesh and fragment shader objects of VK_EXT_shader_object bound instead of the pipeline).
 * Prints "message" lines (vk_app_common.h), then "result" and the image's WIDTH x HEIGHT RGBA8
 * words. */
#include <string.h>

#include "shader_object_ext.h"
#include "vk_graphics_common.h"

#define WIDTH 8
#define HEIGHT 4
#define PALETTES 2
#define PALETTE_CAPACITY 8
#define PALETTE_WORDS 4

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr, "usage: %s TASK MESH FRAG PALETTE INDEX CORNER LANE [MODE]\n", argv[0]);
        return 2;
    }
    struct {
        uint32_t palette;
        int32_t index;
        int32_t corner;
        int32_t lane;
    } push = {(uint32_t)strtoul(argv[4], NULL, 0), (int32_t)strtol(argv[5], NULL, 0),
              (int32_t)strtol(argv[6], NULL, 0), (int32_t)strtol(argv[7], NULL, 0)};
    const char *mode = argc > 8 ? argv[8] : "direct";
    VkDebugUtilsMessengerEXT messenger;
    VkInstance instance =
        create_printing_instance("mesh_app", VK_API_VERSION_1_3, INFO_AND_ABOVE, &messenger);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);

    VkPhysicalDeviceMeshShaderFeaturesEXT mesh_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT};
    mesh_features.taskShader = VK_TRUE;
    mesh_features.meshShader = VK_TRUE;
    int objects = !strcmp(mode, "objects");
    VkPhysicalDeviceShaderObjectFeaturesEXT object_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_OBJECT_FEATURES_EXT};
    object_features.shaderObject = VK_TRUE;
    if (objects) mesh_features.pNext = &object_features;
    VkPhysicalDeviceVulkan13Features features13 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &mesh_features};
    features13.dynamicRendering = VK_TRUE;
    VkPhysicalDeviceVulkan12Features features12 = storage_buffer_array_features(&features13);
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          &features12};
    const char *device_extensions[] = {VK_EXT_MESH_SHADER_EXTENSION_NAME,
                                       VK_EXT_SHADER_OBJECT_EXTENSION_NAME};
    VkQueue queue;
    VkDevice device =
        create_device(physical, &features, objects ? 2 : 1, device_extensions, &queue);
    VkCommandPool pool = create_command_pool(device);

    /* The palettes, the shape, the indirect command and the image's copy. */
    VkBuffer palettes[PALETTES];
    VkDeviceMemory palette_memory[PALETTES];
    for (uint32_t k = 0; k < PALETTES; ++k) {
        uint32_t words[PALETTE_WORDS];
        for (uint32_t j = 0; j < PALETTE_WORDS; ++j)
            words[j] = 0xFF000000u | (k * 0x80u + j * 0x20u) << (8 * (j % 3));
        char name[32];
        snprintf(name, sizeof(name), "palette %u", k);
        create_named_host_buffer(device, &memory, sizeof(words), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                 words, name, &palettes[k], &palette_memory[k]);
    }
    const float corners[6] = {-1.0f, -1.0f, 0.0f, -1.0f, -1.0f, 1.0f};
    VkBuffer shape;
    VkDeviceMemory shape_memory;
    create_named_host_buffer(device, &memory, sizeof(corners), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                             corners, "shape", &shape, &shape_memory);
    VkDrawMeshTasksIndirectCommandEXT groups = {2, 1, 1};
    VkBuffer indirect;
    VkDeviceMemory indirect_memory;
    create_filled_host_buffer(device, &memory, sizeof(groups), VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT,
                              &groups, &indirect, &indirect_memory);
    VkBuffer readback;
    VkDeviceMemory readback_memory;
    create_host_buffer(device, &memory, 4 * WIDTH * HEIGHT, VK_BUFFER_USAGE_TRANSFER_DST_BIT, NULL,
                       ~0u, NULL, &readback, &readback_memory);

    /* The image drawn into. */
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    VkImage image;
    VkDeviceMemory image_memory;
    VkImageView view;
    create_image_and_view(device, &memory, format, WIDTH, HEIGHT,
                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, 0,
                          &image, &image_memory, &view);

    /* Descriptors and the pipeline. */
    VkShaderStageFlags stages = VK_SHADER_STAGE_TASK_BIT_EXT | VK_SHADER_STAGE_MESH_BIT_EXT;
    VkDescriptorSetLayoutBinding bindings[2] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, stages, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, PALETTE_CAPACITY, stages, NULL},
    };
    /* Only the last binding may have a variable count. */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_variable_set_and_pipeline_layouts(device, 2, bindings, stages, sizeof(push),
                                             &set_layout, &layout);
    VkPushConstantRange push_range = {stages, 0, sizeof(push)};
    VkDescriptorPoolSize pool_size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, PALETTE_CAPACITY + 1};
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set =
        allocate_one_variable_set(device, 1, &pool_size, PALETTES, set_layout, &descriptor_pool);
    VkDescriptorBufferInfo palette_infos[PALETTES];
    for (uint32_t k = 0; k < PALETTES; ++k)
        palette_infos[k] = (VkDescriptorBufferInfo){palettes[k], 0, VK_WHOLE_SIZE};
    VkDescriptorBufferInfo shape_info = {shape, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet writes[2] = {
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 0, 0, 1,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &shape_info, NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 1, 0, PALETTES,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, palette_infos, NULL},
    };
    vkUpdateDescriptorSets(device, 2, writes, 0, NULL);

    VkShaderModule modules[3];
    VkPipelineShaderStageCreateInfo shader_stages[3];
    VkShaderStageFlagBits stage_bits[3] = {VK_SHADER_STAGE_TASK_BIT_EXT,
                                           VK_SHADER_STAGE_MESH_BIT_EXT,
                                           VK_SHADER_STAGE_FRAGMENT_BIT};
    load_shader_stages(device, 3, argv + 1, stage_bits, modules, shader_stages);
    DrawState state;
    init_draw_state(&state, WIDTH, HEIGHT, 1, 0xF);
    VkPipelineRenderingCreateInfo rendering_info = {
        VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
    rendering_info.colorAttachmentCount = 1;
    rendering_info.pColorAttachmentFormats = &format;
    VkGraphicsPipelineCreateInfo pipeline_info =
        draw_pipeline_info(&state, &rendering_info, 3, shader_stages, layout, VK_NULL_HANDLE);
    /* Mesh pipelines have no vertex input. */
    pipeline_info.pVertexInputState = NULL;
    pipeline_info.pInputAssemblyState = NULL;
    VkPipeline pipeline;
    CHECK(vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, NULL, &pipeline));
    /* The same stages as shader objects, with the pipeline layout's set layout and range. */
    VkShaderEXT shaders[3] = {VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE};
    if (objects) {
        PFN_vkCreateShadersEXT create_shaders =
            (PFN_vkCreateShadersEXT)vkGetDeviceProcAddr(device, "vkCreateShadersEXT");
        VkShaderStageFlags next_stages[3] = {VK_SHADER_STAGE_MESH_BIT_EXT,
                                             VK_SHADER_STAGE_FRAGMENT_BIT, 0};
        for (int k = 0; k < 3; ++k) {
            size_t size;
            void *code = read_whole_file(argv[1 + k], &size);
            VkShaderCreateInfoEXT info = spirv_shader_info(stage_bits[k], next_stages[k], code,
                                                           size, &set_layout, &push_range);
            CHECK(create_shaders(device, 1, &info, NULL, &shaders[k]));
            free(code);
        }
    }

    /* Draw, then copy the image out. */
    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    color_image_barrier(command_buffer, image, VK_IMAGE_LAYOUT_UNDEFINED,
                        VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, 0,
                        VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                        VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT);
    begin_color_rendering(command_buffer, view, WIDTH, HEIGHT, (VkClearValue){{{0}}});
    if (objects) {
        PFN_vkCmdBindShadersEXT bind_shaders =
            (PFN_vkCmdBindShadersEXT)vkGetDeviceProcAddr(device, "vkCmdBindShadersEXT");
        VkShaderStageFlagBits bound_stages[4] = {stage_bits[0], stage_bits[1], stage_bits[2],
                                                 VK_SHADER_STAGE_VERTEX_BIT};
        VkShaderEXT bound[4] = {shaders[0], shaders[1], shaders[2], VK_NULL_HANDLE};
        bind_shaders(command_buffer, 4, bound_stages, bound);
        set_shader_object_draw_state(device, command_buffer, &state.viewport, &state.scissor);
    } else {
        vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
    }
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, 1, &set,
                            0, NULL);
    vkCmdPushConstants(command_buffer, layout, stages, 0, sizeof(push), &push);
    if (!strcmp(mode, "indirect")) {
        PFN_vkCmdDrawMeshTasksIndirectEXT draw =
            (PFN_vkCmdDrawMeshTasksIndirectEXT)vkGetDeviceProcAddr(
                device, "vkCmdDrawMeshTasksIndirectEXT");
        draw(command_buffer, indirect, 0, 1, sizeof(groups));
    } else {
        PFN_vkCmdDrawMeshTasksEXT draw =
            (PFN_vkCmdDrawMeshTasksEXT)vkGetDeviceProcAddr(device, "vkCmdDrawMeshTasksEXT");
        draw(command_buffer, groups.groupCountX, groups.groupCountY, groups.groupCountZ);
    }
    vkCmdEndRendering(command_buffer);
    color_image_barrier(command_buffer, image, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                        VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                        VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                        VK_PIPELINE_STAGE_TRANSFER_BIT);
    copy_color_image_to_buffer(command_buffer, image, WIDTH, HEIGHT, readback);
    VkBufferMemoryBarrier to_host = {VK_STRUCTURE_TYPE_BUFFER_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    to_host.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_host.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_host.buffer = readback;
    to_host.size = VK_WHOLE_SIZE;
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 0, NULL, 1, &to_host, 0, NULL);
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait_idle(device, queue, command_buffer);

    print_hex_words(device, readback_memory, "result", WIDTH * HEIGHT);

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    PFN_vkDestroyShaderEXT destroy_shader =
        (PFN_vkDestroyShaderEXT)vkGetDeviceProcAddr(device, "vkDestroyShaderEXT");
    for (int k = 0; k < 3; ++k)
        if (shaders[k]) destroy_shader(device, shaders[k], NULL);
    for (int k = 0; k < 3; ++k) vkDestroyShaderModule(device, modules[k], NULL);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    destroy_image_and_view(device, image, image_memory, view);
    VkBuffer buffers[3] = {shape, indirect, readback};
    VkDeviceMemory memories[3] = {shape_memory, indirect_memory, readback_memory};
    destroy_host_buffers(device, 3, buffers, memories);
    destroy_host_buffers(device, PALETTES, palettes, palette_memory);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
