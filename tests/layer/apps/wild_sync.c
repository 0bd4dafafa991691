/* wild_app's synchronization scenario: wait-before-signal with a timeline semaphore. The first
 * submission waits for a value the host signals only after a second, independent submission
 * on the same queue has gone in; a layer that waits for the queue inside that second
 * vkQueueSubmit would wait forever. In the -empty variant the first submission is the wait
 * alone (no command buffers); its command buffer is submitted afterwards. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "wild.h"

enum { REGIONS = 8 };

static VkCommandBuffer record(Context *ctx, Compute *c, uint32_t which) {
    VkCommandBuffer cb = begin_one(ctx, ctx->pool, 0);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->pipelines[2]);
    vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, c->plain_layout, 0, 1, &c->set,
                            0, NULL);
    dispatches(cb, c->plain_layout, REGIONS, which);
    CHECK(vkEndCommandBuffer(cb));
    return cb;
}

/* Two storage buffers (the second holding i * 1), the compute pipelines over them, and a
 * timeline semaphore at 0. */
static VkSemaphore make_timeline_compute(Context *ctx, Buffer buffers[2], Compute *c) {
    for (int b = 0; b < 2; ++b) {
        buffers[b] = make_buffer(ctx, REGIONS * LOCAL * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        for (uint32_t i = 0; i < REGIONS * LOCAL; ++i) ((uint32_t *)buffers[b].mapped)[i] = i * b;
    }
    make_compute(ctx, c, buffers);
    VkSemaphoreTypeCreateInfo type = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    VkSemaphoreCreateInfo semaphore_info = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    VkSemaphore timeline;
    CHECK(vkCreateSemaphore(ctx->device, &semaphore_info, allocator, &timeline));
    return timeline;
}

void wait_before_signal_scenario(Context *ctx, int empty) {
    Buffer buffers[2];
    Compute c;
    VkSemaphore timeline = make_timeline_compute(ctx, buffers, &c);

    VkCommandBuffer waiting = record(ctx, &c, 0);
    VkCommandBuffer independent = record(ctx, &c, 1);
    uint64_t value = 1;
    VkTimelineSemaphoreSubmitInfo values = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.waitSemaphoreValueCount = 1;
    values.pWaitSemaphoreValues = &value;
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    VkSubmitInfo first = one(&waiting);
    if (empty) first.commandBufferCount = 0; /* the wait alone */
    first.pNext = &values;
    first.waitSemaphoreCount = 1;
    first.pWaitSemaphores = &timeline;
    first.pWaitDstStageMask = &stage;
    CHECK(vkQueueSubmit(ctx->queue, 1, &first, VK_NULL_HANDLE));
    VkSubmitInfo second = one(&independent);
    CHECK(vkQueueSubmit(ctx->queue, 1, &second, VK_NULL_HANDLE));
    VkSemaphoreSignalInfo signal = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    signal.semaphore = timeline;
    signal.value = 1;
    CHECK(vkSignalSemaphore(ctx->device, &signal));
    CHECK(vkQueueWaitIdle(ctx->queue));
    if (empty) submit_wait(ctx, waiting);

    uint32_t hashes[2] = {fnv1a(buffers[0].mapped, buffers[0].size),
                          fnv1a(buffers[1].mapped, buffers[1].size)};
    printf("%s %08x\n", empty ? "wait-before-signal-empty" : "wait-before-signal",
           fnv1a(hashes, sizeof hashes));
    if (!ctx->leak) {
        VkCommandBuffer both[2] = {waiting, independent};
        vkFreeCommandBuffers(ctx->device, ctx->pool, 2, both);
        vkDestroySemaphore(ctx->device, timeline, allocator);
    }
    destroy_compute(ctx, &c);
    free_buffer(ctx, &buffers[0]);
    free_buffer(ctx, &buffers[1]);
}

/* The app learns of completion only through vkWaitSemaphores: one submission waits for timeline
 * value 1 (signalled by the host afterwards) and signals value 2, which the host waits for
 * (unless !wait: then it learns nothing, and prints 0 for its results). With --leak 2 the app
 * then exits without destroying its device: the layer must read the submission back at one
 * of those points, or at exit. */
void wait_semaphores_scenario(Context *ctx, int wait) {
    Buffer buffers[2];
    Compute c;
    VkSemaphore timeline = make_timeline_compute(ctx, buffers, &c);

    VkCommandBuffer cb = record(ctx, &c, 0);
    uint64_t wait_value = 1, signal_value = 2;
    VkTimelineSemaphoreSubmitInfo values = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.waitSemaphoreValueCount = 1;
    values.pWaitSemaphoreValues = &wait_value;
    values.signalSemaphoreValueCount = 1;
    values.pSignalSemaphoreValues = &signal_value;
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    VkSubmitInfo submit = one(&cb);
    submit.pNext = &values;
    submit.waitSemaphoreCount = 1;
    submit.pWaitSemaphores = &timeline;
    submit.pWaitDstStageMask = &stage;
    submit.signalSemaphoreCount = 1;
    submit.pSignalSemaphores = &timeline;
    CHECK(vkQueueSubmit(ctx->queue, 1, &submit, VK_NULL_HANDLE));
    VkSemaphoreSignalInfo signal = {VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO};
    signal.semaphore = timeline;
    signal.value = 1;
    CHECK(vkSignalSemaphore(ctx->device, &signal));
    VkSemaphoreWaitInfo wait_info = {VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO};
    wait_info.semaphoreCount = 1;
    wait_info.pSemaphores = &timeline;
    wait_info.pValues = &signal_value;
    if (!wait) {
        printf("submit-and-exit 0\n");
        fflush(stdout);
        return;
    }
    CHECK(vkWaitSemaphores(ctx->device, &wait_info, UINT64_MAX));

    uint32_t hashes[2] = {fnv1a(buffers[0].mapped, buffers[0].size),
                          fnv1a(buffers[1].mapped, buffers[1].size)};
    printf("wait-semaphores %08x\n", fnv1a(hashes, sizeof hashes));
    fflush(stdout);
    if (ctx->leak) return;
    vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &cb);
    vkDestroySemaphore(ctx->device, timeline, allocator);
    destroy_compute(ctx, &c);
    free_buffer(ctx, &buffers[0]);
    free_buffer(ctx, &buffers[1]);
}

