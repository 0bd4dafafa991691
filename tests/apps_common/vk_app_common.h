/* What the small C test programs (tests/layer/apps, tests/realworld/programs, benchmarks) do
 * alike: the instance, messenger and first device, host-visible buffers, shader modules from
 * .spv files, set and pipeline layouts, one-set pools, a compute pipeline, one-shot command
 * buffers, result lines and the fnv1a hash of results. Images are in vk_image_common.h, drawing
 * in vk_graphics_common.h, ray tracing in vk_ray_tracing_common.h. Static inline so that each
 * program compiles alone (-Wall -Werror) using only what it needs; they know nothing of gpuav.
 * Failures print to stderr and exit 2. */
#ifndef VK_APP_COMMON_H
#define VK_APP_COMMON_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        VkResult result_ = (call);                                                         \
        if (result_ != VK_SUCCESS) {                                                       \
            fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #call, (int)result_); \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

/* One line per message, "message <severity>|<id>|<text>", newlines in the text as spaces:
 * the tests' parse_c_output reads it. */
static inline VkBool32 VKAPI_PTR print_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
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

/* The 32-bit FNV-1a hash of `count` bytes, the programs' result digest. */
static inline uint32_t fnv1a(const void *bytes, size_t count) {
    uint32_t hash = 2166136261u;
    for (size_t i = 0; i < count; ++i) hash = (hash ^ ((const uint8_t *)bytes)[i]) * 16777619u;
    return hash;
}

/* An instance of `api_version` with `extensions`; `name` may be NULL; `next` extends the
 * instance's create info. */
static inline VkInstance create_instance(const char *name, uint32_t api_version, const void *next,
                                         uint32_t extension_count,
                                         const char *const *extensions) {
    VkApplicationInfo application = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    application.pApplicationName = name;
    application.apiVersion = api_version;
    VkInstanceCreateInfo info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, next};
    info.pApplicationInfo = &application;
    info.enabledExtensionCount = extension_count;
    info.ppEnabledExtensionNames = extensions;
    VkInstance instance;
    CHECK(vkCreateInstance(&info, NULL, &instance));
    return instance;
}

