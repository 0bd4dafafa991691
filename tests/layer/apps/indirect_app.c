/* One indirect or vertex-fetching action with parameters it is given: the indirect-command and
 * index/vertex-fetch scenarios (knows nothing of gpuav).
 *
 *   indirect_app SHADER_DIR MODE A B C
 *
 * MODE (A, B, C its numbers):
 *   dispatch X Y Z         vkCmdDispatchIndirect of (X, Y, Z) (compute.spv counts groups)
 *   draw FIRST_INSTANCE    vkCmdDrawIndirect of one triangle {3, 1, 0, FIRST_INSTANCE},
 *                          drawIndirectFirstInstance off
 *   count COUNT MAX DRAWS  vkCmdDrawIndirectCount: DRAWS triangles in the buffer (the buffer
 *                          is DRAWS commands long; its memory is larger and zeroed), COUNT in
 *                          the count buffer, maxDrawCount MAX
 *   indexed_indirect FIRST COUNT  vkCmdDrawIndexedIndirect {COUNT, 1, FIRST, 0, 0} over an
 *                          index buffer of 6 indices
 *   indexed INDEX OFFSET   vkCmdDrawIndexed of indices {0, 1, INDEX} with vertexOffset OFFSET
 *                          (3 vertices bound)
 *   indexed_secondary INDEX OFFSET  the same, recorded in a secondary command buffer
 *   indexed16 INDEX OFFSET the same with 16-bit indices, bound at byte 2 of their buffer
 *   vertices FIRST COUNT   vkCmdDraw(COUNT, 1, FIRST, 0) with 3 vertices bound
 *   sized_vertices FIRST COUNT  the same, the buffer of 3 vertices bound by
 *                          vkCmdBindVertexBuffers2EXT with a size of 2 vertices
 *   instances FIRST COUNT  vkCmdDraw(3, COUNT, 0, FIRST) with 2 per-instance offsets bound
 *   multi FIRST COUNT      vkCmdDrawMultiEXT of two draws, {0, 3} and {FIRST, COUNT}
 *   multi_indexed INDEX OFFSET  vkCmdDrawMultiIndexedEXT of two draws of indices {0, 1, INDEX},
 *                          the first with vertexOffset 0, the second with OFFSET
 *
 * Draws render triangles into an 8x8 image (vertex.vert, fragment.frag, or instanced.vert with
 * a per-instance attribute) in a render pass. Prints "message" lines (vk_app_common.h), then
 * "result" and the hash of the image (or of the compute result words). It waits for its
 * fence, then for the queue and the device (the Khronos layer reads back late on lavapipe).
 * With INDIRECT_APP_REPEAT=N in the environment a draw mode records its draw N times and prints
 * "timing RECORD_US SUBMIT_US" (recording, and submit to the end of the waits), for benchmarks;
 * with INDIRECT_APP_FRAMES=F it records and submits the command buffer F times (resetting its
 * pool in between, as a renderer re-records every frame) and prints "frames RECORD_US
 * SUBMIT_US", the medians of frames 2 to F; with INDIRECT_APP_BUFFERS=K, draw k uses the k % K-th
 * of K copies of the buffers (as draws of many meshes do); with INDIRECT_APP_DYNAMIC_INPUT=1 the
 * pipeline's vertex input is dynamic, set by vkCmdSetVertexInputEXT before each draw. */
#include <string.h>
#include <time.h>

#include "vk_graphics_common.h"

enum { SIZE = 8, MEMORY_BYTES = 4096 };

static PFN_vkCmdSetVertexInputEXT set_vertex_input; /* non-NULL: dynamic vertex input */
static PFN_vkCmdDrawMultiEXT draw_multi;
static PFN_vkCmdDrawMultiIndexedEXT draw_multi_indexed;
static PFN_vkCmdBindVertexBuffers2EXT bind_sized_vertices; /* non-NULL: sized_vertices */

typedef struct {
    VkDevice device;
    VkQueue queue;
    VkPhysicalDeviceMemoryProperties memory;
    const char *shader_dir;
} Context;

typedef struct {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *data;
} Buffer;

/* A buffer of `size` bytes in zeroed host-visible memory of MEMORY_BYTES (reads just past its
 * end stay in zeroed memory), holding `bytes`. */
