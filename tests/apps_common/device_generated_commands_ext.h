/* VK_EXT_device_generated_commands for the C test programs (dgc_app, dgc_draw_app): the
 * declarations Debian bookworm's Vulkan headers (1.3.239) lack, and the buffers those programs
 * make (host-visible, with a device address, some with VkBufferUsageFlags2 usage). Static
 * inline, like vk_app_common.h, which it builds on; knows nothing of gpuav. */
#ifndef DEVICE_GENERATED_COMMANDS_EXT_H
#define DEVICE_GENERATED_COMMANDS_EXT_H
#include <string.h>

#include "maintenance5_ext.h"
#include "shader_object_ext.h"
#include "vk_app_common.h"

/* VK_EXT_device_generated_commands is newer than Debian bookworm's headers (1.3.239): the
 * declarations the programs use, as in the Vulkan registry. */
#ifndef VK_EXT_device_generated_commands
#define VK_EXT_device_generated_commands 1
VK_DEFINE_NON_DISPATCHABLE_HANDLE(VkIndirectCommandsLayoutEXT)
VK_DEFINE_NON_DISPATCHABLE_HANDLE(VkIndirectExecutionSetEXT)
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DEVICE_GENERATED_COMMANDS_FEATURES_EXT \
    ((VkStructureType)1000572000)
#define VK_STRUCTURE_TYPE_GENERATED_COMMANDS_MEMORY_REQUIREMENTS_INFO_EXT \
    ((VkStructureType)1000572002)
#define VK_STRUCTURE_TYPE_INDIRECT_EXECUTION_SET_CREATE_INFO_EXT ((VkStructureType)1000572003)
#define VK_STRUCTURE_TYPE_GENERATED_COMMANDS_INFO_EXT ((VkStructureType)1000572004)
#define VK_STRUCTURE_TYPE_INDIRECT_COMMANDS_LAYOUT_CREATE_INFO_EXT ((VkStructureType)1000572006)
#define VK_STRUCTURE_TYPE_INDIRECT_COMMANDS_LAYOUT_TOKEN_EXT ((VkStructureType)1000572007)
#define VK_STRUCTURE_TYPE_WRITE_INDIRECT_EXECUTION_SET_PIPELINE_EXT ((VkStructureType)1000572008)
#define VK_STRUCTURE_TYPE_WRITE_INDIRECT_EXECUTION_SET_SHADER_EXT ((VkStructureType)1000572009)
#define VK_STRUCTURE_TYPE_INDIRECT_EXECUTION_SET_PIPELINE_INFO_EXT ((VkStructureType)1000572010)
#define VK_STRUCTURE_TYPE_INDIRECT_EXECUTION_SET_SHADER_INFO_EXT ((VkStructureType)1000572011)
#define VK_STRUCTURE_TYPE_INDIRECT_EXECUTION_SET_SHADER_LAYOUT_INFO_EXT \
    ((VkStructureType)1000572012)