/* A debug messenger calling `callback` for the messages of `severities` and `types`. */
static inline VkDebugUtilsMessengerEXT create_messenger(
    VkInstance instance, VkDebugUtilsMessageSeverityFlagsEXT severities,
    VkDebugUtilsMessageTypeFlagsEXT types, PFN_vkDebugUtilsMessengerCallbackEXT callback) {
    PFN_vkCreateDebugUtilsMessengerEXT create = (PFN_vkCreateDebugUtilsMessengerEXT)
        vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT");
    VkDebugUtilsMessengerCreateInfoEXT info = {
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    info.messageSeverity = severities;
    info.messageType = types;
    info.pfnUserCallback = callback;
    VkDebugUtilsMessengerEXT messenger;
    CHECK(create(instance, &info, NULL, &messenger));
    return messenger;
}

/* Destroys what create_messenger made. */
static inline void destroy_messenger(VkInstance instance, VkDebugUtilsMessengerEXT messenger) {
    PFN_vkDestroyDebugUtilsMessengerEXT destroy = (PFN_vkDestroyDebugUtilsMessengerEXT)
        vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT");
    destroy(instance, messenger, NULL);
}

/* Whether the comma-separated `options` (a program argument) hold `name`. */
static inline int option_listed(const char *options, const char *name) {
    size_t length = strlen(name);
    for (const char *at = options; (at = strstr(at, name)) != NULL; at += length) {
        int starts = at == options || at[-1] == ',';
        int ends = at[length] == '\0' || at[length] == ',';
        if (starts && ends) return 1;
    }
    return 0;
}

/* The message severities most programs print: every one but verbose. */
#define INFO_AND_ABOVE                                    \
    (VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |       \
     VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |    \
     VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)

/* Those of warning and error severity only. */
#define WARNINGS_AND_ERRORS                               \
    (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |    \
     VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)

/* A messenger that prints the validation messages of `severities` (print_message). */
static inline VkDebugUtilsMessengerEXT create_printing_messenger(
    VkInstance instance, VkDebugUtilsMessageSeverityFlagsEXT severities) {
    return create_messenger(instance, severities, VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
                            print_message);
}

/* An instance of `api_version` with VK_EXT_debug_utils, named `name`, and through `messenger`
 * its create_printing_messenger of `severities`. */
static inline VkInstance create_printing_instance(const char *name, uint32_t api_version,
                                                  VkDebugUtilsMessageSeverityFlagsEXT severities,
                                                  VkDebugUtilsMessengerEXT *messenger) {
    const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkInstance instance = create_instance(name, api_version, NULL, 1, extensions);
    *messenger = create_printing_messenger(instance, severities);
    return instance;
}

/* Destroys `device`, then `messenger` (unless VK_NULL_HANDLE) and `instance`: a program's last
 * calls. */
static inline void destroy_device_and_instance(VkDevice device, VkInstance instance,
                                               VkDebugUtilsMessengerEXT messenger) {
    vkDestroyDevice(device, NULL);
    if (messenger) destroy_messenger(instance, messenger);
    vkDestroyInstance(instance, NULL);
}

/* The first device the loader lists (lavapipe in the tests). */
static inline VkPhysicalDevice first_physical_device(VkInstance instance) {
    uint32_t count = 1;
    VkPhysicalDevice physical;
    VkResult enumerated = vkEnumeratePhysicalDevices(instance, &count, &physical);
    if ((enumerated != VK_SUCCESS && enumerated != VK_INCOMPLETE) || count == 0) {
        fprintf(stderr, "no Vulkan device\n");
        exit(2);
    }
    return physical;
}

/* The Vulkan 1.2 features of a variable-count array of storage buffers indexed non-uniformly
 * (descriptor indexing), ahead of `next` in a feature chain. */
static inline VkPhysicalDeviceVulkan12Features storage_buffer_array_features(void *next) {
    VkPhysicalDeviceVulkan12Features features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, next};
    features.descriptorIndexing = VK_TRUE;
    features.runtimeDescriptorArray = VK_TRUE;
    features.shaderStorageBufferArrayNonUniformIndexing = VK_TRUE;
    features.descriptorBindingVariableDescriptorCount = VK_TRUE;
    return features;
}

/* A device with one queue of family 0, returned through `queue`; `next` extends its create info
 * (features). */
static inline VkDevice create_device(VkPhysicalDevice physical, const void *next,
                                     uint32_t extension_count, const char *const *extensions,
                                     VkQueue *queue) {
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = 0;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, next};
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue_info;
    info.enabledExtensionCount = extension_count;
    info.ppEnabledExtensionNames = extensions;
    VkDevice device;
    CHECK(vkCreateDevice(physical, &info, NULL, &device));
    vkGetDeviceQueue(device, 0, 0, queue);
    return device;
}

/* The first memory type among `allowed` with all of `flags`; exits when there is none. */
static inline uint32_t memory_type(const VkPhysicalDeviceMemoryProperties *properties,
                                   uint32_t allowed, VkMemoryPropertyFlags flags) {
    for (uint32_t i = 0; i < properties->memoryTypeCount; ++i)
        if ((allowed & (1u << i)) && (properties->memoryTypes[i].propertyFlags & flags) == flags)
            return i;
    fprintf(stderr, "no memory type for bits 0x%x\n", allowed);
    exit(2);
}

/* A buffer bound to new host-visible, coherent memory of the types in `allowed` (~0u: any);
 * `next` extends the buffer's create info, `allocate_next` the allocation's. */
