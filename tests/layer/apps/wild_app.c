/* A Vulkan 1.3 app in C using patterns real applications use and c_app.c does not: push
 * descriptors, update templates, pipeline caches, derivative pipelines, specialization
 * constants, 10k dispatches in one command buffer, one-time and simultaneous-use command
 * buffers, empty and semaphore-only submits, fence-less submits, recording and submitting from
 * two threads, compute shader objects, a second VkDevice, objects the app forgets to destroy.
 * Graphics scenarios are in wild_graphics.c. It knows nothing of gpuav.
 *
 * Instance, device and main are in wild_main.c.
 */
#include <pthread.h>
#include <string.h>

#include "wild.h"

enum { THREAD_DISPATCHES = 500 };

int bad_dispatch = -1;

uint32_t fnv1a(const void *bytes, size_t count) {
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < count; ++i) hash = (hash ^ ((const uint8_t *)bytes)[i]) * 16777619u;
    return hash;
}

uint32_t *load_code(Context *ctx, const char *name, size_t *size) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.spv", ctx->spv_dir, name);
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        exit(2);
    }
    fseek(file, 0, SEEK_END);
    *size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    uint32_t *code = malloc(*size);
    if (fread(code, 1, *size, file) != *size) exit(2);
    fclose(file);
    return code;
}

VkShaderModule load_module(Context *ctx, const char *name) {
    VkShaderModuleCreateInfo info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    uint32_t *code = load_code(ctx, name, &info.codeSize);
    info.pCode = code;
    VkShaderModule module;
    CHECK(vkCreateShaderModule(ctx->device, &info, allocator, &module));
    free(code);
    return module;
}

Buffer make_buffer(Context *ctx, VkDeviceSize size, VkBufferUsageFlags usage) {
    Buffer result = {VK_NULL_HANDLE, VK_NULL_HANDLE, NULL, size};
    VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = usage;
    CHECK(vkCreateBuffer(ctx->device, &info, allocator, &result.buffer));
    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(ctx->device, result.buffer, &requirements);
    VkMemoryPropertyFlags flags =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryAllocateInfo allocate = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = UINT32_MAX;
    for (uint32_t i = 0; i < ctx->memory.memoryTypeCount; ++i)
        if ((requirements.memoryTypeBits & (1u << i)) &&
            (ctx->memory.memoryTypes[i].propertyFlags & flags) == flags) {
            allocate.memoryTypeIndex = i;
            break;
        }
    CHECK(vkAllocateMemory(ctx->device, &allocate, allocator, &result.memory));
    CHECK(vkBindBufferMemory(ctx->device, result.buffer, result.memory, 0));
    CHECK(vkMapMemory(ctx->device, result.memory, 0, size, 0, &result.mapped));
    memset(result.mapped, 0, size);
    return result;
}

void free_buffer(Context *ctx, Buffer *buffer) {
    if (ctx->leak) return;
    vkDestroyBuffer(ctx->device, buffer->buffer, allocator);
    vkFreeMemory(ctx->device, buffer->memory, allocator);
}

VkCommandBuffer begin_one(Context *ctx, VkCommandPool pool, VkCommandBufferUsageFlags flags) {
    VkCommandBufferAllocateInfo info = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = pool;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkCommandBuffer command_buffer;
    CHECK(vkAllocateCommandBuffers(ctx->device, &info, &command_buffer));
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = flags;
    CHECK(vkBeginCommandBuffer(command_buffer, &begin));
    return command_buffer;
}

void submit_wait(Context *ctx, VkCommandBuffer command_buffer) {
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(ctx->device, &fence_info, allocator, &fence));
    VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &command_buffer;
    CHECK(vkQueueSubmit(ctx->queue, 1, &submit, fence));
    CHECK(vkWaitForFences(ctx->device, 1, &fence, VK_TRUE, UINT64_MAX));
    vkDestroyFence(ctx->device, fence, allocator);
}

/* -- compute objects: set 0 is binding 0, an array of two storage buffers ------------------ */


static VkDescriptorSetLayout set_layout(Context *ctx, VkDescriptorSetLayoutCreateFlags flags) {
    VkDescriptorSetLayoutBinding binding = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2,
                                            VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo info = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    info.flags = flags;
    info.bindingCount = 1;
    info.pBindings = &binding;
    VkDescriptorSetLayout layout;
    CHECK(vkCreateDescriptorSetLayout(ctx->device, &info, allocator, &layout));
    return layout;
}

