/* Pipelines linked from pipeline libraries, as engines that compile parts ahead build them
 * (knows nothing of gpuav).
 *
 *   pipeline_library_app graphics VERT.spv FRAG.spv PALETTE CORNER WORD [OPTION...]
 *   pipeline_library_app ray-tracing RGEN.spv RCALL.spv MATERIAL PIXEL WORD [wide]
 *
 * graphics: a WIDTH x HEIGHT R32_UINT image drawn with one triangle by a pipeline linked from
 * four graphics pipeline libraries (vertex input, pre-rasterization shaders, fragment shader,
 * fragment output; VK_EXT_graphics_pipeline_library with dynamic rendering). Set 0 binding 0:
 * the triangle's three corners (a storage buffer of vec2, "corners") for the vertex shader; set 1
 * binding 0: PALETTES storage buffers of PALETTE_WORDS words k * 100 + word ("palette k") for
 * the fragment shader. OPTION "lto": libraries kept for link-time optimization, the link
 * optimized; "independent": the libraries' layouts have only their own stage's set
 * (VK_PIPELINE_LAYOUT_CREATE_INDEPENDENT_SETS_BIT_EXT, the fragment shader's set 0 null);
 * "vertices3" or "vertices2": the vertex input library also declares a vec2 attribute (which
 * the vertex shader does not read) fed from a vertex buffer of that many corners, so that the
 * draw's three vertices fit in it or not.
 *
 * ray-tracing: a WIDTH x HEIGHT launch whose ray generation shader lives in a library
 * (VK_KHR_pipeline_library) and whose callable shader is the linked pipeline's own. Set 0
 * binding 0: the image (a storage buffer of WIDTH * HEIGHT words, "image"), binding 1:
 * PALETTES storage buffers as above ("material k"), binding 2: the parameters.
 *
 * The parameters are three 32-bit words (PALETTE or MATERIAL, CORNER or PIXEL, WORD), for the
 * shaders to misuse: push constants for the graphics pipeline, a storage buffer for the
 * ray-tracing one (lavapipe's linked ray-tracing pipelines read push constants as zero). "wide": every layout has MAX_SETS sets (the app's own empty ones
 * after its real ones), leaving no set free for a layer. Prints "message" lines
 * (vk_app_common.h), then "result" and the image's words. */
#include <string.h>

#include "vk_graphics_common.h"
#include "vk_ray_tracing_common.h"

#define WIDTH 4
#define HEIGHT 4
#define PALETTES 2
#define PALETTE_WORDS 4
#define MAX_SETS 8

typedef AddressedBuffer Buffer;

typedef struct {
    VkDevice device;
    VkQueue queue;
    VkPhysicalDeviceMemoryProperties memory;
    VkCommandPool pool;
    VkDescriptorSetLayout empty_set_layout;
    int wide;
} App;

typedef struct {
    uint32_t first;
    int32_t second;
    int32_t word;
} Push;

static Buffer make_buffer(App *app, VkDeviceSize size, VkBufferUsageFlags usage) {
    return create_addressed_buffer(app->device, &app->memory, vkGetBufferDeviceAddress, size,
                                   usage);
}

static void free_buffer(App *app, Buffer *buffer) {
    destroy_addressed_buffer(app->device, buffer);
}