static inline void create_host_buffer(VkDevice device,
                                      const VkPhysicalDeviceMemoryProperties *properties,
                                      VkDeviceSize size, VkBufferUsageFlags usage,
                                      const void *next, uint32_t allowed,
                                      const void *allocate_next, VkBuffer *buffer,
                                      VkDeviceMemory *memory) {
    VkBufferCreateInfo info = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, next};
    info.size = size;
    info.usage = usage;
    CHECK(vkCreateBuffer(device, &info, NULL, buffer));
    VkMemoryRequirements requirements;
    vkGetBufferMemoryRequirements(device, *buffer, &requirements);
    VkMemoryAllocateInfo allocate = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, allocate_next};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = memory_type(
        properties, requirements.memoryTypeBits & allowed,
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
    CHECK(vkAllocateMemory(device, &allocate, NULL, memory));
    CHECK(vkBindBufferMemory(device, *buffer, *memory, 0));
}

/* A host-visible buffer (create_host_buffer, any memory type) of `size` zero bytes, left mapped:
 * returns the mapping. */
static inline void *create_mapped_host_buffer(VkDevice device,
                                              const VkPhysicalDeviceMemoryProperties *properties,
                                              VkDeviceSize size, VkBufferUsageFlags usage,
                                              VkBuffer *buffer, VkDeviceMemory *memory) {
    create_host_buffer(device, properties, size, usage, NULL, ~0u, NULL, buffer, memory);
    void *mapped;
    CHECK(vkMapMemory(device, *memory, 0, VK_WHOLE_SIZE, 0, &mapped));
    memset(mapped, 0, (size_t)size);
    return mapped;
}

/* A host-visible buffer (create_host_buffer, any memory type) holding a copy of the `size`
 * bytes at `data`, unmapped again. */
static inline void create_filled_host_buffer(VkDevice device,
                                             const VkPhysicalDeviceMemoryProperties *properties,
                                             VkDeviceSize size, VkBufferUsageFlags usage,
                                             const void *data, VkBuffer *buffer,
                                             VkDeviceMemory *memory) {
    create_host_buffer(device, properties, size, usage, NULL, ~0u, NULL, buffer, memory);
    void *mapped;
    CHECK(vkMapMemory(device, *memory, 0, VK_WHOLE_SIZE, 0, &mapped));
    memcpy(mapped, data, (size_t)size);
    vkUnmapMemory(device, *memory);
}

/* Destroys the `count` `buffers` and frees their `memories`, one after the other. */
static inline void destroy_host_buffers(VkDevice device, uint32_t count, const VkBuffer *buffers,
                                        const VkDeviceMemory *memories) {
    for (uint32_t k = 0; k < count; ++k) {
        vkDestroyBuffer(device, buffers[k], NULL);
        vkFreeMemory(device, memories[k], NULL);
    }
}

/* Prints `label` and the first `count` words of the host-visible `memory` in hex, one line. */
static inline void print_hex_words(VkDevice device, VkDeviceMemory memory, const char *label,
                                   uint32_t count) {
    uint32_t *words;
    CHECK(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, (void **)&words));
    printf("%s", label);
    for (uint32_t k = 0; k < count; ++k) printf(" %08x", words[k]);
    printf("\n");
    vkUnmapMemory(device, memory);
}

/* Unmaps the `count` host-visible `memories`, then destroys the `buffers`, then frees the
 * memories. */
static inline void destroy_mapped_buffers(VkDevice device, uint32_t count, const VkBuffer *buffers,
                                          const VkDeviceMemory *memories) {
    for (uint32_t k = 0; k < count; ++k) vkUnmapMemory(device, memories[k]);
    for (uint32_t k = 0; k < count; ++k) vkDestroyBuffer(device, buffers[k], NULL);
    for (uint32_t k = 0; k < count; ++k) vkFreeMemory(device, memories[k], NULL);
}

/* Prints the line "result" and the `count` words of `results`, then the line "data" and the
 * first words of the `data_count` words of `data`, at most `count`. */
static inline void print_results_and_data(const uint32_t *results, uint32_t count,
                                          const uint32_t *data, VkDeviceSize data_count) {
    printf("result");
    for (uint32_t k = 0; k < count; ++k) printf(" %u", results[k]);
    printf("\ndata");
    for (VkDeviceSize k = 0; k < count && k < data_count; ++k) printf(" %u", data[k]);
    printf("\n");
}