static VkPipelineLayout pipeline_layout(Context *ctx, VkDescriptorSetLayout set) {
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
    VkPipelineLayoutCreateInfo info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    info.setLayoutCount = 1;
    info.pSetLayouts = &set;
    info.pushConstantRangeCount = 1;
    info.pPushConstantRanges = &push;
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(ctx->device, &info, allocator, &layout));
    return layout;
}

static VkDescriptorUpdateTemplate make_template(Context *ctx, Compute *c, int push) {
    VkDescriptorUpdateTemplateEntry entry = {0, 0, 2, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 0,
                                             sizeof(VkDescriptorBufferInfo)};
    VkDescriptorUpdateTemplateCreateInfo info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_UPDATE_TEMPLATE_CREATE_INFO};
    info.descriptorUpdateEntryCount = 1;
    info.pDescriptorUpdateEntries = &entry;
    info.templateType = push ? VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_PUSH_DESCRIPTORS_KHR
                             : VK_DESCRIPTOR_UPDATE_TEMPLATE_TYPE_DESCRIPTOR_SET;
    info.descriptorSetLayout = push ? c->push_set : c->plain_set;
    info.pipelineBindPoint = VK_PIPELINE_BIND_POINT_COMPUTE;
    info.pipelineLayout = push ? c->push_layout : c->plain_layout;
    VkDescriptorUpdateTemplate result;
    CHECK(vkCreateDescriptorUpdateTemplate(ctx->device, &info, allocator, &result));
    return result;
}

void make_compute(Context *ctx, Compute *c, const Buffer *buffers) {
    c->push_set = set_layout(ctx, VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR);
    c->plain_set = set_layout(ctx, 0);
    c->push_layout = pipeline_layout(ctx, c->push_set);
    c->plain_layout = pipeline_layout(ctx, c->plain_set);
    VkPipelineCacheCreateInfo cache_info = {VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    CHECK(vkCreatePipelineCache(ctx->device, &cache_info, allocator, &c->cache));

    VkShaderModule module = load_module(ctx, "wild.comp");
    /* MULTIPLIER, then COUNT (the array length, 1 unless specialized) */
    uint32_t constants[3][2] = {{5, 2}, {7, 2}, {9, 2}};
    VkSpecializationMapEntry entries[2] = {{0, 0, 4}, {1, 4, 4}};
    VkSpecializationInfo specialization[3];
    VkComputePipelineCreateInfo infos[3];
    for (int i = 0; i < 3; ++i) {
        specialization[i] = (VkSpecializationInfo){2, entries, 8, constants[i]};
        memset(&infos[i], 0, sizeof infos[i]);
        infos[i].sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
        infos[i].stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        infos[i].stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        infos[i].stage.module = module;
        infos[i].stage.pName = "main";
        infos[i].stage.pSpecializationInfo = &specialization[i];
        infos[i].layout = i == 2 ? c->plain_layout : c->push_layout;
        infos[i].basePipelineIndex = -1;
    }
    infos[0].flags = VK_PIPELINE_CREATE_ALLOW_DERIVATIVES_BIT;
    CHECK(vkCreateComputePipelines(ctx->device, c->cache, 1, &infos[0], allocator, &c->pipelines[0]));
    infos[1].flags = VK_PIPELINE_CREATE_DERIVATIVE_BIT;
    infos[1].basePipelineHandle = c->pipelines[0];
    /* two in one call, through the cache filled by the first */
    VkPipeline two[2];
    CHECK(vkCreateComputePipelines(ctx->device, c->cache, 2, &infos[1], allocator, two));
    c->pipelines[1] = two[0];
    c->pipelines[2] = two[1];
    vkDestroyShaderModule(ctx->device, module, allocator);

    c->push_template = make_template(ctx, c, 1);
    c->plain_template = make_template(ctx, c, 0);
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
    VkDescriptorPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    CHECK(vkCreateDescriptorPool(ctx->device, &pool_info, allocator, &c->pool));
    VkDescriptorSetAllocateInfo allocate = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = c->pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &c->plain_set;
    CHECK(vkAllocateDescriptorSets(ctx->device, &allocate, &c->set));
    VkDescriptorBufferInfo infos_data[2] = {{buffers[0].buffer, 0, VK_WHOLE_SIZE},
                                            {buffers[1].buffer, 0, VK_WHOLE_SIZE}};
    vkUpdateDescriptorSetWithTemplate(ctx->device, c->set, c->plain_template, infos_data);
}

void destroy_compute(Context *ctx, Compute *c) {
    if (ctx->leak) return;
    for (int i = 0; i < 3; ++i) vkDestroyPipeline(ctx->device, c->pipelines[i], allocator);
    vkDestroyPipelineCache(ctx->device, c->cache, allocator);
    vkDestroyDescriptorUpdateTemplate(ctx->device, c->push_template, allocator);
    vkDestroyDescriptorUpdateTemplate(ctx->device, c->plain_template, allocator);
    vkDestroyDescriptorPool(ctx->device, c->pool, allocator);
    vkDestroyPipelineLayout(ctx->device, c->push_layout, allocator);
    vkDestroyPipelineLayout(ctx->device, c->plain_layout, allocator);
    vkDestroyDescriptorSetLayout(ctx->device, c->push_set, allocator);
    vkDestroyDescriptorSetLayout(ctx->device, c->plain_set, allocator);
}

/* Dispatch `count` regions of 64 words of buffer `which` (0 or 1; 2 at bad_dispatch). */
void dispatches(VkCommandBuffer cb, VkPipelineLayout layout, uint32_t count,
                       uint32_t which) {
    for (uint32_t i = 0; i < count; ++i) {
        uint32_t constants[2] = {i * LOCAL, (int)i == bad_dispatch ? 2u : which};
        vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, constants);
        vkCmdDispatch(cb, 1, 1, 1);
    }
}

