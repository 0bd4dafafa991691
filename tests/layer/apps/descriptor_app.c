/* One dispatch (or one draw of a single fragment) whose shader reads the tested descriptor at
 * set 0 binding 0: the unwritten- and destroyed-descriptor scenarios (knows nothing of gpuav).
 *
 *   descriptor_app SHADER.spv TYPE COUNT MODE [VERT.spv] [OPTIONS]
 *
 * SHADER is a compute shader, or with VERT a fragment shader drawn over a 1x1 target. Binding
 * 0 holds COUNT descriptors of TYPE: storage_buffer | uniform_buffer | sampled_image (combined
 * image sampler) | storage_image | uniform_texel | storage_texel | separate_image (a sampled
 * image; binding 2 is a sampler) | sampler (binding 0 a sampler; binding 2 a sampled image).
 * The buffer holds 1000 + k in word k; the image is a 1x1 R32_UINT one cleared to 1234.
 * Binding 1 is a storage buffer of 16 words for results. MODE:
 *   written     every descriptor written (the correct twin);
 *   unwritten   binding 0 never written (binding 2 written);
 *   first_only  only element 0 of binding 0 written;
 *   copied      binding 0 written in another set, then copied into this one;
 *   destroyed   written, then its buffer, view, image or sampler destroyed before recording;
 *   freed       written, then the buffer's or image's memory freed before recording.
 * OPTIONS, comma-separated: "resubmit" submits the command buffer twice; "rerecord" records
 * it, submits, resets it and records it again before the second submit; "late" destroys or
 * frees (MODE destroyed or freed) after recording, before the submit. Prints "message"
 * lines (vk_app_common.h), then "result" and the result words. */
#include <string.h>

#include "vk_graphics_common.h"

#define RESULT_WORDS 16
#define BUFFER_WORDS 64

static VkDescriptorType descriptor_type(const char *name) {
    if (!strcmp(name, "storage_buffer")) return VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    if (!strcmp(name, "uniform_buffer")) return VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
    if (!strcmp(name, "sampled_image")) return VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    if (!strcmp(name, "storage_image")) return VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    if (!strcmp(name, "uniform_texel")) return VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    if (!strcmp(name, "storage_texel")) return VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
    if (!strcmp(name, "separate_image")) return VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
    if (!strcmp(name, "sampler")) return VK_DESCRIPTOR_TYPE_SAMPLER;
    fprintf(stderr, "unknown descriptor type %s\n", name);
    exit(2);
}

/* The other descriptor of the separate-sampler types, at binding 2. */
static VkDescriptorType companion_type(VkDescriptorType type) {
    if (type == VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE) return VK_DESCRIPTOR_TYPE_SAMPLER;
    if (type == VK_DESCRIPTOR_TYPE_SAMPLER) return VK_DESCRIPTOR_TYPE_SAMPLED_IMAGE;
    return VK_DESCRIPTOR_TYPE_MAX_ENUM;
}

static int is_buffer(VkDescriptorType type) {
    return type == VK_DESCRIPTOR_TYPE_STORAGE_BUFFER || type == VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
}

static int is_texel(VkDescriptorType type) {
    return type == VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER ||
           type == VK_DESCRIPTOR_TYPE_STORAGE_TEXEL_BUFFER;
}

typedef struct {
    VkDevice device;
    VkBuffer buffer;
    VkDeviceMemory buffer_memory;
    VkBufferView texel_view;
    VkImage image;
    VkDeviceMemory image_memory;
    VkImageView image_view;
    VkSampler sampler;
} Resources;

/* `count` descriptors of `type` at `binding` of `set`, from `first`. */
static void write_descriptors(const Resources *r, VkDescriptorSet set, uint32_t binding,
                              VkDescriptorType type, uint32_t first, uint32_t count) {
    VkDescriptorBufferInfo buffers[4];
    VkDescriptorImageInfo images[4];
    VkBufferView views[4];
    for (uint32_t k = 0; k < count; ++k) {
        buffers[k] = (VkDescriptorBufferInfo){r->buffer, 0, VK_WHOLE_SIZE};
        images[k] = (VkDescriptorImageInfo){r->sampler, r->image_view, VK_IMAGE_LAYOUT_GENERAL};
        views[k] = r->texel_view;
    }
    VkWriteDescriptorSet write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set;
    write.dstBinding = binding;
    write.dstArrayElement = first;
    write.descriptorCount = count;
    write.descriptorType = type;
    write.pBufferInfo = buffers;
    write.pImageInfo = images;
    write.pTexelBufferView = views;
    vkUpdateDescriptorSets(r->device, 1, &write, 0, NULL);
}