/* The bytes of the file at `path` (malloc'd, the caller's to free), their count in `size`. */
static inline void *read_whole_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        perror(path);
        exit(2);
    }
    fseek(file, 0, SEEK_END);
    *size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    void *bytes = malloc(*size);
    if (!bytes || fread(bytes, 1, *size, file) != *size) exit(2);
    fclose(file);
    return bytes;
}

/* A shader module of the SPIR-V file at `path`. */
static inline VkShaderModule load_shader_module(VkDevice device, const char *path) {
    size_t size;
    uint32_t *code = read_whole_file(path, &size);
    VkShaderModuleCreateInfo info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = size;
    info.pCode = code;
    VkShaderModule module;
    CHECK(vkCreateShaderModule(device, &info, NULL, &module));
    free(code);
    return module;
}

/* `count` shader modules loaded from `paths` into `modules`, and their stage infos (stage
 * `stage_bits[k]`, entered at "main") into `stages`. */
static inline void load_shader_stages(VkDevice device, uint32_t count, char *const *paths,
                                      const VkShaderStageFlagBits *stage_bits,
                                      VkShaderModule *modules,
                                      VkPipelineShaderStageCreateInfo *stages) {
    for (uint32_t k = 0; k < count; ++k) {
        modules[k] = load_shader_module(device, paths[k]);
        stages[k] = (VkPipelineShaderStageCreateInfo){
            VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
        stages[k].stage = stage_bits[k];
        stages[k].module = modules[k];
        stages[k].pName = "main";
    }
}

/* Set 0 of `binding_count` `bindings` (`set_next` extends its create info) and a pipeline
 * layout of it with push constants of `push_bytes` at offset 0 for `push_stages` (none when
 * `push_bytes` is 0). */
static inline void create_set_and_pipeline_layouts(VkDevice device, const void *set_next,
                                                   uint32_t binding_count,
                                                   const VkDescriptorSetLayoutBinding *bindings,
                                                   VkShaderStageFlags push_stages,
                                                   uint32_t push_bytes,
                                                   VkDescriptorSetLayout *set_layout,
                                                   VkPipelineLayout *layout) {
    VkDescriptorSetLayoutCreateInfo set_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, set_next};
    set_info.bindingCount = binding_count;
    set_info.pBindings = bindings;
    CHECK(vkCreateDescriptorSetLayout(device, &set_info, NULL, set_layout));
    VkPushConstantRange push = {push_stages, 0, push_bytes};
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = set_layout;
    layout_info.pushConstantRangeCount = push_bytes ? 1 : 0;
    layout_info.pPushConstantRanges = push_bytes ? &push : NULL;
    CHECK(vkCreatePipelineLayout(device, &layout_info, NULL, layout));
}

/* Set 0 binding 0 is `count` storage buffers of the compute stage; push constants of
 * `push_bytes` at offset 0. */
static inline void create_compute_layouts(VkDevice device, uint32_t count, uint32_t push_bytes,
                                          VkDescriptorSetLayout *set_layout,
                                          VkPipelineLayout *layout) {
    VkDescriptorSetLayoutBinding binding = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, count,
                                            VK_SHADER_STAGE_COMPUTE_BIT, NULL};
    create_set_and_pipeline_layouts(device, NULL, 1, &binding, VK_SHADER_STAGE_COMPUTE_BIT,
                                    push_bytes, set_layout, layout);
}

/* A compute pipeline of `module`'s "main"; `specialization` may be NULL. */
static inline VkPipeline create_compute_pipeline(VkDevice device, VkPipelineLayout layout,
                                                 VkShaderModule module,
                                                 const VkSpecializationInfo *specialization) {
    VkComputePipelineCreateInfo info = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = module;
    info.stage.pName = "main";
    info.stage.pSpecializationInfo = specialization;
    info.layout = layout;
    VkPipeline pipeline;
    CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));
    return pipeline;
}

/* A new pool of one set of `pool_size_count` `pool_sizes`, returned through `pool`, and that
 * set of `set_layout` allocated from it (`allocate_next` extends the allocation). */
