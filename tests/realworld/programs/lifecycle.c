/* Instance and device life cycles a C program may go through (issue 13, items 2 and 3).
 *
 * usage: lifecycle SHADER.spv [--rounds N] [--at-exit]
 * Each round creates an instance and a device, runs 8 dispatches of the shader (region.comp's
 * interface: one storage buffer array, push constants base and bad index) over a buffer, and
 * prints "round <n> <fnv1a hex of the buffer>", then destroys everything. With --at-exit an
 * atexit handler, registered before the first instance, runs one more round on the last
 * device and destroys it and its instance: it runs after any handler a layer registers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#define CHECK(call)                                                                       \
    do {                                                                                  \
        VkResult result_ = (call);                                                        \
        if (result_ != VK_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #call, (int)result_); \
            exit(2);                                                                      \
        }                                                                                 \
    } while (0)

enum { LOCAL = 64, DISPATCHES = 8 };

typedef struct {
    VkInstance instance;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
} Context;

static const char *shader_path;
static Context exit_context;

static Context open_context(void) {
    Context context;
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "gpuav-lifecycle";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo instance_info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    instance_info.pApplicationInfo = &app;
    CHECK(vkCreateInstance(&instance_info, NULL, &context.instance));
    uint32_t count = 1;
    VkResult enumerated = vkEnumeratePhysicalDevices(context.instance, &count, &context.physical);
    if ((enumerated != VK_SUCCESS && enumerated != VK_INCOMPLETE) || count == 0) {
        fprintf(stderr, "no Vulkan device\n");
        exit(2);
    }
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo device_info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    device_info.queueCreateInfoCount = 1;
    device_info.pQueueCreateInfos = &queue_info;
    CHECK(vkCreateDevice(context.physical, &device_info, NULL, &context.device));
    vkGetDeviceQueue(context.device, 0, 0, &context.queue);
    return context;
}

static void close_context(Context *context) {
    CHECK(vkDeviceWaitIdle(context->device));
    vkDestroyDevice(context->device, NULL);
    vkDestroyInstance(context->instance, NULL);
}

static uint32_t fnv1a(const uint8_t *bytes, size_t count) {
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < count; ++i) hash = (hash ^ bytes[i]) * 16777619u;
    return hash;
}

static VkShaderModule load_shader(VkDevice device) {
    FILE *file = fopen(shader_path, "rb");
    if (file == NULL) {
        perror(shader_path);
        exit(2);
    }
    static uint32_t code[1 << 16];
    size_t size = fread(code, 1, sizeof code, file);
    fclose(file);
    VkShaderModuleCreateInfo info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = size;
    info.pCode = code;
    VkShaderModule module;
    CHECK(vkCreateShaderModule(device, &info, NULL, &module));
    return module;
}

static uint32_t host_memory_type(const Context *context, uint32_t bits) {
    VkPhysicalDeviceMemoryProperties properties;
    vkGetPhysicalDeviceMemoryProperties(context->physical, &properties);
    VkMemoryPropertyFlags wanted =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t i = 0; i < properties.memoryTypeCount; ++i)
        if ((bits & (1u << i)) && (properties.memoryTypes[i].propertyFlags & wanted) == wanted)
            return i;
    fprintf(stderr, "no host-visible memory\n");
    exit(2);
}

/* The buffer's hash after DISPATCHES dispatches, each over its own region. */
static uint32_t run_round(const Context *context) {
    VkDevice device = context->device;
    VkDeviceSize size = DISPATCHES * LOCAL * 4;
    VkBufferCreateInfo buffer_info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    buffer_info.size = size;
    buffer_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    VkBuffer buffer;
    CHECK(vkCreateBuffer(device, &buffer_info, NULL, &buffer));
    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(device, buffer, &requirements);
    VkMemoryAllocateInfo allocate_info = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate_info.allocationSize = requirements.size;
    allocate_info.memoryTypeIndex = host_memory_type(context, requirements.memoryTypeBits);
    VkDeviceMemory memory;
    CHECK(vkAllocateMemory(device, &allocate_info, NULL, &memory));
    CHECK(vkBindBufferMemory(device, buffer, memory, 0));
    uint32_t *values;
    CHECK(vkMapMemory(device, memory, 0, size, 0, (void **)&values));
    for (uint32_t i = 0; i < DISPATCHES * LOCAL; ++i) values[i] = i * 7u + 3u;

    VkDescriptorSetLayoutBinding binding = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                            VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    VkDescriptorSetLayoutCreateInfo set_layout_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_layout_info.bindingCount = 1;
    set_layout_info.pBindings = &binding;
    VkDescriptorSetLayout set_layout;
    CHECK(vkCreateDescriptorSetLayout(device, &set_layout_info, NULL, &set_layout));
    VkPushConstantRange push_range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, 8};
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push_range;
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(device, &layout_info, NULL, &layout));
    VkComputePipelineCreateInfo pipeline_info = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    pipeline_info.stage.module = load_shader(device);
    pipeline_info.stage.pName = "main";
    pipeline_info.layout = layout;
    VkPipeline pipeline;
    CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, NULL, &pipeline));

    VkDescriptorPoolSize pool_size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1};
    VkDescriptorPoolCreateInfo descriptor_pool_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    descriptor_pool_info.maxSets = 1;
    descriptor_pool_info.poolSizeCount = 1;
    descriptor_pool_info.pPoolSizes = &pool_size;
    VkDescriptorPool descriptor_pool;
    CHECK(vkCreateDescriptorPool(device, &descriptor_pool_info, NULL, &descriptor_pool));
    VkDescriptorSetAllocateInfo set_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    set_info.descriptorPool = descriptor_pool;
    set_info.descriptorSetCount = 1;
    set_info.pSetLayouts = &set_layout;
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(device, &set_info, &set));
    VkDescriptorBufferInfo described = {buffer, 0, size};
    VkWriteDescriptorSet write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set;
    write.descriptorCount = 1;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = &described;
    vkUpdateDescriptorSets(device, 1, &write, 0, NULL);

    VkCommandPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(device, &pool_info, NULL, &pool));
    VkCommandBufferAllocateInfo command_info = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    command_info.commandPool = pool;
    command_info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    command_info.commandBufferCount = 1;
    VkCommandBuffer commands;
    CHECK(vkAllocateCommandBuffers(device, &command_info, &commands));
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    CHECK(vkBeginCommandBuffer(commands, &begin));
    vkCmdBindPipeline(commands, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(commands, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                            NULL);
    for (uint32_t i = 0; i < DISPATCHES; ++i) {
        uint32_t constants[2] = {i * LOCAL, 0xFFFFFFFFu};
        vkCmdPushConstants(commands, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, constants);
        vkCmdDispatch(commands, 1, 1, 1);
    }
    CHECK(vkEndCommandBuffer(commands));
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(device, &fence_info, NULL, &fence));
    VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &commands;
    CHECK(vkQueueSubmit(context->queue, 1, &submit, fence));
    CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
    uint32_t hash = fnv1a((const uint8_t *)values, (size_t)size);

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, pool, NULL);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyShaderModule(device, pipeline_info.stage.module, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    vkUnmapMemory(device, memory);
    vkDestroyBuffer(device, buffer, NULL);
    vkFreeMemory(device, memory, NULL);
    return hash;
}

static void finish_at_exit(void) {
    printf("at-exit %08x\n", run_round(&exit_context));
    close_context(&exit_context);
    printf("at-exit closed\n");
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: lifecycle SHADER.spv [--rounds N] [--at-exit]\n");
        return 2;
    }
    shader_path = argv[1];
    int rounds = 1, at_exit = 0;
    for (int i = 2; i < argc; ++i) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--at-exit") == 0) at_exit = 1;
    }
    if (at_exit) atexit(finish_at_exit);
    for (int round = 0; round < rounds; ++round) {
        Context context = open_context();
        printf("round %d %08x\n", round, run_round(&context));
        fflush(stdout);
        if (at_exit && round == rounds - 1) exit_context = context;
        else close_context(&context);
    }
    return 0;
}
