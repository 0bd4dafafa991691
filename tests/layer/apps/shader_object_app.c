/* Shader objects (VK_EXT_shader_object) with no pipeline at all (knows nothing of gpuav): a
 * compute shader object writes four words of an output buffer from a bindless array of
 * palettes (one vkCmdDispatch, action 0; its specialization constant 0, the lane the push
 * constants steer, is 2), then vertex and fragment shader objects draw a
 * full-screen triangle into a small image with corners from a shape buffer and colors from
 * the palettes (one vkCmdDraw, action 1).
 *
 *   shader_object_app COMP.spv VERT.spv FRAG.spv PALETTE OFFSET FRAGMENT_PALETTE CORNER [MODE]
 *
 * Set 0: binding 0 the shape (a storage buffer of exactly three vec2 corners), binding 1 the
 * output (OUTPUT_WORDS words), binding 2 the palettes (a variable-count array of storage
 * buffers, room for 8, PALETTES allocated, each of PALETTE_WORDS words). Every shader object is
 * created with that set layout and the push-constant range (compute, vertex and fragment,
 * bytes [0, 16)) of the app's one pipeline layout, through which the app binds the set and
 * pushes (uint PALETTE, int OFFSET, uint FRAGMENT_PALETTE, int CORNER) for the shaders to
 * misuse. MODE: "separate" (the default: each shader created alone), "linked" (vertex and
 * fragment created in one call with VK_SHADER_CREATE_LINK_STAGE_BIT_EXT), "binary" (each
 * shader's vkGetShaderBinaryDataEXT is created again as binary code, and those are bound),
 * "linked-binary" (linked, then made again from the binaries, still linked),
 * "binary-save=PATH" (as "binary", and the binaries are written to PATH), "binary-load=PATH"
 * (the shader objects are made from the binaries a "binary-save" run wrote) or "whole-range"
 * (the push-constant range, of the layout and the shader objects, is all of
 * maxPushConstantsSize).
 * Prints "message" lines (vk_app_common.h), then "output" with the output words and "result"
 * with the image's WIDTH x HEIGHT RGBA8 words. */
#include <string.h>

#include "shader_object_ext.h"
#include "vk_graphics_common.h"

#define WIDTH 4
#define HEIGHT 4
#define PALETTES 2
#define PALETTE_CAPACITY 8
#define PALETTE_WORDS 4
#define OUTPUT_WORDS 4
#define ALL_STAGES (VK_SHADER_STAGE_COMPUTE_BIT | VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT)

#define DEVICE_FUNCTION(device, name) ((PFN_##name)vkGetDeviceProcAddr(device, #name))

static PFN_vkCreateShadersEXT create_shaders;
static PFN_vkGetShaderBinaryDataEXT get_shader_binary;

/* `count` shader objects of `infos` made again from their binaries (MODE "binary"), which
 * are also written to `save` (a path, or NULL): each as a uint64_t size and its bytes. */
static void recreate_from_binaries(VkDevice device, uint32_t count, VkShaderCreateInfoEXT *infos,
                                   VkShaderEXT *shaders, const char *save) {
    PFN_vkDestroyShaderEXT destroy_shader = DEVICE_FUNCTION(device, vkDestroyShaderEXT);
    FILE *file = save ? fopen(save, "wb") : NULL;
    if (save && !file) {
        perror(save);
        exit(2);
    }
    void *binaries[3];
    for (uint32_t k = 0; k < count; ++k) {
        size_t size = 0;
        CHECK(get_shader_binary(device, shaders[k], &size, NULL));
        binaries[k] = malloc(size);
        CHECK(get_shader_binary(device, shaders[k], &size, binaries[k]));
        destroy_shader(device, shaders[k], NULL);
        infos[k].codeType = VK_SHADER_CODE_TYPE_BINARY_EXT;
        infos[k].codeSize = size;
        infos[k].pCode = binaries[k];
        infos[k].pSpecializationInfo = NULL; /* binary code carries its own */
        uint64_t length = size;
        if (file && (fwrite(&length, 8, 1, file) != 1 || fwrite(binaries[k], 1, size, file) != size))
            exit(2);
    }
    if (file) fclose(file);
    /* Compute alone, vertex and fragment together (linked again if they were). */
    CHECK(create_shaders(device, 1, &infos[0], NULL, &shaders[0]));
    CHECK(create_shaders(device, count - 1, &infos[1], NULL, &shaders[1]));
    for (uint32_t k = 0; k < count; ++k) free(binaries[k]);
}

