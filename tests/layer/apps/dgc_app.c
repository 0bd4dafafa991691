/* A compute app that runs its pipeline through VK_EXT_device_generated_commands: a
 * vkCmdExecuteGeneratedCommandsEXT, a plain vkCmdDispatch, another execute. The executes'
 * single DISPATCH token reads a VkDispatchIndirectCommand (2, 1, 1) from an indirect buffer
 * (no indirect execution set: the bound pipeline runs). It knows nothing of gpuav.
 *
 * usage: dgc_app WILD_COMP_SPV [--messenger] [--bad]
 * The shader is wild.comp (specialized: multiplier 5, an array of two storage buffers of 256
 * words each, filled with their word index). Push constants (base, which) select the region
 * and the buffer: the first execute does [64,192) of buffer 1, the dispatch [0,64) of
 * buffer 0, the second execute [128,256) of buffer 0, or of buffer 2 with --bad (past the
 * array).
 * Prints "preprocess-size N", "hash <fnv1a hex of both buffers>" and
 * "message <severity>|<id>|<text>" per message of its debug-utils messenger (--messenger).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "device_generated_commands_ext.h"

enum { WORDS = 256, LOCAL = 64 };

static VkDevice device;
static VkPhysicalDeviceMemoryProperties memory_properties;

/* print_message, each message flushed as it comes: a crash later loses none of them. */
static VkBool32 VKAPI_PTR on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                     VkDebugUtilsMessageTypeFlagsEXT types,
                                     const VkDebugUtilsMessengerCallbackDataEXT *data,
                                     void *user) {
    print_message(severity, types, data, user);
    fflush(stdout);
    return VK_FALSE;
}

/* A buffer of device_generated_commands_ext.h on this program's device. */
static Buffer make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, uint64_t usage2,
                          const VkMemoryRequirements *required) {
    return create_generated_commands_buffer(device, &memory_properties, size, usage, usage2,
                                            required);
}

static void free_buffer(Buffer *buffer) { destroy_generated_commands_buffer(device, buffer); }

static int has_extension(VkPhysicalDevice physical, const char *name) {
    uint32_t count = 0;
    CHECK(vkEnumerateDeviceExtensionProperties(physical, NULL, &count, NULL));
    VkExtensionProperties *properties = calloc(count, sizeof *properties);
    CHECK(vkEnumerateDeviceExtensionProperties(physical, NULL, &count, properties));
    int found = 0;
    for (uint32_t i = 0; i < count; ++i) found |= !strcmp(properties[i].extensionName, name);
    free(properties);
    return found;
}