static void create_image(Resources *r, const VkPhysicalDeviceMemoryProperties *properties) {
    create_image_and_view(r->device, properties, VK_FORMAT_R32_UINT, 1, 1,
                          VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT |
                              VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                          0, &r->image, &r->image_memory, &r->image_view);
    r->sampler = create_nearest_sampler(r->device, VK_SAMPLER_ADDRESS_MODE_REPEAT, VK_FALSE);
}

typedef struct {
    VkRenderPass render_pass;
    VkImage target;
    VkDeviceMemory target_memory;
    VkImageView target_view;
    VkFramebuffer framebuffer;
} Target;

static void create_target(VkDevice device, const VkPhysicalDeviceMemoryProperties *properties,
                          Target *t) {
    t->render_pass = create_color_render_pass(device, VK_FORMAT_R8G8B8A8_UNORM,
                                              VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL);
    create_image_and_view(device, properties, VK_FORMAT_R8G8B8A8_UNORM, 1, 1,
                          VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, 0, &t->target, &t->target_memory,
                          &t->target_view);
    t->framebuffer = create_framebuffer(device, t->render_pass, t->target_view, 1, 1);
}

static VkPipeline create_graphics_pipeline(VkDevice device, VkPipelineLayout layout,
                                           VkRenderPass render_pass, VkShaderModule vert,
                                           VkShaderModule frag) {
    VkPipelineShaderStageCreateInfo stages[2];
    vertex_fragment_stages(vert, frag, stages);
    DrawState state;
    init_draw_state(&state, 1, 1, 1, 0xF);
    VkGraphicsPipelineCreateInfo info =
        draw_pipeline_info(&state, NULL, 2, stages, layout, render_pass);
    VkPipeline pipeline;
    CHECK(vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));
    return pipeline;
}

