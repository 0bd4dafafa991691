/* wild_app's graphics scenarios, all with dynamic rendering (Vulkan 1.3): stripes drawn with
 * vkCmdDrawIndirectCount, a vertex-tessellation-geometry-fragment pipeline, multiview into a
 * two-layer image, a pipeline linked from a graphics pipeline library, vkCmdDrawMultiEXT, and
 * a mesh shader pipeline.
 * Each prints the hash of the read-back image. */
#include <string.h>

#include "wild.h"

enum { SIZE = 16, STRIPES = 4 };

typedef struct {
    const char *stages[5];
    uint32_t view_mask;
    int library;
    int indirect_count;
    int multi_draw;    /* vkCmdDrawMultiEXT (VK_EXT_multi_draw) */
    int mesh;          /* vkCmdDrawMeshTasksEXT (VK_EXT_mesh_shader) */
    int tinted;        /* set 0: the uniform buffer array of wild_index.tese and .geom */
    uint32_t bad_draw; /* for quad_reporting.frag */
} Recipe;

static VkShaderStageFlagBits stage_of(const char *name) {
    const char *dot = strrchr(name, '.');
    if (!strcmp(dot, ".vert")) return VK_SHADER_STAGE_VERTEX_BIT;
    if (!strcmp(dot, ".tesc")) return VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT;
    if (!strcmp(dot, ".tese")) return VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT;
    if (!strcmp(dot, ".geom")) return VK_SHADER_STAGE_GEOMETRY_BIT;
    if (!strcmp(dot, ".mesh")) return VK_SHADER_STAGE_MESH_BIT_EXT;
    return VK_SHADER_STAGE_FRAGMENT_BIT;
}