/* The PALETTES buffers of words k * 100 + word, named "<prefix> k". */
static void make_palettes(App *app, const char *prefix, Buffer *palettes) {
    for (uint32_t k = 0; k < PALETTES; ++k) {
        palettes[k] = make_buffer(app, 4 * PALETTE_WORDS, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        for (uint32_t word = 0; word < PALETTE_WORDS; ++word)
            ((uint32_t *)palettes[k].mapped)[word] = k * 100 + word;
        char name[32];
        snprintf(name, sizeof(name), "%s %u", prefix, k);
        name_buffer(app->device, palettes[k].buffer, name);
    }
}

static VkDescriptorSetLayout make_set_layout(App *app, uint32_t count,
                                             const VkDescriptorSetLayoutBinding *bindings) {
    VkDescriptorSetLayoutCreateInfo info = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    info.bindingCount = count;
    info.pBindings = bindings;
    VkDescriptorSetLayout made;
    CHECK(vkCreateDescriptorSetLayout(app->device, &info, NULL, &made));
    return made;
}

/* A layout of `count` sets (null entries allowed with `flags` independent sets), widened to
 * MAX_SETS with empty sets under "wide"; push constants for `stages`. */
static VkPipelineLayout make_layout(App *app, uint32_t count, const VkDescriptorSetLayout *sets,
                                    VkPipelineLayoutCreateFlags flags,
                                    VkShaderStageFlags stages) {
    VkDescriptorSetLayout all[MAX_SETS];
    uint32_t total = app->wide ? MAX_SETS : count;
    for (uint32_t k = 0; k < total; ++k) all[k] = k < count ? sets[k] : app->empty_set_layout;
    VkPushConstantRange push = {stages, 0, sizeof(Push)};
    VkPipelineLayoutCreateInfo info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    info.flags = flags;
    info.setLayoutCount = total;
    info.pSetLayouts = all;
    info.pushConstantRangeCount = 1;
    info.pPushConstantRanges = &push;
    VkPipelineLayout made;
    CHECK(vkCreatePipelineLayout(app->device, &info, NULL, &made));
    return made;
}

static void make_set_binding(App *app, VkDescriptorSet set, uint32_t binding, uint32_t count,
                             const Buffer *buffers) {
    VkDescriptorBufferInfo infos[PALETTES];
    for (uint32_t k = 0; k < count; ++k)
        infos[k] = (VkDescriptorBufferInfo){buffers[k].buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set;
    write.dstBinding = binding;
    write.descriptorCount = count;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = infos;
    vkUpdateDescriptorSets(app->device, 1, &write, 0, NULL);
}

/* One set of `set_layout` from `pool`, binding `binding` written with `count` buffers. */
static VkDescriptorSet make_set(App *app, VkDescriptorPool pool, VkDescriptorSetLayout set_layout,
                                uint32_t binding, uint32_t count, const Buffer *buffers) {
    VkDescriptorSetAllocateInfo allocate = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout;
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(app->device, &allocate, &set));
    make_set_binding(app, set, binding, count, buffers);
    return set;
}

static VkDescriptorPool make_pool(App *app, uint32_t sets, uint32_t buffers) {
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, buffers};
    VkDescriptorPoolCreateInfo info = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = sets;
    info.poolSizeCount = 1;
    info.pPoolSizes = &size;
    VkDescriptorPool pool;
    CHECK(vkCreateDescriptorPool(app->device, &info, NULL, &pool));
    return pool;
}

static VkPipelineShaderStageCreateInfo stage_of(VkShaderStageFlagBits stage,
                                                VkShaderModule module) {
    VkPipelineShaderStageCreateInfo info = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
    info.stage = stage;
    info.module = module;
    info.pName = "main";
    return info;
}

/* Submit, wait for the fence, then for the queue (the Khronos layer reads its GPU-AV results
 * back on an idle wait). */
static void submit(App *app, VkCommandBuffer command_buffer) {
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait(app->device, app->queue, command_buffer);
    CHECK(vkQueueWaitIdle(app->queue));
    vkDestroyFence(app->device, fence, NULL);
}

static void print_result(const uint32_t *words) {
    printf("result");
    for (int k = 0; k < WIDTH * HEIGHT; ++k) printf(" %u", words[k]);
    printf("\n");
}

/* -- graphics --------------------------------------------------------------------------- */

typedef struct {
    int lto;
    int independent;
    uint32_t vertices; /* in the vertex buffer; 0: none */
} GraphicsOptions;