/* `count` shader objects of `infos` made from the binaries a "binary-save" run wrote to
 * `path` (MODE "binary-load"); no SPIR-V shader object is made. */
static void create_from_saved_binaries(VkDevice device, uint32_t count,
                                       VkShaderCreateInfoEXT *infos, VkShaderEXT *shaders,
                                       const char *path) {
    size_t size;
    uint8_t *saved = read_whole_file(path, &size), *at = saved;
    for (uint32_t k = 0; k < count; ++k) {
        uint64_t length;
        memcpy(&length, at, 8);
        infos[k].codeType = VK_SHADER_CODE_TYPE_BINARY_EXT;
        infos[k].codeSize = (size_t)length;
        infos[k].pCode = at + 8;
        infos[k].pSpecializationInfo = NULL;
        at += 8 + length;
    }
    CHECK(create_shaders(device, count, infos, NULL, shaders));
    free(saved);
}

int main(int argc, char **argv) {
    if (argc < 8) {
        fprintf(stderr,
                "usage: %s COMP VERT FRAG PALETTE OFFSET FRAGMENT_PALETTE CORNER [MODE]\n",
                argv[0]);
        return 2;
    }
    struct {
        uint32_t palette;
        int32_t offset;
        uint32_t fragment_palette;
        int32_t corner;
    } push = {(uint32_t)strtoul(argv[4], NULL, 0), (int32_t)strtol(argv[5], NULL, 0),
              (uint32_t)strtoul(argv[6], NULL, 0), (int32_t)strtol(argv[7], NULL, 0)};
    const char *mode = argc > 8 ? argv[8] : "separate";
    VkDebugUtilsMessengerEXT messenger;
    VkInstance instance = create_printing_instance("shader_object_app", VK_API_VERSION_1_3,
                                                   INFO_AND_ABOVE, &messenger);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory);

    VkPhysicalDeviceShaderObjectFeaturesEXT object_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_OBJECT_FEATURES_EXT};
    object_features.shaderObject = VK_TRUE;
    VkPhysicalDeviceVulkan13Features features13 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES, &object_features};
    features13.dynamicRendering = VK_TRUE;
    VkPhysicalDeviceVulkan12Features features12 = storage_buffer_array_features(&features13);
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          &features12};
    const char *device_extensions[] = {VK_EXT_SHADER_OBJECT_EXTENSION_NAME};
    VkQueue queue;
    VkDevice device = create_device(physical, &features, 1, device_extensions, &queue);
    VkCommandPool pool = create_command_pool(device);
    create_shaders = DEVICE_FUNCTION(device, vkCreateShadersEXT);
    get_shader_binary = DEVICE_FUNCTION(device, vkGetShaderBinaryDataEXT);
    PFN_vkDestroyShaderEXT destroy_shader = DEVICE_FUNCTION(device, vkDestroyShaderEXT);
    PFN_vkCmdBindShadersEXT bind_shaders = DEVICE_FUNCTION(device, vkCmdBindShadersEXT);

    /* The palettes, the shape, the output and the image's copy. */
    VkBuffer palettes[PALETTES];
    VkDeviceMemory palette_memory[PALETTES];
    for (uint32_t k = 0; k < PALETTES; ++k) {
        uint32_t words[PALETTE_WORDS];
        for (uint32_t j = 0; j < PALETTE_WORDS; ++j)
            words[j] = 0xFF000000u | ((0x30u + k * 0x80u + j * 0x20u) & 0xFFu) << (8 * (j % 3));
        char name[32];
        snprintf(name, sizeof(name), "palette %u", k);
        create_named_host_buffer(device, &memory, sizeof(words), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                                 words, name, &palettes[k], &palette_memory[k]);
    }
    const float corners[6] = {-1.0f, -1.0f, 3.0f, -1.0f, -1.0f, 3.0f};
    VkBuffer shape;
    VkDeviceMemory shape_memory;
    create_named_host_buffer(device, &memory, sizeof(corners), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                             corners, "shape", &shape, &shape_memory);
    const uint32_t no_output[OUTPUT_WORDS] = {0};
    VkBuffer output;
    VkDeviceMemory output_memory;
    create_named_host_buffer(device, &memory, sizeof(no_output), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
                             no_output, "output", &output, &output_memory);
    VkBuffer readback;
    VkDeviceMemory readback_memory;
    create_host_buffer(device, &memory, 4 * WIDTH * HEIGHT, VK_BUFFER_USAGE_TRANSFER_DST_BIT, NULL,
                       ~0u, NULL, &readback, &readback_memory);

    /* The image drawn into. */
    VkImage image;
    VkDeviceMemory image_memory;
    VkImageView view;
    create_image_and_view(device, &memory, VK_FORMAT_R8G8B8A8_UNORM, WIDTH, HEIGHT,
                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, 0,
                          &image, &image_memory, &view);

    /* Descriptors and the one pipeline layout. */
    /* Only the last binding may have a variable count: the palettes. */
    VkDescriptorSetLayoutBinding bindings[3] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, ALL_STAGES, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, ALL_STAGES, NULL},
        {2, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, PALETTE_CAPACITY, ALL_STAGES, NULL},
    };
    VkPushConstantRange push_range = {ALL_STAGES, 0, sizeof(push)};
    if (!strcmp(mode, "whole-range")) {
        VkPhysicalDeviceProperties properties;
        vkGetPhysicalDeviceProperties(physical, &properties);
        push_range.size = properties.limits.maxPushConstantsSize;
    }
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_variable_set_and_pipeline_layouts(device, 3, bindings, ALL_STAGES, push_range.size,
                                             &set_layout, &layout);
    VkDescriptorPoolSize pool_size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, PALETTE_CAPACITY + 2};
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set =
        allocate_one_variable_set(device, 1, &pool_size, PALETTES, set_layout, &descriptor_pool);
    VkDescriptorBufferInfo palette_infos[PALETTES];
    for (uint32_t k = 0; k < PALETTES; ++k)
        palette_infos[k] = (VkDescriptorBufferInfo){palettes[k], 0, VK_WHOLE_SIZE};
    VkDescriptorBufferInfo shape_info = {shape, 0, VK_WHOLE_SIZE};
    VkDescriptorBufferInfo output_info = {output, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet writes[3] = {
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 0, 0, 1,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &shape_info, NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 1, 0, 1,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &output_info, NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 2, 0, PALETTES,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, palette_infos, NULL},
    };
    vkUpdateDescriptorSets(device, 3, writes, 0, NULL);

    /* The shader objects: compute, vertex, fragment. */
    size_t sizes[3];
    void *codes[3];
    for (int k = 0; k < 3; ++k) codes[k] = read_whole_file(argv[1 + k], &sizes[k]);
    VkShaderCreateInfoEXT infos[3] = {
        spirv_shader_info(VK_SHADER_STAGE_COMPUTE_BIT, 0, codes[0], sizes[0], &set_layout,
                          &push_range),
        spirv_shader_info(VK_SHADER_STAGE_VERTEX_BIT, VK_SHADER_STAGE_FRAGMENT_BIT, codes[1],
                          sizes[1], &set_layout, &push_range),
        spirv_shader_info(VK_SHADER_STAGE_FRAGMENT_BIT, 0, codes[2], sizes[2], &set_layout,
                          &push_range),
    };
    /* The compute shader's chosen lane is a specialization constant. */
    uint32_t chosen_lane = 2;
    VkSpecializationMapEntry lane_entry = {0, 0, sizeof(chosen_lane)};
    VkSpecializationInfo specialization = {1, &lane_entry, sizeof(chosen_lane), &chosen_lane};
    infos[0].pSpecializationInfo = &specialization;
    VkShaderEXT shaders[3];
    if (!strcmp(mode, "linked") || !strcmp(mode, "linked-binary")) {
        infos[1].flags = infos[2].flags = VK_SHADER_CREATE_LINK_STAGE_BIT_EXT;
        CHECK(create_shaders(device, 1, &infos[0], NULL, &shaders[0]));
        CHECK(create_shaders(device, 2, &infos[1], NULL, &shaders[1]));
    } else if (!strncmp(mode, "binary-load=", 12)) {
        create_from_saved_binaries(device, 3, infos, shaders, mode + 12);
    } else {
        for (int k = 0; k < 3; ++k) CHECK(create_shaders(device, 1, &infos[k], NULL, &shaders[k]));
    }
    if (!strcmp(mode, "binary") || !strcmp(mode, "linked-binary"))
        recreate_from_binaries(device, 3, infos, shaders, NULL);
    if (!strncmp(mode, "binary-save=", 12))
        recreate_from_binaries(device, 3, infos, shaders, mode + 12);
    const char *shader_names[3] = {"palette.comp", "shape.vert", "color.frag"};
    for (int k = 0; k < 3; ++k)
        name_object(device, VK_OBJECT_TYPE_SHADER_EXT, (uint64_t)shaders[k], shader_names[k]);

    /* Dispatch, draw, then copy the image out. */
    VkCommandBuffer command_buffer = begin_command_buffer(device, pool, 0);
    VkShaderStageFlagBits compute_stage = VK_SHADER_STAGE_COMPUTE_BIT;
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                            NULL);
    vkCmdPushConstants(command_buffer, layout, ALL_STAGES, 0, sizeof(push), &push);
    bind_shaders(command_buffer, 1, &compute_stage, &shaders[0]);
    vkCmdDispatch(command_buffer, 1, 1, 1);
    color_image_barrier(command_buffer, image, VK_IMAGE_LAYOUT_UNDEFINED,
                        VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, 0,
                        VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                        VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT);
    begin_color_rendering(command_buffer, view, WIDTH, HEIGHT, (VkClearValue){{{0}}});
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, 1, &set,
                            0, NULL);
    VkShaderStageFlagBits graphics_stages[2] = {VK_SHADER_STAGE_VERTEX_BIT,
                                                VK_SHADER_STAGE_FRAGMENT_BIT};
    bind_shaders(command_buffer, 2, graphics_stages, &shaders[1]);
    /* Every piece of state a pipeline would have held is dynamic with shader objects. */
    VkViewport viewport = {0.0f, 0.0f, WIDTH, HEIGHT, 0.0f, 1.0f};
    VkRect2D scissor = {{0, 0}, {WIDTH, HEIGHT}};
    set_shader_object_draw_state(device, command_buffer, &viewport, &scissor);
    vkCmdSetPrimitiveTopology(command_buffer, VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST);
    vkCmdSetPrimitiveRestartEnable(command_buffer, VK_FALSE);
    DEVICE_FUNCTION(device, vkCmdSetVertexInputEXT)(command_buffer, 0, NULL, 0, NULL);
    vkCmdDraw(command_buffer, 3, 1, 0, 0);
    vkCmdEndRendering(command_buffer);
    color_image_barrier(command_buffer, image, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                        VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                        VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                        VK_PIPELINE_STAGE_TRANSFER_BIT);
    copy_color_image_to_buffer(command_buffer, image, WIDTH, HEIGHT, readback);
    VkMemoryBarrier to_host = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    to_host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_SHADER_WRITE_BIT;
    to_host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    vkCmdPipelineBarrier(command_buffer,
                         VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL, 0, NULL);
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait_idle(device, queue, command_buffer);

    print_hex_words(device, output_memory, "output", OUTPUT_WORDS);
    print_hex_words(device, readback_memory, "result", WIDTH * HEIGHT);

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    for (int k = 0; k < 3; ++k) {
        destroy_shader(device, shaders[k], NULL);
        free(codes[k]);
    }
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    destroy_image_and_view(device, image, image_memory, view);
    VkBuffer buffers[3] = {shape, output, readback};
    VkDeviceMemory memories[3] = {shape_memory, output_memory, readback_memory};
    destroy_host_buffers(device, 3, buffers, memories);
    destroy_host_buffers(device, PALETTES, palettes, palette_memory);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