VkSubmitInfo one(const VkCommandBuffer *command_buffer) {
    VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = command_buffer;
    return submit;
}

static void compute_scenario(Context *ctx, uint32_t count, const char *label) {
    Buffer buffers[2];
    for (int b = 0; b < 2; ++b) {
        buffers[b] = make_buffer(ctx, (VkDeviceSize)count * LOCAL * 4,
                                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        for (uint32_t i = 0; i < count * LOCAL; ++i) ((uint32_t *)buffers[b].mapped)[i] = i + b;
    }
    Compute c;
    make_compute(ctx, &c, buffers);
    PFN_vkCmdPushDescriptorSetKHR push_set = LOAD(ctx, vkCmdPushDescriptorSetKHR);
    PFN_vkCmdPushDescriptorSetWithTemplateKHR push_template =
        LOAD(ctx, vkCmdPushDescriptorSetWithTemplateKHR);
    VkDescriptorBufferInfo infos[2] = {{buffers[0].buffer, 0, VK_WHOLE_SIZE},
                                       {buffers[1].buffer, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.descriptorCount = 2;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = infos;
    VkMemoryBarrier barrier = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                               VK_ACCESS_SHADER_WRITE_BIT,
                               VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
#define BARRIER(cb)                                                                      \
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,                       \
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &barrier, 0, NULL, 0, \
                         NULL)

    /* one-time submit: push descriptors, base and derivative pipelines, then a plain set */
    VkCommandBuffer once = begin_one(ctx, ctx->pool, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkCmdBindPipeline(once, VK_PIPELINE_BIND_POINT_COMPUTE, c.pipelines[0]);
    push_set(once, VK_PIPELINE_BIND_POINT_COMPUTE, c.push_layout, 0, 1, &write);
    dispatches(once, c.push_layout, count, 0);
    BARRIER(once);
    vkCmdBindPipeline(once, VK_PIPELINE_BIND_POINT_COMPUTE, c.pipelines[1]);
    push_template(once, c.push_template, c.push_layout, 0, infos);
    dispatches(once, c.push_layout, count, 1);
    BARRIER(once);
    vkCmdBindPipeline(once, VK_PIPELINE_BIND_POINT_COMPUTE, c.pipelines[2]);
    vkCmdBindDescriptorSets(once, VK_PIPELINE_BIND_POINT_COMPUTE, c.plain_layout, 0, 1, &c.set,
                            0, NULL);
    dispatches(once, c.plain_layout, count < 4 ? count : 4, 0);
    CHECK(vkEndCommandBuffer(once));
    submit_wait(ctx, once);

    /* simultaneous use, submitted twice in one call and once more without a fence */
    VkCommandBuffer twice =
        begin_one(ctx, ctx->pool, VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT);
    BARRIER(twice);
    vkCmdBindPipeline(twice, VK_PIPELINE_BIND_POINT_COMPUTE, c.pipelines[2]);
    vkCmdBindDescriptorSets(twice, VK_PIPELINE_BIND_POINT_COMPUTE, c.plain_layout, 0, 1, &c.set,
                            0, NULL);
    dispatches(twice, c.plain_layout, 8, 1);
    CHECK(vkEndCommandBuffer(twice));
    VkSubmitInfo both[2] = {one(&twice), one(&twice)};
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(ctx->device, &fence_info, allocator, &fence));
    CHECK(vkQueueSubmit(ctx->queue, 2, both, fence));
    CHECK(vkWaitForFences(ctx->device, 1, &fence, VK_TRUE, UINT64_MAX));
    CHECK(vkResetFences(ctx->device, 1, &fence));
    CHECK(vkQueueSubmit(ctx->queue, 1, both, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(ctx->queue));

    /* no command buffers at all: a fence only, then a semaphore signalled and waited on */
    CHECK(vkQueueSubmit(ctx->queue, 0, NULL, fence));
    CHECK(vkWaitForFences(ctx->device, 1, &fence, VK_TRUE, UINT64_MAX));
    VkSemaphoreCreateInfo semaphore_info = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
    VkSemaphore semaphore;
    CHECK(vkCreateSemaphore(ctx->device, &semaphore_info, allocator, &semaphore));
    VkSubmitInfo signal = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    signal.signalSemaphoreCount = 1;
    signal.pSignalSemaphores = &semaphore;
    CHECK(vkQueueSubmit(ctx->queue, 1, &signal, VK_NULL_HANDLE));
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
    VkSubmitInfo wait = one(&twice);
    wait.waitSemaphoreCount = 1;
    wait.pWaitSemaphores = &semaphore;
    wait.pWaitDstStageMask = &stage;
    CHECK(vkQueueSubmit(ctx->queue, 1, &wait, VK_NULL_HANDLE));
    CHECK(vkDeviceWaitIdle(ctx->device));

    uint32_t hashes[2] = {fnv1a(buffers[0].mapped, buffers[0].size),
                          fnv1a(buffers[1].mapped, buffers[1].size)};
    printf("%s %08x\n", label, fnv1a(hashes, sizeof hashes));
    if (!ctx->leak) {
        vkDestroySemaphore(ctx->device, semaphore, allocator);
        vkDestroyFence(ctx->device, fence, allocator);
        vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &twice);
    }
    destroy_compute(ctx, &c);
    free_buffer(ctx, &buffers[0]);
    free_buffer(ctx, &buffers[1]);
}

/* -- two threads: each records on its own pool, then submits to the shared queue ---------- */

typedef struct {
    Context *ctx;
    Compute *compute;
    uint32_t which;
    pthread_mutex_t *queue_lock;
} Worker;

static void *work(void *argument) {
    Worker *w = argument;
    VkCommandPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.queueFamilyIndex = w->ctx->family;
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(w->ctx->device, &pool_info, allocator, &pool));
    VkCommandBuffer cb = begin_one(w->ctx, pool, 0);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, w->compute->pipelines[2]);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, w->compute->plain_layout, 0, 1,
                            &w->compute->set, 0, NULL);
    dispatches(cb, w->compute->plain_layout, THREAD_DISPATCHES, w->which);
    CHECK(vkEndCommandBuffer(cb));
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(w->ctx->device, &fence_info, allocator, &fence));
    VkSubmitInfo submit = one(&cb);
    pthread_mutex_lock(w->queue_lock); /* a VkQueue is externally synchronized */
    CHECK(vkQueueSubmit(w->ctx->queue, 1, &submit, fence));
    pthread_mutex_unlock(w->queue_lock);
    CHECK(vkWaitForFences(w->ctx->device, 1, &fence, VK_TRUE, UINT64_MAX));
    vkDestroyFence(w->ctx->device, fence, allocator);
    vkDestroyCommandPool(w->ctx->device, pool, allocator);
    return NULL;
}