static VkQueue create_generated_commands_device(VkPhysicalDevice physical) {
    if (!has_extension(physical, "VK_EXT_device_generated_commands")) {
        fprintf(stderr, "VK_EXT_device_generated_commands is not supported\n");
        exit(3);
    }
    VkPhysicalDeviceDeviceGeneratedCommandsFeaturesEXT generated = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DEVICE_GENERATED_COMMANDS_FEATURES_EXT};
    VkPhysicalDeviceFeatures2 supported = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                           &generated};
    vkGetPhysicalDeviceFeatures2(physical, &supported);
    if (!generated.deviceGeneratedCommands) {
        fprintf(stderr, "deviceGeneratedCommands is not supported\n");
        exit(3);
    }
    memset(&generated, 0, sizeof generated);
    generated.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DEVICE_GENERATED_COMMANDS_FEATURES_EXT;
    generated.deviceGeneratedCommands = VK_TRUE;
    VkPhysicalDeviceMaintenance5FeaturesKHR maintenance = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_5_FEATURES_KHR, &generated};
    maintenance.maintenance5 = VK_TRUE;
    VkPhysicalDeviceVulkan12Features v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            &maintenance};
    v12.bufferDeviceAddress = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v12};
    const char *extensions[] = {"VK_EXT_device_generated_commands", "VK_KHR_maintenance5"};
    VkQueue queue;
    device = create_device(physical, &features, 2, extensions, &queue);
    return queue;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: dgc_app WILD_COMP_SPV [--messenger] [--bad]\n");
        return 2;
    }
    int messenger = 0, bad = 0;
    for (int i = 2; i < argc; ++i) {
        if (!strcmp(argv[i], "--messenger"))
            messenger = 1;
        else if (!strcmp(argv[i], "--bad"))
            bad = 1;
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }

    const char *extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkInstance instance =
        create_instance("dgc_app", VK_API_VERSION_1_3, NULL, messenger ? 1 : 0, &extension);
    VkDebugUtilsMessengerEXT handle = VK_NULL_HANDLE;
    if (messenger)
        handle = create_messenger(instance,
                                  VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                      VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                                      VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT,
                                  VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                                      VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
                                  on_message);
    VkPhysicalDevice physical = first_physical_device(instance);
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkQueue queue = create_generated_commands_device(physical);
    GeneratedCommandsFunctions dgc = load_generated_commands_functions(device);

    /* data: two storage buffers of WORDS words, each word its index */
    Buffer data[2];
    for (int b = 0; b < 2; ++b) {
        data[b] = make_buffer(WORDS * 4, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0, NULL);
        for (uint32_t i = 0; i < WORDS; ++i) ((uint32_t *)data[b].mapped)[i] = i;
    }

    /* compute pipeline of wild.comp: set 0 binding 0 is the array of both buffers */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    create_compute_layouts(device, 2, 8, &set_layout, &layout);
    VkShaderModule module = load_shader_module(device, argv[1]);
    uint32_t constants[2] = {5, 2}; /* MULTIPLIER, COUNT */
    VkSpecializationMapEntry entries[2] = {{0, 0, 4}, {1, 4, 4}};
    VkSpecializationInfo specialization = {2, entries, sizeof constants, constants};
    VkPipeline pipeline = create_compute_pipeline(device, layout, module, &specialization);
    vkDestroyShaderModule(device, module, NULL);
    VkDescriptorBufferInfo buffer_infos[2] = {{data[0].buffer, 0, VK_WHOLE_SIZE},
                                              {data[1].buffer, 0, VK_WHOLE_SIZE}};
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set = create_storage_set(device, set_layout, 2, buffer_infos, &descriptor_pool);

    /* indirect commands: a single DISPATCH token, the bound pipeline (no execution set) */
    VkIndirectCommandsLayoutTokenEXT token = {
        VK_STRUCTURE_TYPE_INDIRECT_COMMANDS_LAYOUT_TOKEN_EXT};
    token.type = VK_INDIRECT_COMMANDS_TOKEN_TYPE_DISPATCH_EXT;
    token.offset = 0;
    VkIndirectCommandsLayoutCreateInfoEXT commands_info = {
        VK_STRUCTURE_TYPE_INDIRECT_COMMANDS_LAYOUT_CREATE_INFO_EXT};
    commands_info.shaderStages = VK_SHADER_STAGE_COMPUTE_BIT;
    commands_info.indirectStride = sizeof(VkDispatchIndirectCommand);
    commands_info.pipelineLayout = layout;
    commands_info.tokenCount = 1;
    commands_info.pTokens = &token;
    VkIndirectCommandsLayoutEXT commands_layout;
    CHECK(dgc.create_commands_layout(device, &commands_info, NULL, &commands_layout));

    Buffer indirect = make_buffer(sizeof(VkDispatchIndirectCommand),
                                  VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, 0, NULL);
    *(VkDispatchIndirectCommand *)indirect.mapped = (VkDispatchIndirectCommand){2, 1, 1};
    /* without an execution set, the pipeline the commands run is named in both infos */
    VkGeneratedCommandsPipelineInfoEXT pipeline_named = {
        VK_STRUCTURE_TYPE_GENERATED_COMMANDS_PIPELINE_INFO_EXT, NULL, pipeline};
    VkGeneratedCommandsMemoryRequirementsInfoEXT requirements_info = {
        VK_STRUCTURE_TYPE_GENERATED_COMMANDS_MEMORY_REQUIREMENTS_INFO_EXT, &pipeline_named};
    requirements_info.indirectCommandsLayout = commands_layout;
    requirements_info.maxSequenceCount = 1;
    VkMemoryRequirements2 requirements = {VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    dgc.memory_requirements(device, &requirements_info, &requirements);
    VkDeviceSize preprocess_size = requirements.memoryRequirements.size;
    printf("preprocess-size %llu\n", (unsigned long long)preprocess_size);
    Buffer preprocess = {0};
    if (preprocess_size)
        preprocess = make_buffer(preprocess_size, 0, BUFFER_USAGE_2_PREPROCESS_BUFFER_BIT_EXT,
                                 &requirements.memoryRequirements);

    VkGeneratedCommandsInfoEXT generated = {VK_STRUCTURE_TYPE_GENERATED_COMMANDS_INFO_EXT,
                                            &pipeline_named};
    generated.shaderStages = VK_SHADER_STAGE_COMPUTE_BIT;
    generated.indirectCommandsLayout = commands_layout;
    generated.indirectAddress = indirect.address;
    generated.indirectAddressSize = sizeof(VkDispatchIndirectCommand);
    generated.preprocessAddress = preprocess.address;
    generated.preprocessSize = preprocess_size;
    generated.maxSequenceCount = 1;

    VkCommandPool command_pool = create_command_pool(device);
    VkCommandBuffer command_buffer =
        begin_command_buffer(device, command_pool, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0,
                            NULL);
    /* an execute first, when no hooked action has run in the command buffer yet */
    uint32_t first[2] = {LOCAL, 1}; /* base, which */
    vkCmdPushConstants(command_buffer, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, first);
    dgc.execute_generated(command_buffer, VK_FALSE, &generated);
    uint32_t second[2] = {0, 0};
    vkCmdPushConstants(command_buffer, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, second);
    vkCmdDispatch(command_buffer, 1, 1, 1);
    uint32_t third[2] = {2 * LOCAL, bad ? 2 : 0};
    vkCmdPushConstants(command_buffer, layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, 8, third);
    dgc.execute_generated(command_buffer, VK_FALSE, &generated);
    CHECK(vkEndCommandBuffer(command_buffer));

    VkFence fence = submit_and_wait(device, queue, command_buffer);
    uint32_t words[2 * WORDS];
    memcpy(words, data[0].mapped, WORDS * 4);
    memcpy(words + WORDS, data[1].mapped, WORDS * 4);
    printf("hash %08x\n", fnv1a(words, sizeof words));
    fflush(stdout);

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, command_pool, NULL);
    if (preprocess_size) free_buffer(&preprocess);
    free_buffer(&indirect);
    dgc.destroy_commands_layout(device, commands_layout, NULL);
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    for (int b = 0; b < 2; ++b) free_buffer(&data[b]);
    destroy_device_and_instance(device, instance, handle);
    return 0;
}