#define VK_STRUCTURE_TYPE_GENERATED_COMMANDS_PIPELINE_INFO_EXT ((VkStructureType)1000572013)
#define VK_INDIRECT_COMMANDS_TOKEN_TYPE_DISPATCH_EXT 9
enum {
    TOKEN_EXECUTION_SET = 0,
    TOKEN_DRAW_INDEXED = 5,
    TOKEN_DRAW = 6,
    TOKEN_DRAW_INDEXED_COUNT = 7,
    TOKEN_DRAW_COUNT = 8,
};
typedef struct {
    VkStructureType sType;
    void *pNext;
    VkBool32 deviceGeneratedCommands;
    VkBool32 dynamicGeneratedPipelineLayout;
} VkPhysicalDeviceDeviceGeneratedCommandsFeaturesEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    VkIndirectExecutionSetEXT indirectExecutionSet;
    VkIndirectCommandsLayoutEXT indirectCommandsLayout;
    uint32_t maxSequenceCount;
    uint32_t maxDrawCount;
} VkGeneratedCommandsMemoryRequirementsInfoEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    VkShaderStageFlags shaderStages;
    VkIndirectExecutionSetEXT indirectExecutionSet;
    VkIndirectCommandsLayoutEXT indirectCommandsLayout;
    VkDeviceAddress indirectAddress;
    VkDeviceSize indirectAddressSize;
    VkDeviceAddress preprocessAddress;
    VkDeviceSize preprocessSize;
    uint32_t maxSequenceCount;
    VkDeviceAddress sequenceCountAddress;
    uint32_t maxDrawCount;
} VkGeneratedCommandsInfoEXT;
typedef struct {
    int type;                /* VkIndirectExecutionSetInfoTypeEXT: 0, pipelines */
    VkShaderStageFlags shaderStages;
} VkIndirectCommandsExecutionSetTokenEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    int type;          /* VkIndirectCommandsTokenTypeEXT */
    const void *data;  /* VkIndirectCommandsTokenDataEXT: a union of pointers, NULL for DISPATCH */
    uint32_t offset;
} VkIndirectCommandsLayoutTokenEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    VkShaderStageFlags shaderStages;
    uint32_t indirectStride;
    VkPipelineLayout pipelineLayout;
    uint32_t tokenCount;
    const VkIndirectCommandsLayoutTokenEXT *pTokens;
} VkIndirectCommandsLayoutCreateInfoEXT;
typedef struct {
    VkStructureType sType;
    void *pNext;
    VkPipeline pipeline;
} VkGeneratedCommandsPipelineInfoEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    VkPipeline initialPipeline;
    uint32_t maxPipelineCount;
} VkIndirectExecutionSetPipelineInfoEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    int type;           /* VkIndirectExecutionSetInfoTypeEXT */
    const void *info;   /* VkIndirectExecutionSetInfoEXT: a union of pointers */
} VkIndirectExecutionSetCreateInfoEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    uint32_t index;
    VkPipeline pipeline;
} VkWriteIndirectExecutionSetPipelineEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    uint32_t setLayoutCount;
    const VkDescriptorSetLayout *pSetLayouts;
} VkIndirectExecutionSetShaderLayoutInfoEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    uint32_t shaderCount;
    const VkShaderEXT *pInitialShaders;
    const VkIndirectExecutionSetShaderLayoutInfoEXT *pSetLayoutInfos;
    uint32_t maxShaderCount;
    uint32_t pushConstantRangeCount;
    const VkPushConstantRange *pPushConstantRanges;
} VkIndirectExecutionSetShaderInfoEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    uint32_t index;
    VkShaderEXT shader;
} VkWriteIndirectExecutionSetShaderEXT;
typedef struct {
    VkDeviceAddress bufferAddress;
    uint32_t stride;
    uint32_t commandCount;
} VkDrawIndirectCountIndirectCommandEXT;
typedef void(VKAPI_PTR *PFN_vkGetGeneratedCommandsMemoryRequirementsEXT)(
    VkDevice, const VkGeneratedCommandsMemoryRequirementsInfoEXT *, VkMemoryRequirements2 *);
typedef void(VKAPI_PTR *PFN_vkCmdExecuteGeneratedCommandsEXT)(VkCommandBuffer, VkBool32,
                                                             const VkGeneratedCommandsInfoEXT *);
typedef VkResult(VKAPI_PTR *PFN_vkCreateIndirectCommandsLayoutEXT)(
    VkDevice, const VkIndirectCommandsLayoutCreateInfoEXT *, const VkAllocationCallbacks *,
    VkIndirectCommandsLayoutEXT *);
typedef void(VKAPI_PTR *PFN_vkDestroyIndirectCommandsLayoutEXT)(VkDevice,
                                                               VkIndirectCommandsLayoutEXT,
                                                               const VkAllocationCallbacks *);
typedef VkResult(VKAPI_PTR *PFN_vkCreateIndirectExecutionSetEXT)(
    VkDevice, const VkIndirectExecutionSetCreateInfoEXT *, const VkAllocationCallbacks *,
    VkIndirectExecutionSetEXT *);
typedef void(VKAPI_PTR *PFN_vkUpdateIndirectExecutionSetPipelineEXT)(
    VkDevice, VkIndirectExecutionSetEXT, uint32_t, const VkWriteIndirectExecutionSetPipelineEXT *);