static void threads_scenario(Context *ctx) {
    Buffer buffers[2];
    for (int b = 0; b < 2; ++b) {
        buffers[b] = make_buffer(ctx, THREAD_DISPATCHES * LOCAL * 4,
                                 VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        for (uint32_t i = 0; i < THREAD_DISPATCHES * LOCAL; ++i)
            ((uint32_t *)buffers[b].mapped)[i] = 3 * i + b;
    }
    Compute c;
    make_compute(ctx, &c, buffers);
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    Worker workers[2] = {{ctx, &c, 0, &lock}, {ctx, &c, 1, &lock}};
    pthread_t threads[2];
    for (int t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, work, &workers[t]);
    for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
    uint32_t hashes[2] = {fnv1a(buffers[0].mapped, buffers[0].size),
                          fnv1a(buffers[1].mapped, buffers[1].size)};
    printf("threads %08x\n", fnv1a(hashes, sizeof hashes));
    destroy_compute(ctx, &c);
    free_buffer(ctx, &buffers[0]);
    free_buffer(ctx, &buffers[1]);
}

/* -- a compute shader object (VK_EXT_shader_object) after a pipeline in one command buffer -- */

static void shader_object_scenario(Context *ctx) {
    Buffer buffers[2];
    for (int b = 0; b < 2; ++b) {
        buffers[b] = make_buffer(ctx, 16 * LOCAL * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        for (uint32_t i = 0; i < 16 * LOCAL; ++i) ((uint32_t *)buffers[b].mapped)[i] = i ^ 5u;
    }
    Compute c;
    make_compute(ctx, &c, buffers);
    PFN_vkCreateShadersEXT create_shaders = LOAD(ctx, vkCreateShadersEXT);
    PFN_vkDestroyShaderEXT destroy_shader = LOAD(ctx, vkDestroyShaderEXT);
    PFN_vkCmdBindShadersEXT bind_shaders = LOAD(ctx, vkCmdBindShadersEXT);
    uint32_t constants[2] = {11, 2};
    VkSpecializationMapEntry entries[2] = {{0, 0, 4}, {1, 4, 4}};
    VkSpecializationInfo specialization = {2, entries, 8, constants};
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
    VkShaderCreateInfoEXT info = {VK_STRUCTURE_TYPE_SHADER_CREATE_INFO_EXT};
    info.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.codeType = VK_SHADER_CODE_TYPE_SPIRV_EXT;
    void *code = load_code(ctx, "wild.comp", &info.codeSize);
    info.pCode = code;
    info.pName = "main";
    info.setLayoutCount = 1;
    info.pSetLayouts = &c.plain_set;
    info.pushConstantRangeCount = 1;
    info.pPushConstantRanges = &push;
    info.pSpecializationInfo = &specialization;
    VkShaderEXT shader;
    CHECK(create_shaders(ctx->device, 1, &info, allocator, &shader));
    free(code);
    VkCommandBuffer cb = begin_one(ctx, ctx->pool, 0);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c.pipelines[2]);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c.plain_layout, 0, 1, &c.set, 0,
                            NULL);
    dispatches(cb, c.plain_layout, 16, 0);
    VkShaderStageFlagBits stage = VK_SHADER_STAGE_COMPUTE_BIT;
    bind_shaders(cb, 1, &stage, &shader);
    dispatches(cb, c.plain_layout, 16, 1);
    CHECK(vkEndCommandBuffer(cb));
    submit_wait(ctx, cb);
    uint32_t hashes[2] = {fnv1a(buffers[0].mapped, buffers[0].size),
                          fnv1a(buffers[1].mapped, buffers[1].size)};
    printf("shader-object %08x\n", fnv1a(hashes, sizeof hashes));
    if (!ctx->leak) {
        destroy_shader(ctx->device, shader, allocator);
        vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &cb);
    }
    destroy_compute(ctx, &c);
    free_buffer(ctx, &buffers[0]);
    free_buffer(ctx, &buffers[1]);
}

void run_compute_scenario(Context *ctx, const char *name) {
    if (!strcmp(name, "compute"))
        compute_scenario(ctx, 64, "compute");
    else if (!strcmp(name, "many"))
        compute_scenario(ctx, 10000, "many");
    else if (!strcmp(name, "threads"))
        threads_scenario(ctx);
    else if (!strcmp(name, "shader-object"))
        shader_object_scenario(ctx);
    else if (!strcmp(name, "wait-before-signal"))
        wait_before_signal_scenario(ctx, 0);
    else if (!strcmp(name, "threads-timeline"))
        threads_timeline_scenario(ctx);
    else if (!strcmp(name, "wait-before-signal-empty"))
        wait_before_signal_scenario(ctx, 1);
    else if (!strcmp(name, "wait-semaphores"))
        wait_semaphores_scenario(ctx, 1);
    else if (!strcmp(name, "submit-and-exit"))
        wait_semaphores_scenario(ctx, 0);
    else if (!strcmp(name, "python-gone"))
        python_gone_scenario(ctx);
    else
        run_graphics_scenario(ctx, name);
}

void set_bad_dispatch(int index) { bad_dispatch = index; }