static Buffer make_buffer(Context *ctx, VkDeviceSize size, VkBufferUsageFlags usage,
                          const void *bytes, size_t count) {
    Buffer made;
    VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = usage;
    CHECK(vkCreateBuffer(ctx->device, &info, NULL, &made.buffer));
    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(ctx->device, made.buffer, &requirements);
    VkMemoryAllocateInfo allocate = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size > MEMORY_BYTES ? requirements.size : MEMORY_BYTES;
    allocate.memoryTypeIndex = memory_type(
        &ctx->memory, requirements.memoryTypeBits,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    CHECK(vkAllocateMemory(ctx->device, &allocate, NULL, &made.memory));
    CHECK(vkBindBufferMemory(ctx->device, made.buffer, made.memory, 0));
    CHECK(vkMapMemory(ctx->device, made.memory, 0, VK_WHOLE_SIZE, 0, &made.data));
    memset(made.data, 0, allocate.allocationSize);
    if (bytes) memcpy(made.data, bytes, count);
    return made;
}

static VkShaderModule module(Context *ctx, const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", ctx->shader_dir, name);
    return load_shader_module(ctx->device, path);
}

static uint32_t run_dispatch(Context *ctx, VkCommandPool pool, const uint32_t groups[3]) {
    Buffer arguments = make_buffer(ctx, 12, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, groups, 12);
    Buffer counter = make_buffer(ctx, 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, NULL, 0);
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_compute_layouts(ctx->device, 1, 4, &set_layout, &layout);
    VkPipeline pipeline =
        create_compute_pipeline(ctx->device, layout, module(ctx, "compute.spv"), NULL);
    VkDescriptorBufferInfo info = {counter.buffer, 0, VK_WHOLE_SIZE};
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set = create_storage_set(ctx->device, set_layout, 1, &info, &descriptor_pool);
    VkCommandBuffer command_buffer = begin_command_buffer(ctx->device, pool, 0);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set,
                            0, NULL);
    vkCmdDispatchIndirect(command_buffer, arguments.buffer, 0);
    CHECK(vkEndCommandBuffer(command_buffer));
    vkDestroyFence(ctx->device, submit_and_wait(ctx->device, ctx->queue, command_buffer), NULL);
    return *(uint32_t *)counter.data;
}

typedef struct {
    VkImage image;
    VkRenderPass render_pass;
    VkFramebuffer framebuffer;
    Buffer readback;
} Target;

static Target make_target(Context *ctx) {
    Target target;
    VkDeviceMemory memory;
    VkImageView view;
    create_image_and_view(ctx->device, &ctx->memory, VK_FORMAT_R8G8B8A8_UNORM, SIZE, SIZE,
                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT, 0,
                          &target.image, &memory, &view);
    target.render_pass = create_color_render_pass(ctx->device, VK_FORMAT_R8G8B8A8_UNORM,
                                                  VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL);
    target.framebuffer = create_framebuffer(ctx->device, target.render_pass, view, SIZE, SIZE);
    target.readback =
        make_buffer(ctx, SIZE * SIZE * 4, VK_BUFFER_USAGE_TRANSFER_DST_BIT, NULL, 0);
    return target;
}

/* Per-vertex vec2 positions at binding 0; with `instanced`, a per-instance vec2 offset at
 * binding 1 (instanced.vert). */
static VkPipeline make_pipeline(Context *ctx, VkRenderPass render_pass, int instanced) {
    VkShaderModule vertex = module(ctx, instanced ? "instanced.spv" : "vertex.spv");
    VkShaderModule fragment = module(ctx, "fragment.spv");
    VkPipelineShaderStageCreateInfo stages[2];
    vertex_fragment_stages(vertex, fragment, stages);
    VkVertexInputBindingDescription bindings[2] = {
        {0, 8, VK_VERTEX_INPUT_RATE_VERTEX}, {1, 8, VK_VERTEX_INPUT_RATE_INSTANCE}};
    VkVertexInputAttributeDescription attributes[2] = {{0, 0, VK_FORMAT_R32G32_SFLOAT, 0},
                                                       {1, 1, VK_FORMAT_R32G32_SFLOAT, 0}};
    DrawState state;
    init_draw_state(&state, SIZE, SIZE, 1, 0xF);
    state.vertex_input.vertexBindingDescriptionCount = instanced ? 2 : 1;
    state.vertex_input.pVertexBindingDescriptions = bindings;
    state.vertex_input.vertexAttributeDescriptionCount = instanced ? 2 : 1;
    state.vertex_input.pVertexAttributeDescriptions = attributes;
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(ctx->device, &layout_info, NULL, &layout));
    VkGraphicsPipelineCreateInfo info =
        draw_pipeline_info(&state, NULL, 2, stages, layout, render_pass);
    VkDynamicState dynamic_input = VK_DYNAMIC_STATE_VERTEX_INPUT_EXT;
    VkPipelineDynamicStateCreateInfo dynamic = {
        VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
    dynamic.dynamicStateCount = 1;
    dynamic.pDynamicStates = &dynamic_input;
    if (set_vertex_input) {
        info.pVertexInputState = NULL;
        info.pDynamicState = &dynamic;
    }
    VkPipeline pipeline;
    CHECK(vkCreateGraphicsPipelines(ctx->device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));
    return pipeline;
}

