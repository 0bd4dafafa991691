/* A compute app that runs under its own address-space limit (issue 13: real memory pressure).
 *
 * usage: pressure SHADER.spv [--headroom-kib N] [--command-buffers N] [--dispatches N]
 *                 [--messenger] [--bad-dispatch N]
 *
 * Everything the app allocates itself is made before the limit: instance, device, pipeline
 * (of SHADER, region_array.comp: each dispatch updates its own 64 words), the data buffer
 * (one region per dispatch), the command buffers and the fence. Then it caps RLIMIT_AS at its
 * current VmSize plus --headroom-kib (0: no limit), records --command-buffers command buffers
 * of --dispatches dispatches each, submits them at once and waits. Recording costs the driver
 * a little memory per command, well inside a headroom that fits it; a layer that keeps memory
 * per dispatch (gpuav's output blocks) runs into the limit.
 *
 * Prints "message <severity>|<id>|<text>" per message its messenger received, "error <call>
 * <VkResult>" and exits 3 if a call fails under the limit, else "data <fnv1a hex>" of the
 * buffer and exits 0. --bad-dispatch N sets the top bit of dispatch N's base (of the first
 * command buffer): region_array.comp then indexes its one-buffer array at 1, the first
 * error a layer sees only after the limit is set. VmSize at the limit's base, and over it after the wait, go to stderr
 * ("base-kib N size-kib N").
 *
 * 100 x 100 dispatches take lavapipe about 2.2 MiB over the base, and about 6 KiB more per
 * dispatch under gpuav's instrumentation (output blocks, one lavapipe-mapped page per block's
 * descriptor set). No test runs it yet: at the limit lavapipe segfaults inside gpuav's own
 * vkAllocateDescriptorSets (it memsets the MAP_FAILED of a failed mmap) and
 * vkCmdBindDescriptorSets.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <vulkan/vulkan.h>

#include "vk_app_common.h"

enum { LOCAL = 64, PUSH_BYTES = 8 };

/* Under the limit a failure is the app's clean out-of-memory path, not a set-up bug. */
#define UNDER_LIMIT(call)                                      \
    do {                                                       \
        VkResult result_ = (call);                             \
        if (result_ != VK_SUCCESS) {                           \
            printf("error %s %d\n", #call, (int)result_);      \
            exit(3);                                           \
        }                                                      \
    } while (0)

static char output_buffer[1 << 16]; /* stdout's buffer, so printing allocates nothing */

/* A field of /proc/self/status in KiB ("VmSize:"). */
static unsigned long status_kib(const char *field) {
    FILE *file = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long value = 0;
    if (!file) exit(2);
    while (fgets(line, sizeof line, file))
        if (!strncmp(line, field, strlen(field))) value = strtoul(line + strlen(field), NULL, 10);
    fclose(file);
    if (!value) exit(2);
    return value;
}

typedef struct {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice physical;
    VkPhysicalDeviceMemoryProperties memory_properties;
    VkDevice device;
    VkQueue queue;
    VkBuffer buffer;
    VkDeviceMemory memory;
    uint32_t *words;
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set;
    VkCommandPool pool;
    VkCommandBuffer *command_buffers;
    VkFence fence;
} App;

static void make_instance(App *app, int messenger) {
    const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    app->instance = create_instance(NULL, VK_API_VERSION_1_3, NULL, messenger ? 1 : 0, extensions);
    if (!messenger) return;
    app->messenger = create_printing_messenger(app->instance, INFO_AND_ABOVE);
}

static void make_device(App *app) {
    app->physical = first_physical_device(app->instance);
    vkGetPhysicalDeviceMemoryProperties(app->physical, &app->memory_properties);
    app->device = create_device(app->physical, NULL, 0, NULL, &app->queue);
}

static void make_buffer(App *app, VkDeviceSize size) {
    create_host_buffer(app->device, &app->memory_properties, size,
                       VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, NULL, ~0u, NULL, &app->buffer,
                       &app->memory);
    CHECK(vkMapMemory(app->device, app->memory, 0, size, 0, (void **)&app->words));
    for (VkDeviceSize i = 0; i < size / 4; ++i) app->words[i] = (uint32_t)(i * 7 + 3);
}

static void make_pipeline(App *app, const char *shader) {
    VkDevice device = app->device;
    create_compute_layouts(device, 1, PUSH_BYTES, &app->set_layout, &app->layout);
    VkShaderModule module = load_shader_module(device, shader);
    app->pipeline = create_compute_pipeline(device, app->layout, module, NULL);
    vkDestroyShaderModule(device, module, NULL);
    VkDescriptorBufferInfo buffer = {app->buffer, 0, VK_WHOLE_SIZE};
    app->set = create_storage_set(device, app->set_layout, 1, &buffer, &app->descriptor_pool);
}

static void make_command_buffers(App *app, uint32_t count) {
    app->pool = create_command_pool(app->device);
    app->command_buffers = calloc(count, sizeof *app->command_buffers);
    if (!app->command_buffers) exit(2);
    VkCommandBufferAllocateInfo info = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = app->pool;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = count;
    CHECK(vkAllocateCommandBuffers(app->device, &info, app->command_buffers));
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    CHECK(vkCreateFence(app->device, &fence_info, NULL, &app->fence));
}

/* Command buffer `index` dispatches regions index * dispatches .. (index + 1) * dispatches. */
static void record(App *app, uint32_t index, uint32_t dispatches, long bad_dispatch) {
    VkCommandBuffer command_buffer = app->command_buffers[index];
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    UNDER_LIMIT(vkBeginCommandBuffer(command_buffer, &begin));
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, app->pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, app->layout, 0, 1,
                            &app->set, 0, NULL);
    for (uint32_t d = 0; d < dispatches; ++d) {
        uint32_t push[2] = {(index * dispatches + d) * LOCAL, 0};
        if (index == 0 && (long)d == bad_dispatch) push[0] |= 0x80000000u;
        vkCmdPushConstants(command_buffer, app->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                           PUSH_BYTES, push);
        vkCmdDispatch(command_buffer, 1, 1, 1);
    }
    UNDER_LIMIT(vkEndCommandBuffer(command_buffer));
}