typedef void(VKAPI_PTR *PFN_vkUpdateIndirectExecutionSetShaderEXT)(
    VkDevice, VkIndirectExecutionSetEXT, uint32_t, const VkWriteIndirectExecutionSetShaderEXT *);
typedef void(VKAPI_PTR *PFN_vkDestroyIndirectExecutionSetEXT)(VkDevice,
                                                             VkIndirectExecutionSetEXT,
                                                             const VkAllocationCallbacks *);
#endif

#define BUFFER_USAGE_2_PREPROCESS_BUFFER_BIT_EXT 0x80000000ULL
#define PIPELINE_CREATE_2_INDIRECT_BINDABLE_BIT_EXT 0x4000000000ULL
#define SHADER_CREATE_INDIRECT_BINDABLE_BIT_EXT 0x80
#define INFO_TYPE_SHADER_OBJECTS 1 /* VkIndirectExecutionSetInfoTypeEXT */

/* The VK_EXT_device_generated_commands functions both programs call. */
typedef struct {
    PFN_vkGetGeneratedCommandsMemoryRequirementsEXT memory_requirements;
    PFN_vkCmdExecuteGeneratedCommandsEXT execute_generated;
    PFN_vkCreateIndirectCommandsLayoutEXT create_commands_layout;
    PFN_vkDestroyIndirectCommandsLayoutEXT destroy_commands_layout;
} GeneratedCommandsFunctions;

/* The functions of GeneratedCommandsFunctions from `device` (load_device_function), in the
 * order of its fields. */
static inline GeneratedCommandsFunctions load_generated_commands_functions(VkDevice device) {
    GeneratedCommandsFunctions functions;
    functions.memory_requirements = (PFN_vkGetGeneratedCommandsMemoryRequirementsEXT)
        load_device_function(device, "vkGetGeneratedCommandsMemoryRequirementsEXT");
    functions.execute_generated = (PFN_vkCmdExecuteGeneratedCommandsEXT)load_device_function(
        device, "vkCmdExecuteGeneratedCommandsEXT");
    functions.create_commands_layout = (PFN_vkCreateIndirectCommandsLayoutEXT)
        load_device_function(device, "vkCreateIndirectCommandsLayoutEXT");
    functions.destroy_commands_layout = (PFN_vkDestroyIndirectCommandsLayoutEXT)
        load_device_function(device, "vkDestroyIndirectCommandsLayoutEXT");
    return functions;
}

/* A host-visible buffer, mapped, with its device address. */
typedef struct {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;
    VkDeviceAddress address;
} Buffer;

/* A zeroed, mapped host-visible buffer with a device address; `usage2` (when not 0) replaces
 * `usage` through VkBufferUsageFlags2CreateInfoKHR; `required` (when not NULL) narrows the
 * memory types. */
static inline Buffer create_generated_commands_buffer(
    VkDevice device, const VkPhysicalDeviceMemoryProperties *properties, VkDeviceSize size,
    VkBufferUsageFlags usage, uint64_t usage2, const VkMemoryRequirements *required) {
    Buffer result = {0};
    VkBufferUsageFlags2CreateInfoKHR flags2 = {
        VK_STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR};
    flags2.usage = usage2 | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT;
    VkMemoryAllocateFlagsInfo address_flag = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    address_flag.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    create_host_buffer(device, properties, size,
                       usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT, usage2 ? &flags2 : NULL,
                       required ? required->memoryTypeBits : ~0u, &address_flag, &result.buffer,
                       &result.memory);
    CHECK(vkMapMemory(device, result.memory, 0, size, 0, &result.mapped));
    memset(result.mapped, 0, size);
    VkBufferDeviceAddressInfo address = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO, NULL,
                                         result.buffer};
    result.address = vkGetBufferDeviceAddress(device, &address);
    return result;
}

/* Destroys `buffer` and frees its memory (which unmaps it). */
static inline void destroy_generated_commands_buffer(VkDevice device, Buffer *buffer) {
    vkDestroyBuffer(device, buffer->buffer, NULL);
    vkFreeMemory(device, buffer->memory, NULL);
}
#endif