/* The vertex input of make_pipeline's pipelines, as vkCmdSetVertexInputEXT sets it. */
static void record_vertex_input(VkCommandBuffer command_buffer, int instanced) {
    VkVertexInputBindingDescription2EXT bindings[2] = {
        {VK_STRUCTURE_TYPE_VERTEX_INPUT_BINDING_DESCRIPTION_2_EXT, NULL, 0, 8,
         VK_VERTEX_INPUT_RATE_VERTEX, 1},
        {VK_STRUCTURE_TYPE_VERTEX_INPUT_BINDING_DESCRIPTION_2_EXT, NULL, 1, 8,
         VK_VERTEX_INPUT_RATE_INSTANCE, 1}};
    VkVertexInputAttributeDescription2EXT attributes[2] = {
        {VK_STRUCTURE_TYPE_VERTEX_INPUT_ATTRIBUTE_DESCRIPTION_2_EXT, NULL, 0, 0,
         VK_FORMAT_R32G32_SFLOAT, 0},
        {VK_STRUCTURE_TYPE_VERTEX_INPUT_ATTRIBUTE_DESCRIPTION_2_EXT, NULL, 1, 1,
         VK_FORMAT_R32G32_SFLOAT, 0}};
    set_vertex_input(command_buffer, instanced ? 2 : 1, bindings, instanced ? 2 : 1, attributes);
}

static const float TRIANGLE[6] = {-1, -1, 1, -1, -1, 1};

/* What a draw mode binds and records inside the render pass. */
typedef struct {
    const char *mode;
    uint32_t a, b, c;
    Buffer vertices, instances, indices, arguments, count;
} Draw;

static void prepare(Context *ctx, Draw *draw) {
    const char *mode = draw->mode;
    draw->vertices = make_buffer(ctx, sizeof TRIANGLE, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT,
                                 TRIANGLE, sizeof TRIANGLE);
    if (!strcmp(mode, "draw")) {
        uint32_t command[4] = {3, 1, 0, draw->a};
        draw->arguments =
            make_buffer(ctx, sizeof command, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, command, 16);
    } else if (!strcmp(mode, "count")) {
        uint32_t commands[64] = {0};
        for (uint32_t k = 0; k < draw->c && k < 16; ++k) commands[4 * k] = 3, commands[4 * k + 1] = 1;
        draw->arguments = make_buffer(ctx, 16 * (draw->c ? draw->c : 1),
                                      VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, commands,
                                      16 * (draw->c < 16 ? draw->c : 16));
        draw->count = make_buffer(ctx, 4, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, &draw->a, 4);
    } else if (!strcmp(mode, "indexed_indirect")) {
        uint32_t indices[6] = {0, 1, 2, 0, 1, 2};
        uint32_t command[5] = {draw->b, 1, draw->a, 0, 0};
        draw->indices =
            make_buffer(ctx, sizeof indices, VK_BUFFER_USAGE_INDEX_BUFFER_BIT, indices, 24);
        draw->arguments =
            make_buffer(ctx, sizeof command, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, command, 20);
    } else if (!strcmp(mode, "indexed16")) {
        uint16_t indices[4] = {0xAAAA, 0, 1, (uint16_t)draw->a};
        draw->indices =
            make_buffer(ctx, sizeof indices, VK_BUFFER_USAGE_INDEX_BUFFER_BIT, indices, 8);
    } else if (!strncmp(mode, "indexed", 7) || !strcmp(mode, "multi_indexed")) {
        uint32_t indices[3] = {0, 1, draw->a};
        draw->indices =
            make_buffer(ctx, sizeof indices, VK_BUFFER_USAGE_INDEX_BUFFER_BIT, indices, 12);
    } else if (!strcmp(mode, "instances")) {
        float offsets[4] = {0, 0, 0.5f, 0.5f};
        draw->instances =
            make_buffer(ctx, sizeof offsets, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, offsets, 16);
    }
}