static void destroy(App *app) {
    VkDevice device = app->device;
    vkDestroyFence(device, app->fence, NULL);
    vkDestroyCommandPool(device, app->pool, NULL);
    free(app->command_buffers);
    vkDestroyDescriptorPool(device, app->descriptor_pool, NULL);
    vkDestroyPipeline(device, app->pipeline, NULL);
    vkDestroyPipelineLayout(device, app->layout, NULL);
    vkDestroyDescriptorSetLayout(device, app->set_layout, NULL);
    vkUnmapMemory(device, app->memory);
    vkDestroyBuffer(device, app->buffer, NULL);
    vkFreeMemory(device, app->memory, NULL);
    destroy_device_and_instance(device, app->instance, app->messenger);
}

int main(int argc, char **argv) {
    unsigned long headroom_kib = 0, command_buffers = 100, dispatches = 100;
    int messenger = 0;
    long bad_dispatch = -1;
    if (argc < 2) {
        fprintf(stderr, "usage: %s SHADER.spv [options]\n", argv[0]);
        return 2;
    }
    for (int i = 2; i < argc; ++i) {
        if (!strcmp(argv[i], "--messenger")) messenger = 1;
        else if (!strcmp(argv[i], "--headroom-kib") && i + 1 < argc)
            headroom_kib = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--command-buffers") && i + 1 < argc)
            command_buffers = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dispatches") && i + 1 < argc)
            dispatches = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--bad-dispatch") && i + 1 < argc)
            bad_dispatch = strtol(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    setvbuf(stdout, output_buffer, _IOFBF, sizeof output_buffer);
    App app = {0};
    make_instance(&app, messenger);
    make_device(&app);
    VkDeviceSize size = (VkDeviceSize)command_buffers * dispatches * LOCAL * 4;
    make_buffer(&app, size);
    make_pipeline(&app, argv[1]);
    make_command_buffers(&app, (uint32_t)command_buffers);

    unsigned long base_kib = status_kib("VmSize:");
    if (headroom_kib) {
        struct rlimit limit = {(base_kib + headroom_kib) << 10, RLIM_INFINITY};
        if (setrlimit(RLIMIT_AS, &limit)) {
            perror("setrlimit");
            return 2;
        }
    }
    for (uint32_t i = 0; i < command_buffers; ++i) record(&app, i, (uint32_t)dispatches, bad_dispatch);
    VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = (uint32_t)command_buffers;
    submit.pCommandBuffers = app.command_buffers;
    UNDER_LIMIT(vkQueueSubmit(app.queue, 1, &submit, app.fence));
    UNDER_LIMIT(vkWaitForFences(app.device, 1, &app.fence, VK_TRUE, UINT64_MAX));
    fprintf(stderr, "base-kib %lu size-kib %lu\n", base_kib, status_kib("VmSize:") - base_kib);
    printf("data %08x\n", fnv1a(app.words, (size_t)size));
    destroy(&app);
    return 0;
}