static inline VkDescriptorSet allocate_one_set(VkDevice device, uint32_t pool_size_count,
                                               const VkDescriptorPoolSize *pool_sizes,
                                               const void *allocate_next,
                                               VkDescriptorSetLayout set_layout,
                                               VkDescriptorPool *pool) {
    VkDescriptorPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pool_info.maxSets = 1;
    pool_info.poolSizeCount = pool_size_count;
    pool_info.pPoolSizes = pool_sizes;
    CHECK(vkCreateDescriptorPool(device, &pool_info, NULL, pool));
    VkDescriptorSetAllocateInfo allocate = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                            allocate_next};
    allocate.descriptorPool = *pool;
    allocate.descriptorSetCount = 1;
    allocate.pSetLayouts = &set_layout;
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(device, &allocate, &set));
    return set;
}

/* Like create_set_and_pipeline_layouts, but the last of the (at most 4) bindings has a
 * variable descriptor count (VK_DESCRIPTOR_BINDING_VARIABLE_DESCRIPTOR_COUNT_BIT). */
static inline void create_variable_set_and_pipeline_layouts(
    VkDevice device, uint32_t binding_count, const VkDescriptorSetLayoutBinding *bindings,
    VkShaderStageFlags push_stages, uint32_t push_bytes, VkDescriptorSetLayout *set_layout,
    VkPipelineLayout *layout) {
    VkDescriptorBindingFlags binding_flags[4] = {0, 0, 0, 0};
    if (binding_count == 0 || binding_count > 4) exit(2);
    binding_flags[binding_count - 1] = VK_DESCRIPTOR_BINDING_VARIABLE_DESCRIPTOR_COUNT_BIT;
    VkDescriptorSetLayoutBindingFlagsCreateInfo flags_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_BINDING_FLAGS_CREATE_INFO};
    flags_info.bindingCount = binding_count;
    flags_info.pBindingFlags = binding_flags;
    create_set_and_pipeline_layouts(device, &flags_info, binding_count, bindings, push_stages,
                                    push_bytes, set_layout, layout);
}

/* Like allocate_one_set, for a layout whose variable-count binding gets `variable_count`. */
static inline VkDescriptorSet allocate_one_variable_set(VkDevice device,
                                                        uint32_t pool_size_count,
                                                        const VkDescriptorPoolSize *pool_sizes,
                                                        uint32_t variable_count,
                                                        VkDescriptorSetLayout set_layout,
                                                        VkDescriptorPool *pool) {
    VkDescriptorSetVariableDescriptorCountAllocateInfo count_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_VARIABLE_DESCRIPTOR_COUNT_ALLOCATE_INFO};
    count_info.descriptorSetCount = 1;
    count_info.pDescriptorCounts = &variable_count;
    return allocate_one_set(device, pool_size_count, pool_sizes, &count_info, set_layout, pool);
}

/* The one set of a new pool, its binding 0 written with the `count` storage `buffers`. */
static inline VkDescriptorSet create_storage_set(VkDevice device,
                                                 VkDescriptorSetLayout set_layout, uint32_t count,
                                                 const VkDescriptorBufferInfo *buffers,
                                                 VkDescriptorPool *pool) {
    VkDescriptorPoolSize pool_size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, count};
    VkDescriptorSet set = allocate_one_set(device, 1, &pool_size, NULL, set_layout, pool);
    VkWriteDescriptorSet write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    write.dstSet = set;
    write.descriptorCount = count;
    write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    write.pBufferInfo = buffers;
    vkUpdateDescriptorSets(device, 1, &write, 0, NULL);
    return set;
}

/* The device-level function `name` of `device`; exits when the device has none. */
static inline PFN_vkVoidFunction load_device_function(VkDevice device, const char *name) {
    PFN_vkVoidFunction function = vkGetDeviceProcAddr(device, name);
    if (!function) {
        fprintf(stderr, "no %s\n", name);
        exit(2);
    }
    return function;
}

/* Gives the object `handle` of `type` the debug name `name` (VK_EXT_debug_utils), which
 * messages then quote; returns what vkSetDebugUtilsObjectNameEXT returned. */