static void record_draw(VkCommandBuffer command_buffer, const Draw *draw, VkPipeline pipeline) {
    const char *mode = draw->mode;
    VkDeviceSize zero = 0;
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
    if (set_vertex_input) record_vertex_input(command_buffer, !strcmp(mode, "instances"));
    if (bind_sized_vertices) {
        VkDeviceSize size = sizeof TRIANGLE / 3 * 2;
        bind_sized_vertices(command_buffer, 0, 1, &draw->vertices.buffer, &zero, &size, NULL);
    } else {
        vkCmdBindVertexBuffers(command_buffer, 0, 1, &draw->vertices.buffer, &zero);
    }
    if (!strcmp(mode, "draw")) {
        vkCmdDrawIndirect(command_buffer, draw->arguments.buffer, 0, 1, 16);
    } else if (!strcmp(mode, "count")) {
        vkCmdDrawIndirectCount(command_buffer, draw->arguments.buffer, 0, draw->count.buffer, 0,
                               draw->b, 16);
    } else if (!strcmp(mode, "indexed_indirect")) {
        vkCmdBindIndexBuffer(command_buffer, draw->indices.buffer, 0, VK_INDEX_TYPE_UINT32);
        vkCmdDrawIndexedIndirect(command_buffer, draw->arguments.buffer, 0, 1, 20);
    } else if (!strcmp(mode, "indexed16")) {
        vkCmdBindIndexBuffer(command_buffer, draw->indices.buffer, 2, VK_INDEX_TYPE_UINT16);
        vkCmdDrawIndexed(command_buffer, 3, 1, 0, (int32_t)draw->b, 0);
    } else if (!strncmp(mode, "indexed", 7)) {
        vkCmdBindIndexBuffer(command_buffer, draw->indices.buffer, 0, VK_INDEX_TYPE_UINT32);
        vkCmdDrawIndexed(command_buffer, 3, 1, 0, (int32_t)draw->b, 0);
    } else if (!strcmp(mode, "vertices") || !strcmp(mode, "sized_vertices")) {
        vkCmdDraw(command_buffer, draw->b, 1, draw->a, 0);
    } else if (!strcmp(mode, "multi")) {
        VkMultiDrawInfoEXT infos[2] = {{0, 3}, {draw->a, draw->b}};
        draw_multi(command_buffer, 2, infos, 1, 0, sizeof infos[0]);
    } else if (!strcmp(mode, "multi_indexed")) {
        VkMultiDrawIndexedInfoEXT infos[2] = {{0, 3, 0}, {0, 3, (int32_t)draw->b}};
        vkCmdBindIndexBuffer(command_buffer, draw->indices.buffer, 0, VK_INDEX_TYPE_UINT32);
        draw_multi_indexed(command_buffer, 2, infos, 1, 0, sizeof infos[0], NULL);
    } else if (!strcmp(mode, "instances")) {
        vkCmdBindVertexBuffers(command_buffer, 1, 1, &draw->instances.buffer, &zero);
        vkCmdDraw(command_buffer, 3, draw->b, 0, draw->a);
    }
}

static double now_us(void) {
    struct timespec at;
    clock_gettime(CLOCK_MONOTONIC, &at);
    return at.tv_sec * 1e6 + at.tv_nsec / 1e3;
}

/* Records the render pass with the draw (`repeat` times, or the secondary) and the copy of the
 * image into `command_buffer`, begun here. */
