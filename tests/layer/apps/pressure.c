/* A compute app that runs under its own address-space limit (issue 13: real memory pressure).
 *
 * usage: pressure SHADER.spv [--headroom-kib N] [--command-buffers N] [--dispatches N]
 *                 [--messenger]
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
 * buffer and exits 0. VmSize at the limit's base, and over it after the wait, go to stderr
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

enum { LOCAL = 64, PUSH_BYTES = 8 };

#define CHECK(call)                                                                   \
    do {                                                                              \
        VkResult result_ = (call);                                                    \
        if (result_ != VK_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #call, result_); \
            exit(2);                                                                  \
        }                                                                             \
    } while (0)

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

static VkBool32 VKAPI_PTR on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                     VkDebugUtilsMessageTypeFlagsEXT types,
                                     const VkDebugUtilsMessengerCallbackDataEXT *data,
                                     void *user) {
    (void)types;
    (void)user;
    printf("message %d|%s|", (int)severity, data->pMessageIdName ? data->pMessageIdName : "");
    for (const char *c = data->pMessage; *c; ++c) putchar(*c == '\n' ? ' ' : *c);
    putchar('\n');
    return VK_FALSE;
}

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

static uint32_t fnv1a(const void *bytes, size_t count) {
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < count; ++i) hash = (hash ^ ((const uint8_t *)bytes)[i]) * 16777619u;
    return hash;
}

static uint32_t *read_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        exit(2);
    }
    fseek(file, 0, SEEK_END);
    *size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    uint32_t *code = malloc(*size);
    if (!code || fread(code, 1, *size, file) != *size) exit(2);
    fclose(file);
    return code;
}

typedef struct {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice physical;
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
    VkApplicationInfo application = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    application.apiVersion = VK_API_VERSION_1_3;
    VkInstanceCreateInfo info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &application;
    info.enabledExtensionCount = messenger ? 1 : 0;
    info.ppEnabledExtensionNames = extensions;
    CHECK(vkCreateInstance(&info, NULL, &app->instance));
    if (!messenger) return;
    PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
        vkGetInstanceProcAddr(app->instance, "vkCreateDebugUtilsMessengerEXT");
    VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    messenger_info.pfnUserCallback = on_message;
    CHECK(create(app->instance, &messenger_info, NULL, &app->messenger));
}

static void make_device(App *app) {
    uint32_t count = 1;
    VkResult result = vkEnumeratePhysicalDevices(app->instance, &count, &app->physical);
    if (result != VK_SUCCESS && result != VK_INCOMPLETE) exit(2);
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue.queueCount = 1;
    queue.pQueuePriorities = &priority;
    VkDeviceCreateInfo info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue;
    CHECK(vkCreateDevice(app->physical, &info, NULL, &app->device));
    vkGetDeviceQueue(app->device, 0, 0, &app->queue);
}

static void make_buffer(App *app, VkDeviceSize size) {
    VkDevice device = app->device;
    VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    info.size = size;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    CHECK(vkCreateBuffer(device, &info, NULL, &app->buffer));
    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(device, app->buffer, &requirements);
    VkPhysicalDeviceMemoryProperties memory;
    vkGetPhysicalDeviceMemoryProperties(app->physical, &memory);
    VkMemoryPropertyFlags flags =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    VkMemoryAllocateInfo allocate = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = UINT32_MAX;
    for (uint32_t i = 0; i < memory.memoryTypeCount && allocate.memoryTypeIndex == UINT32_MAX; ++i)
        if ((requirements.memoryTypeBits & (1u << i)) &&
            (memory.memoryTypes[i].propertyFlags & flags) == flags)
            allocate.memoryTypeIndex = i;
    CHECK(vkAllocateMemory(device, &allocate, NULL, &app->memory));
    CHECK(vkBindBufferMemory(device, app->buffer, app->memory, 0));
    CHECK(vkMapMemory(device, app->memory, 0, size, 0, (void **)&app->words));
    for (VkDeviceSize i = 0; i < size / 4; ++i) app->words[i] = (uint32_t)(i * 7 + 3);
}

static void make_pipeline(App *app, const char *shader) {
    VkDevice device = app->device;
    VkDescriptorSetLayoutBinding binding = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                            VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo set_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 1;
    set_info.pBindings = &binding;
    CHECK(vkCreateDescriptorSetLayout(device, &set_info, NULL, &app->set_layout));
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, PUSH_BYTES};
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &app->set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    CHECK(vkCreatePipelineLayout(device, &layout_info, NULL, &app->layout));
    VkShaderModuleCreateInfo module_info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    uint32_t *code = read_file(shader, &module_info.codeSize);
    module_info.pCode = code;
    VkShaderModule module;
    CHECK(vkCreateShaderModule(device, &module_info, NULL, &module));
    free(code);
    VkComputePipelineCreateInfo info = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.layout = app->layout;
    CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &app->pipeline));
    vkDestroyShaderModule(device, module, NULL);
    VkDescriptorPoolSize size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = 1;
    pool_info.pPoolSizes = &size;
    CHECK(vkCreateDescriptorPool(device, &pool_info, NULL, &app->descriptor_pool));
    VkDescriptorSetAllocateInfo allocate = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    allocate.descriptorPool = app->descriptor_pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &app->set_layout;
    CHECK(vkAllocateDescriptorSets(device, &allocate, &app->set));
    VkDescriptorBufferInfo buffer = {app->buffer, 0, VK_WHOLE_SIZE};
    VkWriteDescriptorSet write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = app->set;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &buffer;
    vkUpdateDescriptorSets(device, 1, &write, 0, NULL);
}

static void make_command_buffers(App *app, uint32_t count) {
    VkCommandPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    CHECK(vkCreateCommandPool(app->device, &pool_info, NULL, &app->pool));
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
static void record(App *app, uint32_t index, uint32_t dispatches) {
    VkCommandBuffer command_buffer = app->command_buffers[index];
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    UNDER_LIMIT(vkBeginCommandBuffer(command_buffer, &begin));
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, app->pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, app->layout, 0, 1,
                            &app->set, 0, NULL);
    for (uint32_t d = 0; d < dispatches; ++d) {
        uint32_t push[2] = {(index * dispatches + d) * LOCAL, 0};
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
    vkDestroyDevice(device, NULL);
    if (app->messenger) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                app->instance, "vkDestroyDebugUtilsMessengerEXT");
        destroy_messenger(app->instance, app->messenger, NULL);
    }
    vkDestroyInstance(app->instance, NULL);
}

int main(int argc, char **argv) {
    unsigned long headroom_kib = 0, command_buffers = 100, dispatches = 100;
    int messenger = 0;
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
    for (uint32_t i = 0; i < command_buffers; ++i) record(&app, i, (uint32_t)dispatches);
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