static inline VkResult name_object(VkDevice device, VkObjectType type, uint64_t handle,
                                   const char *name) {
    PFN_vkSetDebugUtilsObjectNameEXT set_name =
        (PFN_vkSetDebugUtilsObjectNameEXT)vkGetDeviceProcAddr(device,
                                                              "vkSetDebugUtilsObjectNameEXT");
    VkDebugUtilsObjectNameInfoEXT info = {VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
    info.objectType = type;
    info.objectHandle = handle;
    info.pObjectName = name;
    return set_name(device, &info);
}

/* Gives `buffer` the debug name `name` (name_object). */
static inline VkResult name_buffer(VkDevice device, VkBuffer buffer, const char *name) {
    return name_object(device, VK_OBJECT_TYPE_BUFFER, (uint64_t)buffer, name);
}

/* create_filled_host_buffer, then the buffer named `name` (name_buffer). */
static inline void create_named_host_buffer(VkDevice device,
                                            const VkPhysicalDeviceMemoryProperties *properties,
                                            VkDeviceSize size, VkBufferUsageFlags usage,
                                            const void *data, const char *name, VkBuffer *buffer,
                                            VkDeviceMemory *memory) {
    create_filled_host_buffer(device, properties, size, usage, data, buffer, memory);
    name_buffer(device, *buffer, name);
}

/* `value` rounded up to a multiple of `alignment`. */
static inline VkDeviceSize align_up(VkDeviceSize value, VkDeviceSize alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

/* A command pool of queue family 0. */
static inline VkCommandPool create_command_pool(VkDevice device) {
    VkCommandPoolCreateInfo info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    info.queueFamilyIndex = 0;
    VkCommandPool pool;
    CHECK(vkCreateCommandPool(device, &info, NULL, &pool));
    return pool;
}

/* A primary command buffer of `pool`, begun with `flags`. */
static inline VkCommandBuffer begin_command_buffer(VkDevice device, VkCommandPool pool,
                                                   VkCommandBufferUsageFlags flags) {
    VkCommandBufferAllocateInfo info = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    info.commandPool = pool;
    info.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    info.commandBufferCount = 1;
    VkCommandBuffer command_buffer;
    CHECK(vkAllocateCommandBuffers(device, &info, &command_buffer));
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    begin.flags = flags;
    CHECK(vkBeginCommandBuffer(command_buffer, &begin));
    return command_buffer;
}

/* Submits `command_buffer` with a new fence and waits for it. The fence is the caller's to
 * destroy: when (before or after reading the results) is part of what some programs test. */
static inline VkFence submit_and_wait(VkDevice device, VkQueue queue,
                                      VkCommandBuffer command_buffer) {
    VkFenceCreateInfo fence_info = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkFence fence;
    CHECK(vkCreateFence(device, &fence_info, NULL, &fence));
    VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO};
    submit.commandBufferCount = 1;
    submit.pCommandBuffers = &command_buffer;
    CHECK(vkQueueSubmit(queue, 1, &submit, fence));
    CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
    return fence;
}

/* submit_and_wait, then idle waits on the queue and the device: the Khronos layer's GPU-AV
 * reads its results back when a wait shows the work done, and its own timeline may trail the
 * program's fence (on lavapipe). The fence is the caller's to destroy. */
static inline VkFence submit_and_wait_idle(VkDevice device, VkQueue queue,
                                           VkCommandBuffer command_buffer) {
    VkFence fence = submit_and_wait(device, queue, command_buffer);
    CHECK(vkQueueWaitIdle(queue));
    CHECK(vkDeviceWaitIdle(device));
    return fence;
}

/* Ends `command_buffer`, runs it to completion and frees it (with its fence). */
static inline void submit_once(VkDevice device, VkQueue queue, VkCommandPool pool,
                               VkCommandBuffer command_buffer) {
    CHECK(vkEndCommandBuffer(command_buffer));
    VkFence fence = submit_and_wait(device, queue, command_buffer);
    vkDestroyFence(device, fence, NULL);
    vkFreeCommandBuffers(device, pool, 1, &command_buffer);
}
#endif