static VkPipeline make_pipeline(Context *ctx, VkPipelineLayout layout, const Recipe *recipe,
                                VkPipeline *libraries_out) {
    VkPipelineShaderStageCreateInfo stages[5];
    uint32_t count = 0;
    int tessellation = 0;
    for (; count < 5 && recipe->stages[count]; ++count) {
        VkPipelineShaderStageCreateInfo *stage = &stages[count];
        memset(stage, 0, sizeof *stage);
        stage->sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        stage->stage = stage_of(recipe->stages[count]);
        stage->module = load_module(ctx, recipe->stages[count]);
        stage->pName = "main";
        tessellation |= stage->stage == VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT;
    }
    VkPipelineVertexInputStateCreateInfo vertex_input = {
        VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkPipelineInputAssemblyStateCreateInfo assembly = {
        VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    assembly.topology = tessellation ? VK_PRIMITIVE_TOPOLOGY_PATCH_LIST
                                     : VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    VkPipelineTessellationStateCreateInfo tessellation_state = {
        VK_STRUCTURE_TYPE_PIPELINE_TESSELLATION_STATE_CREATE_INFO};
    tessellation_state.patchControlPoints = 3;
    VkPipelineViewportStateCreateInfo viewport = {
        VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    viewport.viewportCount = 1;
    viewport.scissorCount = 1;
    VkPipelineRasterizationStateCreateInfo raster = {
        VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    raster.cullMode = VK_CULL_MODE_NONE;
    raster.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo multisample = {
        VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineColorBlendAttachmentState attachment = {0};
    attachment.colorWriteMask = 0xF;
    VkPipelineColorBlendStateCreateInfo blend = {
        VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
    blend.attachmentCount = 1;
    blend.pAttachments = &attachment;
    VkDynamicState dynamic_states[2] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    VkPipelineDynamicStateCreateInfo dynamic = {
        VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
    dynamic.dynamicStateCount = 2;
    dynamic.pDynamicStates = dynamic_states;
    VkFormat format = VK_FORMAT_R8G8B8A8_UNORM;
    VkPipelineRenderingCreateInfo rendering = {VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
    rendering.viewMask = recipe->view_mask;
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachmentFormats = &format;
    VkGraphicsPipelineLibraryCreateInfoEXT library_info = {
        VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_LIBRARY_CREATE_INFO_EXT, &rendering};
    library_info.flags = VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT |
                         VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT |
                         VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT |
                         VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT;
    VkGraphicsPipelineCreateInfo info = {VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    info.pNext = recipe->library ? (void *)&library_info : (void *)&rendering;
    info.flags = recipe->library == 1 ? VK_PIPELINE_CREATE_LIBRARY_BIT_KHR : 0;
    /* maintenance5: the library bit in VkPipelineCreateFlags2CreateInfoKHR, which then
     * replaces flags */
    VkPipelineCreateFlags2CreateInfoKHR flags2 = {
        VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR, &library_info,
        VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR};
    if (recipe->library == 2) info.pNext = &flags2;
    info.stageCount = count;
    info.pStages = stages;
    info.pVertexInputState = &vertex_input;
    info.pInputAssemblyState = &assembly;
    info.pTessellationState = tessellation ? &tessellation_state : NULL;
    info.pViewportState = &viewport;
    info.pRasterizationState = &raster;
    info.pMultisampleState = &multisample;
    info.pColorBlendState = &blend;
    info.pDynamicState = &dynamic;
    info.layout = layout;
    info.basePipelineIndex = -1;
    VkPipeline pipeline;
    if (!recipe->library) {
        CHECK(vkCreateGraphicsPipelines(ctx->device, VK_NULL_HANDLE, 1, &info, allocator, &pipeline));
        libraries_out[0] = libraries_out[1] = VK_NULL_HANDLE;
    } else {
        /* vertex input and pre-rasterization, then fragment shader and output (a library
         * holding every part is not allowed: VUID-VkGraphicsPipelineCreateInfo-flags-06608) */
        library_info.flags = VK_GRAPHICS_PIPELINE_LIBRARY_VERTEX_INPUT_INTERFACE_BIT_EXT |
                             VK_GRAPHICS_PIPELINE_LIBRARY_PRE_RASTERIZATION_SHADERS_BIT_EXT;
        info.stageCount = count - 1;
        CHECK(vkCreateGraphicsPipelines(ctx->device, VK_NULL_HANDLE, 1, &info, allocator,
                                        &libraries_out[0]));
        library_info.flags = VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_SHADER_BIT_EXT |
                             VK_GRAPHICS_PIPELINE_LIBRARY_FRAGMENT_OUTPUT_INTERFACE_BIT_EXT;
        info.stageCount = 1;
        info.pStages = &stages[count - 1];
        CHECK(vkCreateGraphicsPipelines(ctx->device, VK_NULL_HANDLE, 1, &info, allocator,
                                        &libraries_out[1]));
        VkPipelineLibraryCreateInfoKHR link = {VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR};
        link.libraryCount = 2;
        link.pLibraries = libraries_out;
        VkGraphicsPipelineCreateInfo linked = {VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
                                               &link};
        linked.layout = layout;
        linked.basePipelineIndex = -1;
        CHECK(vkCreateGraphicsPipelines(ctx->device, VK_NULL_HANDLE, 1, &linked, allocator,
                                        &pipeline));
    }
    for (uint32_t i = 0; i < count; ++i) vkDestroyShaderModule(ctx->device, stages[i].module, allocator);
    return pipeline;
}

/* Set 0 of the tinted pipelines: two uniform buffers of vec4(1), one buffer behind both. */
typedef struct {
    VkDescriptorSetLayout layout;
    VkDescriptorPool pool;
    VkDescriptorSet set;
    Buffer buffer;
} Tints;

static void make_tints(Context *ctx, Tints *t) {
    VkDescriptorSetLayoutBinding binding = {
        0, VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 2,
        VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT | VK_SHADER_STAGE_GEOMETRY_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo info = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    info.bindingCount = 1;
    info.pBindings = &binding;
    CHECK(vkCreateDescriptorSetLayout(ctx->device, &info, allocator, &t->layout));
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, 2};
    VkDescriptorPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    CHECK(vkCreateDescriptorPool(ctx->device, &pool_info, allocator, &t->pool));
    VkDescriptorSetAllocateInfo allocate = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = t->pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &t->layout;
    CHECK(vkAllocateDescriptorSets(ctx->device, &allocate, &t->set));
    t->buffer = make_buffer(ctx, 16, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT);
    for (int i = 0; i < 4; ++i) ((float *)t->buffer.mapped)[i] = 1.0f;
    VkDescriptorBufferInfo infos[2] = {{t->buffer.buffer, 0, 16}, {t->buffer.buffer, 0, 16}};
    VkWriteDescriptorSet write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = t->set;
    write.descriptorCount = 2;
    write.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    write.pBufferInfo = infos;
    vkUpdateDescriptorSets(ctx->device, 1, &write, 0, NULL);
}

static void destroy_tints(Context *ctx, Tints *t) {
    if (!ctx->leak) {
        vkDestroyDescriptorPool(ctx->device, t->pool, allocator);
        vkDestroyDescriptorSetLayout(ctx->device, t->layout, allocator);
    }
    free_buffer(ctx, &t->buffer);
}

static void image_barrier(VkCommandBuffer cb, VkImage image, uint32_t layers,
                          VkImageLayout from, VkImageLayout to, VkAccessFlags source,
                          VkAccessFlags destination, VkPipelineStageFlags source_stage,
                          VkPipelineStageFlags destination_stage) {
    VkImageMemoryBarrier barrier = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    barrier.srcAccessMask = source;
    barrier.dstAccessMask = destination;
    barrier.oldLayout = from;
    barrier.newLayout = to;
    barrier.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    barrier.image = image;
    barrier.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers};
    vkCmdPipelineBarrier(cb, source_stage, destination_stage, 0, 0, NULL, 0, NULL, 1, &barrier);
}

static void render(Context *ctx, const char *label, const Recipe *recipe) {
    uint32_t layers = recipe->view_mask ? 2 : 1;
    VkImageCreateInfo image_info = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    image_info.imageType = VK_IMAGE_TYPE_2D;
    image_info.format = VK_FORMAT_R8G8B8A8_UNORM;
    image_info.extent = (VkExtent3D){SIZE, SIZE, 1};
    image_info.mipLevels = 1;
    image_info.arrayLayers = layers;
    image_info.samples = VK_SAMPLE_COUNT_1_BIT;
    image_info.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    VkImage image;
    CHECK(vkCreateImage(ctx->device, &image_info, allocator, &image));
    VkMemoryRequirements requirements;
    vkGetImageMemoryRequirements(ctx->device, image, &requirements);
    VkMemoryAllocateInfo allocate = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    while (!(requirements.memoryTypeBits & (1u << allocate.memoryTypeIndex)))
        ++allocate.memoryTypeIndex;
    VkDeviceMemory memory;
    CHECK(vkAllocateMemory(ctx->device, &allocate, allocator, &memory));
    CHECK(vkBindImageMemory(ctx->device, image, memory, 0));
    VkImageViewCreateInfo view_info = {VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view_info.image = image;
    view_info.viewType = layers > 1 ? VK_IMAGE_VIEW_TYPE_2D_ARRAY : VK_IMAGE_VIEW_TYPE_2D;
    view_info.format = image_info.format;
    view_info.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, layers};
    VkImageView view;
    CHECK(vkCreateImageView(ctx->device, &view_info, allocator, &view));
    Buffer readback = make_buffer(ctx, SIZE * SIZE * 4 * layers, VK_BUFFER_USAGE_TRANSFER_DST_BIT);
    Buffer indirect = make_buffer(ctx, 64, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT);
    uint32_t *words = indirect.mapped;
    words[0] = 6, words[1] = 1, words[2] = 0, words[3] = 0; /* VkDrawIndirectCommand */
    words[8] = 1;                                            /* the draw count */

    VkShaderStageFlags push_stages =
        VK_SHADER_STAGE_FRAGMENT_BIT |
        (recipe->mesh ? VK_SHADER_STAGE_MESH_BIT_EXT
                      : VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT |
                            VK_SHADER_STAGE_GEOMETRY_BIT);
    VkPushConstantRange push = {push_stages, 0, 12};
    Tints tints;
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    if (recipe->tinted) {
        make_tints(ctx, &tints);
        layout_info.setLayoutCount = 1;
        layout_info.pSetLayouts = &tints.layout;
    }
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(ctx->device, &layout_info, allocator, &layout));
    VkPipeline libraries[2];
    VkPipeline pipeline = make_pipeline(ctx, layout, recipe, libraries);
    PFN_vkCmdDrawMultiEXT draw_multi = recipe->multi_draw ? LOAD(ctx, vkCmdDrawMultiEXT) : NULL;
    VkMultiDrawInfoEXT multi_info = {0, 6};
    PFN_vkCmdDrawMeshTasksEXT draw_mesh = recipe->mesh ? LOAD(ctx, vkCmdDrawMeshTasksEXT) : NULL;

    VkCommandBuffer cb = begin_one(ctx, ctx->pool, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    image_barrier(cb, image, layers, VK_IMAGE_LAYOUT_UNDEFINED,
                  VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL, 0,
                  VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                  VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT);
    VkRenderingAttachmentInfo color = {VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    color.imageView = view;
    color.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    VkRenderingInfo rendering = {VK_STRUCTURE_TYPE_RENDERING_INFO};
    rendering.renderArea.extent = (VkExtent2D){SIZE, SIZE};
    rendering.layerCount = 1;
    rendering.viewMask = recipe->view_mask;
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachments = &color;
    vkCmdBeginRendering(cb, &rendering);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
    VkViewport viewport = {0, 0, SIZE, SIZE, 0, 1};
    VkRect2D scissor = {{0, 0}, {SIZE, SIZE}};
    vkCmdSetViewport(cb, 0, 1, &viewport);
    vkCmdSetScissor(cb, 0, 1, &scissor);
    if (recipe->tinted)
        vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, 1, &tints.set, 0,
                                NULL);
    for (uint32_t k = 0; k < STRIPES; ++k) {
        uint32_t constants[3] = {k, STRIPES, recipe->bad_draw};
        vkCmdPushConstants(cb, layout, push_stages, 0, 12, constants);
        if (recipe->multi_draw)
            draw_multi(cb, 1, &multi_info, 1, 0, sizeof multi_info);
        else if (recipe->mesh)
            draw_mesh(cb, 1, 1, 1);
        else if (recipe->indirect_count)
            vkCmdDrawIndirectCount(cb, indirect.buffer, 0, indirect.buffer, 32, 2, 16);
        else
            vkCmdDraw(cb, 6, 1, 0, 0);
    }
    vkCmdEndRendering(cb);
    image_barrier(cb, image, layers, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL,
                  VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                  VK_ACCESS_TRANSFER_READ_BIT, VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                  VK_PIPELINE_STAGE_TRANSFER_BIT);
    VkBufferImageCopy region = {0};
    region.imageSubresource = (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, layers};
    region.imageExtent = (VkExtent3D){SIZE, SIZE, 1};
    vkCmdCopyImageToBuffer(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback.buffer, 1,
                           &region);
    CHECK(vkEndCommandBuffer(cb));
    submit_wait(ctx, cb);
    printf("%s %08x\n", label, fnv1a(readback.mapped, readback.size));

    if (!ctx->leak) {
        vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &cb);
        vkDestroyPipeline(ctx->device, pipeline, allocator);
        for (int i = 0; i < 2; ++i)
            if (libraries[i]) vkDestroyPipeline(ctx->device, libraries[i], allocator);
        vkDestroyPipelineLayout(ctx->device, layout, allocator);
        if (recipe->tinted) destroy_tints(ctx, &tints);
        vkDestroyImageView(ctx->device, view, allocator);
        vkDestroyImage(ctx->device, image, allocator);
        vkFreeMemory(ctx->device, memory, allocator);
    }
    free_buffer(ctx, &readback);
    free_buffer(ctx, &indirect);
}

void run_graphics_scenario(Context *ctx, const char *name) {
    Recipe recipe = {{"quad.vert", "quad.frag"}, 0, 0, 0, 0, 0, 0, 99};
    if (!strcmp(name, "dynamic-rendering")) {
        recipe.indirect_count = 1;
    } else if (!strcmp(name, "geometry-tessellation")) {
        const char *stages[5] = {"quad.vert", "wild.tesc", "wild.tese", "wild.geom", "quad.frag"};
        memcpy(recipe.stages, stages, sizeof stages);
    } else if (!strcmp(name, "tessellation-indexed")) {
        /* geometry-tessellation through two uniform buffer arrays; --bad N: draw N indexes
         * out of bounds in both stages */
        const char *stages[5] = {"quad.vert", "wild.tesc", "wild_index.tese", "wild_index.geom",
                                 "quad.frag"};
        memcpy(recipe.stages, stages, sizeof stages);
        recipe.tinted = 1;
        if (bad_dispatch >= 0) recipe.bad_draw = (uint32_t)bad_dispatch;
    } else if (!strcmp(name, "multiview")) {
        recipe.stages[1] = "wild_view.frag";
        recipe.view_mask = 3;
    } else if (!strcmp(name, "library")) {
        recipe.library = 1;
    } else if (!strcmp(name, "multi-draw")) {
        recipe.multi_draw = 1;
    } else if (!strcmp(name, "multi-draw-reporting")) {
        /* only under gpuav with tests/layer/fake_instrument.py, which gives set 30 meaning */
        recipe.multi_draw = 1;
        recipe.stages[1] = "quad_reporting.frag";
        recipe.bad_draw = 1;
    } else if (!strcmp(name, "mesh") || !strcmp(name, "mesh-reporting")) {
        /* the reporting variant: as multi-draw-reporting */
        recipe.mesh = 1;
        recipe.stages[0] = "wild.mesh";
        if (!strcmp(name, "mesh-reporting")) {
            recipe.stages[1] = "quad_reporting.frag";
            recipe.bad_draw = 1;
        }
    } else if (!strcmp(name, "library-flags2")) {
        recipe.library = 2;
    } else {
        fprintf(stderr, "unknown scenario %s\n", name);
        exit(2);
    }
    render(ctx, name, &recipe);
}