static void record(VkCommandBuffer command_buffer, const Resources *r, int graphics,
                   const Target *t, VkPipeline pipeline, VkPipelineLayout layout,
                   VkDescriptorSet set) {
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(command_buffer, &begin));
    if (r->image_memory)
        clear_image_to_general(command_buffer, r->image, COLOR_SUBRESOURCE_RANGE,
                               (VkClearColorValue){.uint32 = {1234, 0, 0, 0}},
                               VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    VkPipelineBindPoint point =
        graphics ? VK_PIPELINE_BIND_POINT_GRAPHICS : VK_PIPELINE_BIND_POINT_COMPUTE;
    vkCmdBindPipeline(command_buffer, point, pipeline);
    vkCmdBindDescriptorSets(command_buffer, point, layout, 0, 1, &set, 0, NULL);
    if (graphics) {
        VkClearValue clear = {{{0, 0, 0, 0}}};
        VkRenderPassBeginInfo pass = {VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
        pass.renderPass = t->render_pass;
        pass.framebuffer = t->framebuffer;
        pass.renderArea = (VkRect2D){{0, 0}, {1, 1}};
        pass.clearValueCount = 1;
        pass.pClearValues = &clear;
        vkCmdBeginRenderPass(command_buffer, &pass, VK_SUBPASS_CONTENTS_INLINE);
        vkCmdDraw(command_buffer, 3, 1, 0, 0);
        vkCmdEndRenderPass(command_buffer);
    } else {
        vkCmdDispatch(command_buffer, 1, 1, 1);
    }
    CHECK(vkEndCommandBuffer(command_buffer));
}

/* MODE destroyed or freed: destroy the descriptor's object, or free its memory. */
static void retire(VkDevice device, Resources *r, VkDescriptorType type, const char *mode) {
    if (!strcmp(mode, "destroyed")) {
        if (is_buffer(type)) {
            vkDestroyBuffer(device, r->buffer, NULL);
            r->buffer = VK_NULL_HANDLE;
        } else if (is_texel(type)) {
            vkDestroyBufferView(device, r->texel_view, NULL);
            r->texel_view = VK_NULL_HANDLE;
        } else if (type == VK_DESCRIPTOR_TYPE_SAMPLER) {
            vkDestroySampler(device, r->sampler, NULL);
            r->sampler = VK_NULL_HANDLE;
        } else {
            vkDestroyImageView(device, r->image_view, NULL);
            r->image_view = VK_NULL_HANDLE;
        }
    } else if (!strcmp(mode, "freed")) {
        if (is_buffer(type) || is_texel(type)) {
            vkFreeMemory(device, r->buffer_memory, NULL);
            r->buffer_memory = VK_NULL_HANDLE;
        } else {
            vkFreeMemory(device, r->image_memory, NULL);
            r->image_memory = VK_NULL_HANDLE;
        }
    }
}

static void submit(VkDevice device, VkQueue queue, VkCommandBuffer command_buffer) {
    vkDestroyFence(device, submit_and_wait_idle(device, queue, command_buffer), NULL);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s SHADER TYPE COUNT MODE [VERT] [OPTIONS]\n", argv[0]);
        return 2;
    }
    VkDescriptorType type = descriptor_type(argv[2]);
    uint32_t count = (uint32_t)strtoul(argv[3], NULL, 0);
    const char *mode = argv[4];
    const char *vert_path = argc > 5 && argv[5][0] ? argv[5] : NULL;
    const char *options = argc > 6 ? argv[6] : "";
    int graphics = vert_path != NULL;
    if (count < 1 || count > 4) return 2;

    VkDebugUtilsMessengerEXT messenger;
    VkInstance instance = create_printing_instance("descriptor_app", VK_API_VERSION_1_2,
                                                   WARNINGS_AND_ERRORS, &messenger);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory_properties;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    features.features.fragmentStoresAndAtomics = VK_TRUE;
    VkQueue queue;
    VkDevice device = create_device(physical, &features, 0, NULL, &queue);

    Resources r = {device};
    VkBufferUsageFlags usage =
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT |
        VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT | VK_BUFFER_USAGE_STORAGE_TEXEL_BUFFER_BIT;
    create_host_buffer(device, &memory_properties, 4 * BUFFER_WORDS, usage, NULL, ~0u, NULL,
                       &r.buffer, &r.buffer_memory);
    uint32_t *words;
    CHECK(vkMapMemory(device, r.buffer_memory, 0, VK_WHOLE_SIZE, 0, (void **)&words));
    for (uint32_t k = 0; k < BUFFER_WORDS; ++k) words[k] = 1000 + k;
    vkUnmapMemory(device, r.buffer_memory);
    VkBufferViewCreateInfo view_info = {VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    view_info.buffer = r.buffer;
    view_info.format = VK_FORMAT_R32_UINT;
    view_info.range = VK_WHOLE_SIZE;
    CHECK(vkCreateBufferView(device, &view_info, NULL, &r.texel_view));
    create_image(&r, &memory_properties);
    VkBuffer results;
    VkDeviceMemory results_memory;
    uint32_t *result_words =
        create_mapped_host_buffer(device, &memory_properties, 4 * RESULT_WORDS,
                                  VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, &results, &results_memory);

    VkShaderStageFlags stages = graphics ? VK_SHADER_STAGE_FRAGMENT_BIT
                                         : VK_SHADER_STAGE_COMPUTE_BIT;
    VkDescriptorType companion = companion_type(type);
    VkDescriptorSetLayoutBinding bindings[3] = {
        {0, type, count, stages, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, stages, NULL},
        {2, companion, 1, stages, NULL},
    };
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_set_and_pipeline_layouts(device, NULL, companion == VK_DESCRIPTOR_TYPE_MAX_ENUM ? 2 : 3,
                                    bindings, 0, 0, &set_layout, &layout);

    VkDescriptorPoolSize pool_sizes[3] = {
        {type, 2 * count},
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2},
        {companion == VK_DESCRIPTOR_TYPE_MAX_ENUM ? VK_DESCRIPTOR_TYPE_SAMPLER : companion, 2},
    };
    VkDescriptorPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 2;
    pool_info.poolSizeCount = 3;
    pool_info.pPoolSizes = pool_sizes;
    VkDescriptorPool pool;
    CHECK(vkCreateDescriptorPool(device, &pool_info, NULL, &pool));
    VkDescriptorSetLayout both[2] = {set_layout, set_layout};
    VkDescriptorSetAllocateInfo allocate = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = pool;
    allocate.descriptorSetCount = 2;
    allocate.pSetLayouts = both;
    VkDescriptorSet sets[2];
    CHECK(vkAllocateDescriptorSets(device, &allocate, sets));
    VkDescriptorSet set = sets[0];

    VkDescriptorBufferInfo result_info = {results, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet result_write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    result_write.dstSet = set;
    result_write.dstBinding = 1;
    result_write.descriptorCount = 1;
    result_write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    result_write.pBufferInfo = &result_info;
    vkUpdateDescriptorSets(device, 1, &result_write, 0, NULL);
    if (companion != VK_DESCRIPTOR_TYPE_MAX_ENUM) write_descriptors(&r, set, 2, companion, 0, 1);
    if (!strcmp(mode, "first_only")) {
        write_descriptors(&r, set, 0, type, 0, 1);
    } else if (!strcmp(mode, "copied")) {
        write_descriptors(&r, sets[1], 0, type, 0, count);
        VkCopyDescriptorSet copy = {VK_STRUCTURE_TYPE_COPY_DESCRIPTOR_SET};
        copy.srcSet = sets[1];
        copy.dstSet = set;
        copy.descriptorCount = count;
        vkUpdateDescriptorSets(device, 0, NULL, 1, &copy);
    } else if (strcmp(mode, "unwritten") != 0) {
        write_descriptors(&r, set, 0, type, 0, count);
    }
    int late = option_listed(options, "late");
    if (!late) retire(device, &r, type, mode);

    VkShaderModule module = load_shader_module(device, argv[1]);
    VkShaderModule vert = graphics ? load_shader_module(device, vert_path) : VK_NULL_HANDLE;
    Target target = {0};
    VkPipeline pipeline;
    if (graphics) {
        create_target(device, &memory_properties, &target);
        pipeline = create_graphics_pipeline(device, layout, target.render_pass, vert, module);
    } else {
        pipeline = create_compute_pipeline(device, layout, module, NULL);
    }
    VkCommandPool command_pool = create_command_pool(device);
    VkCommandBufferAllocateInfo command_info = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    command_info.commandPool = command_pool;
    command_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    command_info.commandBufferCount = 1;
    VkCommandBuffer command_buffer;
    CHECK(vkAllocateCommandBuffers(device, &command_info, &command_buffer));
    record(command_buffer, &r, graphics, &target, pipeline, layout, set);
    if (late) retire(device, &r, type, mode);
    submit(device, queue, command_buffer);
    if (option_listed(options, "rerecord")) {
        CHECK(vkResetCommandBuffer(command_buffer, 0));
        record(command_buffer, &r, graphics, &target, pipeline, layout, set);
    }
    if (option_listed(options, "resubmit") || option_listed(options, "rerecord"))
        submit(device, queue, command_buffer);

    printf("result");
    for (int k = 0; k < RESULT_WORDS; ++k) printf(" %u", result_words[k]);
    printf("\n");

    vkDestroyCommandPool(device, command_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, module, NULL);
    if (graphics) {
        vkDestroyShaderModule(device, vert, NULL);
        vkDestroyFramebuffer(device, target.framebuffer, NULL);
        destroy_image_and_view(device, target.target, target.target_memory, target.target_view);
        vkDestroyRenderPass(device, target.render_pass, NULL);
    }
    vkDestroyDescriptorPool(device, pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    if (r.sampler) vkDestroySampler(device, r.sampler, NULL);
    if (r.image_view) vkDestroyImageView(device, r.image_view, NULL);
    vkDestroyImage(device, r.image, NULL);
    if (r.image_memory) vkFreeMemory(device, r.image_memory, NULL);
    if (r.texel_view) vkDestroyBufferView(device, r.texel_view, NULL);
    if (r.buffer) vkDestroyBuffer(device, r.buffer, NULL);
    if (r.buffer_memory) vkFreeMemory(device, r.buffer_memory, NULL);
    vkUnmapMemory(device, results_memory);
    vkDestroyBuffer(device, results, NULL);
    vkFreeMemory(device, results_memory, NULL);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