static void record_frame(VkCommandBuffer command_buffer, const Draw *draws, int copies,
                         VkPipeline pipeline, const Target *target, VkCommandBuffer inner,
                         int repeat) {
    VkCommandBufferBeginInfo begin_info = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(command_buffer, &begin_info));
    VkClearValue clear = {{{0, 0, 0, 1}}};
    VkRenderPassBeginInfo begin = {VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    begin.renderPass = target->render_pass;
    begin.framebuffer = target->framebuffer;
    begin.renderArea.extent = (VkExtent2D){SIZE, SIZE};
    begin.clearValueCount = 1;
    begin.pClearValues = &clear;
    vkCmdBeginRenderPass(command_buffer, &begin,
                         inner ? VK_SUBPASS_CONTENTS_SECONDARY_COMMAND_BUFFERS
                               : VK_SUBPASS_CONTENTS_INLINE);
    if (inner)
        vkCmdExecuteCommands(command_buffer, 1, &inner);
    else
        for (int k = 0; k < repeat; ++k) record_draw(command_buffer, &draws[k % copies], pipeline);
    vkCmdEndRenderPass(command_buffer);
    VkBufferImageCopy region = {0};
    region.imageSubresource = (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = (VkExtent3D){SIZE, SIZE, 1};
    vkCmdCopyImageToBuffer(command_buffer, target->image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                           target->readback.buffer, 1, &region);
    VkMemoryBarrier to_host = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                               VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &to_host, 0, NULL, 0, NULL);
    CHECK(vkEndCommandBuffer(command_buffer));
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int count) {
    qsort(values, count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

enum { MAX_FRAMES = 1000, MAX_COPIES = 4096 };

static int number_from(const char *name, int fallback, int most) {
    const char *text = getenv(name);
    int value = text ? atoi(text) : fallback;
    return value < 1 ? 1 : value > most ? most : value;
}

static uint32_t run_draw(Context *ctx, VkCommandPool pool, Draw *draw) {
    const char *repeat_text = getenv("INDIRECT_APP_REPEAT");
    int repeat = repeat_text ? atoi(repeat_text) : 1;
    int frames = number_from("INDIRECT_APP_FRAMES", 1, MAX_FRAMES);
    int copies = number_from("INDIRECT_APP_BUFFERS", 1, MAX_COPIES);
    static Draw draws[MAX_COPIES];
    for (int k = 0; k < copies; ++k) {
        draws[k] = *draw;
        prepare(ctx, &draws[k]);
    }
    *draw = draws[0];
    Target target = make_target(ctx);
    VkPipeline pipeline = make_pipeline(ctx, target.render_pass, !strcmp(draw->mode, "instances"));
    VkCommandBufferAllocateInfo info = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = pool;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkCommandBuffer command_buffer;
    CHECK(vkAllocateCommandBuffers(ctx->device, &info, &command_buffer));
    VkCommandBuffer inner = VK_NULL_HANDLE;
    if (!strcmp(draw->mode, "indexed_secondary")) {
        info.level = VK_COMMAND_BUFFER_LEVEL_SECONDARY;
        CHECK(vkAllocateCommandBuffers(ctx->device, &info, &inner));
    }
    static double recording[MAX_FRAMES], submitting[MAX_FRAMES];
    for (int frame = 0; frame < frames; ++frame) {
        /* Every frame records everything again, as a renderer does. */
        if (frame) CHECK(vkResetCommandPool(ctx->device, pool, 0));
        if (inner) {
            VkCommandBufferInheritanceInfo inheritance = {
                VK_STRUCTURE_TYPE_COMMAND_BUFFER_INHERITANCE_INFO};
            inheritance.renderPass = target.render_pass;
            inheritance.framebuffer = target.framebuffer;
            VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
            begin.flags = VK_COMMAND_BUFFER_USAGE_RENDER_PASS_CONTINUE_BIT;
            begin.pInheritanceInfo = &inheritance;
            CHECK(vkBeginCommandBuffer(inner, &begin));
            record_draw(inner, draw, pipeline);
            CHECK(vkEndCommandBuffer(inner));
        }
        double started = now_us();
        record_frame(command_buffer, draws, copies, pipeline, &target, inner, repeat);
        double recorded = now_us();
        vkDestroyFence(ctx->device, submit_and_wait(ctx->device, ctx->queue, command_buffer),
                       NULL);
        CHECK(vkQueueWaitIdle(ctx->queue));
        recording[frame] = recorded - started;
        submitting[frame] = now_us() - recorded;
    }
    if (repeat_text) printf("timing %.0f %.0f\n", recording[0], submitting[0]);
    if (frames > 1)
        printf("frames %.0f %.0f\n", median(recording + 1, frames - 1),
               median(submitting + 1, frames - 1));
    return fnv1a(target.readback.data, SIZE * SIZE * 4);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s SHADER_DIR MODE A [B [C]]\n", argv[0]);
        return 2;
    }
    Context ctx = {0};
    ctx.shader_dir = argv[1];
    const char *mode = argv[2];
    uint32_t numbers[3] = {0, 0, 0};
    for (int k = 3; k < argc && k < 6; ++k) numbers[k - 3] = (uint32_t)strtoul(argv[k], NULL, 0);

    VkInstance instance = create_instance("indirect_app", VK_API_VERSION_1_2, NULL, 1,
                                          (const char *[]){"VK_EXT_debug_utils"});
    VkDebugUtilsMessengerEXT messenger = create_messenger(
        instance,
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
        print_message);
    VkPhysicalDevice physical = first_physical_device(instance);
    vkGetPhysicalDeviceMemoryProperties(physical, &ctx.memory);
    VkPhysicalDeviceVulkan12Features features12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    features12.drawIndirectCount = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                          &features12};
    const char *dynamic_text = getenv("INDIRECT_APP_DYNAMIC_INPUT");
    int dynamic_input = dynamic_text && dynamic_text[0] == '1';
    VkPhysicalDeviceVertexInputDynamicStateFeaturesEXT dynamic_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VERTEX_INPUT_DYNAMIC_STATE_FEATURES_EXT};
    dynamic_features.vertexInputDynamicState = VK_TRUE;
    VkPhysicalDeviceMultiDrawFeaturesEXT multi_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTI_DRAW_FEATURES_EXT};
    multi_features.multiDraw = VK_TRUE;
    int multi = !strncmp(mode, "multi", 5);
    VkPhysicalDeviceExtendedDynamicStateFeaturesEXT sized_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTENDED_DYNAMIC_STATE_FEATURES_EXT};
    sized_features.extendedDynamicState = VK_TRUE;
    int sized = !strcmp(mode, "sized_vertices");
    const char *extensions[3];
    uint32_t extension_count = 0;
    if (dynamic_input) {
        extensions[extension_count++] = VK_EXT_VERTEX_INPUT_DYNAMIC_STATE_EXTENSION_NAME;
        dynamic_features.pNext = features12.pNext;
        features12.pNext = &dynamic_features;
    }
    if (multi) {
        extensions[extension_count++] = VK_EXT_MULTI_DRAW_EXTENSION_NAME;
        multi_features.pNext = features12.pNext;
        features12.pNext = &multi_features;
    }
    if (sized) {
        extensions[extension_count++] = VK_EXT_EXTENDED_DYNAMIC_STATE_EXTENSION_NAME;
        sized_features.pNext = features12.pNext;
        features12.pNext = &sized_features;
    }
    ctx.device = create_device(physical, &features, extension_count, extensions, &ctx.queue);
    if (sized)
        bind_sized_vertices = (PFN_vkCmdBindVertexBuffers2EXT)vkGetDeviceProcAddr(
            ctx.device, "vkCmdBindVertexBuffers2EXT");
    if (dynamic_input)
        set_vertex_input = (PFN_vkCmdSetVertexInputEXT)vkGetDeviceProcAddr(
            ctx.device, "vkCmdSetVertexInputEXT");
    if (multi) {
        draw_multi = (PFN_vkCmdDrawMultiEXT)vkGetDeviceProcAddr(ctx.device, "vkCmdDrawMultiEXT");
        draw_multi_indexed = (PFN_vkCmdDrawMultiIndexedEXT)vkGetDeviceProcAddr(
            ctx.device, "vkCmdDrawMultiIndexedEXT");
    }
    VkCommandPool pool = create_command_pool(ctx.device);

    uint32_t result;
    if (!strcmp(mode, "dispatch")) {
        result = run_dispatch(&ctx, pool, numbers);
    } else {
        Draw draw = {mode, numbers[0], numbers[1], numbers[2]};
        result = run_draw(&ctx, pool, &draw);
    }
    CHECK(vkQueueWaitIdle(ctx.queue));
    CHECK(vkDeviceWaitIdle(ctx.device));
    printf("result %08x\n", result);
    fflush(stdout);
    vkDestroyCommandPool(ctx.device, pool, NULL);
    vkDestroyDevice(ctx.device, NULL);
    destroy_messenger(instance, messenger);
    vkDestroyInstance(instance, NULL);
    return 0;
}