/* The end of a process, as when the layer's interpreter has finalized (C++ destructors, atexit
 * handlers): pipelines made before, then gpuav's Python side retired through the layer
 * library's own gpuav_python_retire (what its exit handlers call), then dispatches recorded
 * and submitted with those pipelines.
 * Without a layer (or without gpuav's library loaded) it is a plain compute run. */
static int find_gpuav_library(struct dl_phdr_info *info, size_t size, void *found) {
    (void)size;
    if (strstr(info->dlpi_name, "libVkLayer_gpuav_gpu_assisted") != NULL) {
        *(void **)found = dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
        return 1;
    }
    return 0;
}

void python_gone_scenario(Context *ctx) {
    Buffer buffers[2];
    Compute c;
    VkSemaphore timeline = make_timeline_compute(ctx, buffers, &c);
    void *library = NULL;
    dl_iterate_phdr(find_gpuav_library, &library);
    if (library != NULL) {
        void (*retire)(void) = (void (*)(void))dlsym(library, "gpuav_python_retire");
        if (retire != NULL) retire();
    }
    VkCommandBuffer cb = record(ctx, &c, 0);
    submit_wait(ctx, cb);
    uint32_t hashes[2] = {fnv1a(buffers[0].mapped, buffers[0].size),
                          fnv1a(buffers[1].mapped, buffers[1].size)};
    printf("python-gone %08x\n", fnv1a(hashes, sizeof hashes));
    vkFreeCommandBuffers(ctx->device, ctx->pool, 1, &cb);
    vkDestroySemaphore(ctx->device, timeline, allocator);
    destroy_compute(ctx, &c);
    free_buffer(ctx, &buffers[0]);
    free_buffer(ctx, &buffers[1]);
}

/* -- two threads, each submitting and waiting ITERATIONS times with a timeline wait ---------
 * The waits are already satisfied, but a layer must treat them as possibly host-signaled and
 * read back later: from the other thread's vkWaitForFences, concurrently with this submit. */

enum { ITERATIONS = 40 };

typedef struct {
    Context *ctx;
    VkCommandBuffer cb;
    VkSemaphore timeline;
    pthread_mutex_t *queue_lock;
} Submitter;

static void *submit_loop(void *argument) {
    Submitter *s = argument;
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(s->ctx->device, &fence_info, allocator, &fence));
    uint64_t value = 1;
    VkTimelineSemaphoreSubmitInfo values = {VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO};
    values.waitSemaphoreValueCount = 1;
    values.pWaitSemaphoreValues = &value;
    VkPipelineStageFlags stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
    VkSubmitInfo submit = one(&s->cb);
    submit.pNext = &values;
    submit.waitSemaphoreCount = 1;
    submit.pWaitSemaphores = &s->timeline;
    submit.pWaitDstStageMask = &stage;
    for (int i = 0; i < ITERATIONS; ++i) {
        pthread_mutex_lock(s->queue_lock);
        CHECK(vkQueueSubmit(s->ctx->queue, 1, &submit, fence));
        pthread_mutex_unlock(s->queue_lock);
        CHECK(vkWaitForFences(s->ctx->device, 1, &fence, VK_TRUE, UINT64_MAX));
        CHECK(vkResetFences(s->ctx->device, 1, &fence));
    }
    vkDestroyFence(s->ctx->device, fence, allocator);
    return NULL;
}

void threads_timeline_scenario(Context *ctx) {
    Buffer buffers[2];
    for (int b = 0; b < 2; ++b) {
        buffers[b] = make_buffer(ctx, REGIONS * LOCAL * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT);
        for (uint32_t i = 0; i < REGIONS * LOCAL; ++i) ((uint32_t *)buffers[b].mapped)[i] = i;
    }
    Compute c;
    make_compute(ctx, &c, buffers);
    VkSemaphoreTypeCreateInfo type = {VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
    type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
    type.initialValue = 1;
    VkSemaphoreCreateInfo semaphore_info = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &type};
    VkSemaphore timeline;
    CHECK(vkCreateSemaphore(ctx->device, &semaphore_info, allocator, &timeline));
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    Submitter submitters[2] = {{ctx, record(ctx, &c, 0), timeline, &lock},
                               {ctx, record(ctx, &c, 1), timeline, &lock}};
    pthread_t threads[2];
    for (int t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, submit_loop, &submitters[t]);
    for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
    uint32_t hashes[2] = {fnv1a(buffers[0].mapped, buffers[0].size),
                          fnv1a(buffers[1].mapped, buffers[1].size)};
    printf("threads-timeline %08x\n", fnv1a(hashes, sizeof hashes));
    if (!ctx->leak) {
        VkCommandBuffer both[2] = {submitters[0].cb, submitters[1].cb};
        vkFreeCommandBuffers(ctx->device, ctx->pool, 2, both);
        vkDestroySemaphore(ctx->device, timeline, allocator);
    }
    destroy_compute(ctx, &c);
    free_buffer(ctx, &buffers[0]);
    free_buffer(ctx, &buffers[1]);
}