static VkPipeline make_library(App *app, VkGraphicsPipelineCreateInfo *info,
                               VkGraphicsPipelineLibraryFlagsEXT parts, void *next,
                               int lto) {
    VkGraphicsPipelineLibraryCreateInfoEXT library = {
        VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT, next};
    library.flags = parts;
    info->pNext = &library;
    info->flags = VK_PIPELINE_CREATE_LIBRARY_BIT_KHR |
                  (lto ? VK_PIPELINE_CREATE_RETAIN_LINK_TIME_OPTIMIZATION_INFO_BIT_EXT : 0);
    VkPipeline made;
    CHECK(vkCreateGraphicsPipelines(app->device, VK_NULL_HANDLE, 1, info, NULL, &made));
    return made;
}

static void run_graphics(App *app, char **argv, Push push, GraphicsOptions options) {
    VkDevice device = app->device;
    const float corners[6] = {-1.0f, -1.0f, 3.0f, -1.0f, -1.0f, 3.0f};
    Buffer corner_buffer = make_buffer(app, sizeof(corners), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    memcpy(corner_buffer.mapped, corners, sizeof(corners));
    name_buffer(device, corner_buffer.buffer, "corners");
    Buffer palettes[PALETTES];
    make_palettes(app, "palette", palettes);

    VkDescriptorSetLayoutBinding vertex_binding = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                                   VK_SHADER_STAGE_VERTEX_BIT, NULL};
    VkDescriptorSetLayoutBinding fragment_binding = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                     PALETTES, VK_SHADER_STAGE_FRAGMENT_BIT, NULL};
    VkDescriptorSetLayout set_layouts[2] = {make_set_layout(app, 1, &vertex_binding),
                                            make_set_layout(app, 1, &fragment_binding)};
    VkShaderStageFlags stages = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
    VkPipelineLayoutCreateFlags independent =
        options.independent ? VK_PIPELINE_LAYOUT_CREATE_INDEPENDENT_SETS_BIT_EXT : 0;
    VkPipelineLayout layout = make_layout(app, 2, set_layouts, independent, stages);
    VkPipelineLayout vertex_layout = layout, fragment_layout = layout;
    if (options.independent) {
        VkDescriptorSetLayout fragment_sets[2] = {VK_NULL_HANDLE, set_layouts[1]};
        vertex_layout = make_layout(app, 1, set_layouts, independent, stages);
        fragment_layout = make_layout(app, 2, fragment_sets, independent, stages);
    }
    VkDescriptorPool descriptor_pool = make_pool(app, 2, 1 + PALETTES);
    VkDescriptorSet sets[2] = {make_set(app, descriptor_pool, set_layouts[0], 0, 1, &corner_buffer),
                               make_set(app, descriptor_pool, set_layouts[1], 0, PALETTES,
                                        palettes)};

    /* The target image and where it is copied to. */
    VkFormat format = VK_FORMAT_R32_UINT;
    VkImage image;
    VkDeviceMemory image_memory;
    VkImageView view;
    create_image_and_view(device, &app->memory, format, WIDTH, HEIGHT,
                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, 0,
                          &image, &image_memory, &view);
    Buffer readback = make_buffer(app, 4 * WIDTH * HEIGHT, VK_BUFFER_USAGE_TRANSFER_DST_BIT);

    /* The four libraries, then the link. */
    VkShaderModule vertex = load_shader_module(device, argv[2]);
    VkShaderModule fragment = load_shader_module(device, argv[3]);
    VkPipelineRenderingCreateInfo rendering = {VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachmentFormats = &format;
    DrawState state;
    init_draw_state(&state, WIDTH, HEIGHT, 1, VK_COLOR_COMPONENT_R_BIT);
    VkVertexInputBindingDescription vertex_binding_description = {0, 8,
                                                                  VK_VERTEX_INPUT_RATE_VERTEX};
    VkVertexInputAttributeDescription vertex_attribute = {0, 0, VK_FORMAT_R32G32_SFLOAT, 0};
    Buffer vertex_buffer = {0};
    if (options.vertices) {
        state.vertex_input.vertexBindingDescriptionCount = 1;
        state.vertex_input.pVertexBindingDescriptions = &vertex_binding_description;
        state.vertex_input.vertexAttributeDescriptionCount = 1;
        state.vertex_input.pVertexAttributeDescriptions = &vertex_attribute;
        vertex_buffer = make_buffer(app, 8 * options.vertices, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT);
        memcpy(vertex_buffer.mapped, corners, 8 * options.vertices);
        name_buffer(device, vertex_buffer.buffer, "vertices");
    }
    VkPipelineDepthStencilStateCreateInfo depth_stencil = {
        VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO};

    VkPipeline libraries[4];
    VkGraphicsPipelineCreateInfo info = {VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    info.pVertexInputState = &state.vertex_input;
    info.pInputAssemblyState = &state.assembly;
    libraries[0] = make_library(app, &info,
                                VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT, NULL,
                                options.lto);
    info = (VkGraphicsPipelineCreateInfo){VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    VkPipelineShaderStageCreateInfo vertex_stage = stage_of(VK_SHADER_STAGE_VERTEX_BIT, vertex);
    info.stageCount = 1;
    info.pStages = &vertex_stage;
    info.pViewportState = &state.viewport_state;
    info.pRasterizationState = &state.raster;
    info.layout = vertex_layout;
    libraries[1] = make_library(app, &info,
                                VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT,
                                &rendering, options.lto);
    info = (VkGraphicsPipelineCreateInfo){VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    VkPipelineShaderStageCreateInfo fragment_stage =
        stage_of(VK_SHADER_STAGE_FRAGMENT_BIT, fragment);
    info.stageCount = 1;
    info.pStages = &fragment_stage;
    info.pMultisampleState = &state.multisample;
    info.pDepthStencilState = &depth_stencil;
    info.layout = fragment_layout;
    libraries[2] = make_library(app, &info, VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT,
                                &rendering, options.lto);
    info = (VkGraphicsPipelineCreateInfo){VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    info.pMultisampleState = &state.multisample;
    info.pColorBlendState = &state.blend;
    libraries[3] = make_library(app, &info,
                                VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT,
                                &rendering, options.lto);
    VkPipelineLibraryCreateInfoKHR link = {VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR};
    link.libraryCount = 4;
    link.pLibraries = libraries;
    info = (VkGraphicsPipelineCreateInfo){VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, &link};
    info.flags = options.lto ? VK_PIPELINE_CREATE_LINK_TIME_OPTIMIZATION_BIT_EXT : 0;
    info.layout = layout;
    VkPipeline pipeline;
    CHECK(vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));

    VkCommandBuffer command_buffer = begin_command_buffer(device, app->pool, 0);
    color_image_barrier(command_buffer, image, VK_IMAGE_LAYOUT_UNDEFINED,
                        VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, 0,
                        VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                        VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT);
    VkClearValue clear = {.color.uint32 = {7}};
    begin_color_rendering(command_buffer, view, WIDTH, HEIGHT, clear);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, 2, sets,
                            0, NULL);
    vkCmdPushConstants(command_buffer, layout, stages, 0, sizeof(push), &push);
    VkDeviceSize vertex_offset = 0;
    if (options.vertices)
        vkCmdBindVertexBuffers(command_buffer, 0, 1, &vertex_buffer.buffer, &vertex_offset);
    vkCmdDraw(command_buffer, 3, 1, 0, 0);
    vkCmdEndRendering(command_buffer);
    color_image_barrier(command_buffer, image, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                        VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                        VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                        VK_PIPELINE_STAGE_TRANSFER_BIT);
    copy_color_image_to_buffer(command_buffer, image, WIDTH, HEIGHT, readback.buffer);
    transfer_to_host_barrier(command_buffer);
    submit(app, command_buffer);
    print_result(readback.mapped);

    /* The libraries go first: a linked pipeline does not need them any more. */
    for (int k = 0; k < 4; ++k) vkDestroyPipeline(device, libraries[k], NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, vertex, NULL);
    vkDestroyShaderModule(device, fragment, NULL);
    destroy_image_and_view(device, image, image_memory, view);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    if (options.independent) {
        vkDestroyPipelineLayout(device, vertex_layout, NULL);
        vkDestroyPipelineLayout(device, fragment_layout, NULL);
    }
    vkDestroyPipelineLayout(device, layout, NULL);
    for (int k = 0; k < 2; ++k) vkDestroyDescriptorSetLayout(device, set_layouts[k], NULL);
    free_buffer(app, &readback);
    free_buffer(app, &corner_buffer);
    if (options.vertices) free_buffer(app, &vertex_buffer);
    for (int k = 0; k < PALETTES; ++k) free_buffer(app, &palettes[k]);
}

/* -- ray tracing ------------------------------------------------------------------------- */

static VkRayTracingShaderGroupCreateInfoKHR general_group(uint32_t shader) {
    VkRayTracingShaderGroupCreateInfoKHR group = {
        VK_STRUCTURE_TYPE_RAY_TRACING_SHADER_GROUP_CREATE_INFO_KHR};
    group.type = VK_RAY_TRACING_SHADER_GROUP_TYPE_GENERAL_KHR;
    group.generalShader = shader;
    group.closestHitShader = VK_SHADER_UNUSED_KHR;
    group.anyHitShader = VK_SHADER_UNUSED_KHR;
    group.intersectionShader = VK_SHADER_UNUSED_KHR;
    return group;
}

static void run_ray_tracing(App *app, VkPhysicalDevice physical, char **argv, Push push) {
    VkDevice device = app->device;
    PFN_vkCreateRayTracingPipelinesKHR create_pipelines =
        (PFN_vkCreateRayTracingPipelinesKHR)vkGetDeviceProcAddr(device,
                                                                "vkCreateRayTracingPipelinesKHR");
    PFN_vkGetRayTracingShaderGroupHandlesKHR get_handles =
        (PFN_vkGetRayTracingShaderGroupHandlesKHR)vkGetDeviceProcAddr(
            device, "vkGetRayTracingShaderGroupHandlesKHR");
    PFN_vkCmdTraceRaysKHR trace =
        (PFN_vkCmdTraceRaysKHR)vkGetDeviceProcAddr(device, "vkCmdTraceRaysKHR");
    Buffer image = make_buffer(app, 4 * WIDTH * HEIGHT, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    name_buffer(device, image.buffer, "image");
    Buffer materials[PALETTES];
    make_palettes(app, "material", materials);
    VkShaderStageFlags stages = VK_SHADER_STAGE_RAYGEN_BIT_KHR | VK_SHADER_STAGE_CALLABLE_BIT_KHR;
    Buffer parameters = make_buffer(app, sizeof(push), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
    memcpy(parameters.mapped, &push, sizeof(push));
    VkDescriptorSetLayoutBinding bindings[3] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, stages, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, PALETTES, stages, NULL},
        {2, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, stages, NULL},
    };
    VkDescriptorSetLayout set_layout = make_set_layout(app, 3, bindings);
    VkPipelineLayout layout = make_layout(app, 1, &set_layout, 0, stages);
    VkDescriptorPool descriptor_pool = make_pool(app, 1, 2 + PALETTES);
    VkDescriptorSet set = make_set(app, descriptor_pool, set_layout, 0, 1, &image);
    make_set_binding(app, set, 2, 1, &parameters);
    make_set_binding(app, set, 1, PALETTES, materials);

    /* The library holds the ray generation shader; the link adds the callable one, whose
     * group comes first (a linked pipeline's own groups precede its libraries'). */
    VkShaderModule raygen_module = load_shader_module(device, argv[2]);
    VkShaderModule callable_module = load_shader_module(device, argv[3]);
    VkRayTracingPipelineInterfaceCreateInfoKHR interface = {
        VK_STRUCTURE_TYPE_RAY_TRACING_PIPELINE_INTERFACE_CREATE_INFO_KHR};
    interface.maxPipelineRayPayloadSize = 4;
    interface.maxPipelineRayHitAttributeSize = 8;
    VkPipelineShaderStageCreateInfo raygen_stage =
        stage_of(VK_SHADER_STAGE_RAYGEN_BIT_KHR, raygen_module);
    VkRayTracingShaderGroupCreateInfoKHR raygen_group = general_group(0);
    VkRayTracingPipelineCreateInfoKHR info = {
        VK_STRUCTURE_TYPE_RAY_TRACING_PIPELINE_CREATE_INFO_KHR};
    info.flags = VK_PIPELINE_CREATE_LIBRARY_BIT_KHR;
    info.stageCount = 1;
    info.pStages = &raygen_stage;
    info.groupCount = 1;
    info.pGroups = &raygen_group;
    info.maxPipelineRayRecursionDepth = 1;
    info.pLibraryInterface = &interface;
    info.layout = layout;
    VkPipeline library;
    CHECK(create_pipelines(device, VK_NULL_HANDLE, VK_NULL_HANDLE, 1, &info, NULL, &library));
    VkPipelineShaderStageCreateInfo callable_stage =
        stage_of(VK_SHADER_STAGE_CALLABLE_BIT_KHR, callable_module);
    VkRayTracingShaderGroupCreateInfoKHR callable_group = general_group(0);
    VkPipelineLibraryCreateInfoKHR link = {VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR};
    link.libraryCount = 1;
    link.pLibraries = &library;
    info.flags = 0;
    info.pStages = &callable_stage;
    info.pGroups = &callable_group;
    info.pLibraryInfo = &link;
    VkPipeline pipeline;
    CHECK(create_pipelines(device, VK_NULL_HANDLE, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));

    /* The shader binding table: the ray generation record (group 1), the callable (group 0). */
    VkPhysicalDeviceRayTracingPipelinePropertiesKHR properties = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_PROPERTIES_KHR};
    VkPhysicalDeviceProperties2 all_properties = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                                  &properties};
    vkGetPhysicalDeviceProperties2(physical, &all_properties);
    uint32_t handle_size = properties.shaderGroupHandleSize;
    VkDeviceSize stride = align_up(align_up(handle_size, properties.shaderGroupHandleAlignment),
                                   properties.shaderGroupBaseAlignment);
    uint8_t handles[2 * 64];
    if (handle_size > 64) exit(2);
    CHECK(get_handles(device, pipeline, 0, 2, 2 * handle_size, handles));
    Buffer table = make_buffer(app, 2 * stride + properties.shaderGroupBaseAlignment,
                               VK_BUFFER_USAGE_SHADER_BINDING_TABLE_BIT_KHR);
    VkDeviceAddress start = align_up(table.address, properties.shaderGroupBaseAlignment);
    uint8_t *records = (uint8_t *)table.mapped + (start - table.address);
    memcpy(records, handles + handle_size, handle_size);
    memcpy(records + stride, handles, handle_size);
    VkStridedDeviceAddressRegionKHR raygen = {start, stride, stride};
    VkStridedDeviceAddressRegionKHR empty = {0, 0, 0};
    VkStridedDeviceAddressRegionKHR callable = {start + stride, stride, stride};

    VkCommandBuffer command_buffer = begin_command_buffer(device, app->pool, 0);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR, pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_RAY_TRACING_KHR, layout, 0, 1,
                            &set, 0, NULL);
    trace(command_buffer, &raygen, &empty, &empty, &callable, WIDTH, HEIGHT, 1);
    submit(app, command_buffer);
    print_result(image.mapped);

    vkDestroyPipeline(device, library, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, raygen_module, NULL);
    vkDestroyShaderModule(device, callable_module, NULL);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    free_buffer(app, &table);
    free_buffer(app, &parameters);
    free_buffer(app, &image);
    for (int k = 0; k < PALETTES; ++k) free_buffer(app, &materials[k]);
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: %s graphics|ray-tracing SHADER SHADER A B WORD [OPTION...]\n",
                argv[0]);
        return 2;
    }
    int ray_tracing = !strcmp(argv[1], "ray-tracing");
    Push push = {(uint32_t)strtoul(argv[4], NULL, 0), (int32_t)strtol(argv[5], NULL, 0),
                 (int32_t)strtol(argv[6], NULL, 0)};
    App app = {0};
    GraphicsOptions options = {0};
    for (int k = 7; k < argc; ++k) {
        options.lto |= !strcmp(argv[k], "lto");
        options.independent |= !strcmp(argv[k], "independent");
        app.wide |= !strcmp(argv[k], "wide");
        if (!strcmp(argv[k], "vertices2") || !strcmp(argv[k], "vertices3"))
            options.vertices = (uint32_t)(argv[k][8] - '0');
    }
    VkDebugUtilsMessengerEXT messenger;
    VkInstance instance = create_printing_instance("pipeline_library_app", VK_API_VERSION_1_3,
                                                   INFO_AND_ABOVE, &messenger);
    VkPhysicalDevice physical = first_physical_device(instance);
    vkGetPhysicalDeviceMemoryProperties(physical, &app.memory);

    VkPhysicalDeviceRayTracingPipelineFeaturesKHR ray_tracing_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_FEATURES_KHR};
    ray_tracing_features.rayTracingPipeline = VK_TRUE;
    VkPhysicalDeviceGraphicsPipelineLibraryFeaturesEXT library_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_GRAPHICS_PIPELINE_LIBRARY_FEATURES_EXT};
    library_features.graphicsPipelineLibrary = VK_TRUE;
    VkPhysicalDeviceVulkan13Features features13 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
        ray_tracing ? (void *)&ray_tracing_features : (void *)&library_features};
    features13.dynamicRendering = VK_TRUE;
    VkPhysicalDeviceVulkan12Features features12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &features13};
    features12.bufferDeviceAddress = VK_TRUE;
    features12.descriptorIndexing = VK_TRUE;
    features12.shaderStorageBufferArrayNonUniformIndexing = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          &features12};
    features.features.vertexPipelineStoresAndAtomics = VK_TRUE;
    features.features.fragmentStoresAndAtomics = VK_TRUE;
    const char *graphics_extensions[] = {VK_KHR_PIPELINE_LIBRARY_EXTENSION_NAME,
                                         VK_EXT_GRAPHICS_PIPELINE_LIBRARY_EXTENSION_NAME};
    const char *ray_tracing_extensions[] = {
        VK_KHR_PIPELINE_LIBRARY_EXTENSION_NAME, VK_KHR_ACCELERATION_STRUCTURE_EXTENSION_NAME,
        VK_KHR_RAY_TRACING_PIPELINE_EXTENSION_NAME,
        VK_KHR_DEFERRED_HOST_OPERATIONS_EXTENSION_NAME};
    app.device = ray_tracing
                     ? create_device(physical, &features, 4, ray_tracing_extensions, &app.queue)
                     : create_device(physical, &features, 2, graphics_extensions, &app.queue);
    app.pool = create_command_pool(app.device);
    app.empty_set_layout = make_set_layout(&app, 0, NULL);

    if (ray_tracing)
        run_ray_tracing(&app, physical, argv, push);
    else
        run_graphics(&app, argv, push, options);

    vkDestroyDescriptorSetLayout(app.device, app.empty_set_layout, NULL);
    vkDestroyCommandPool(app.device, app.pool, NULL);
    destroy_device_and_instance(app.device, instance, messenger);
    return 0;
}
