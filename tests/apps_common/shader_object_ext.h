/* VK_EXT_shader_object for the C test programs: the declarations Debian bookworm's Vulkan
 * headers (1.3.239) lack, as in the Vulkan registry, and the dynamic state every draw with
 * shader objects needs (a pipeline would have held it). */
#ifndef SHADER_OBJECT_EXT_H
#define SHADER_OBJECT_EXT_H
#include <vulkan/vulkan.h>

#ifndef VK_EXT_shader_object
#define VK_EXT_shader_object 1
VK_DEFINE_NON_DISPATCHABLE_HANDLE(VkShaderEXT)
#define VK_EXT_SHADER_OBJECT_EXTENSION_NAME "VK_EXT_shader_object"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_OBJECT_FEATURES_EXT ((VkStructureType)1000482000)
#define VK_STRUCTURE_TYPE_SHADER_CREATE_INFO_EXT ((VkStructureType)1000482002)
#define VK_SHADER_CREATE_LINK_STAGE_BIT_EXT 0x1
#define VK_OBJECT_TYPE_SHADER_EXT ((VkObjectType)1000482000)
typedef enum { VK_SHADER_CODE_TYPE_BINARY_EXT = 0, VK_SHADER_CODE_TYPE_SPIRV_EXT = 1 } VkShaderCodeTypeEXT;
typedef struct {
    VkStructureType sType;
    void *pNext;
    VkBool32 shaderObject;
} VkPhysicalDeviceShaderObjectFeaturesEXT;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    VkFlags flags;
    VkShaderStageFlagBits stage;
    VkShaderStageFlags nextStage;
    VkShaderCodeTypeEXT codeType;
    size_t codeSize;
    const void *pCode;
    const char *pName;
    uint32_t setLayoutCount;
    const VkDescriptorSetLayout *pSetLayouts;
    uint32_t pushConstantRangeCount;
    const VkPushConstantRange *pPushConstantRanges;
    const VkSpecializationInfo *pSpecializationInfo;
} VkShaderCreateInfoEXT;
typedef VkResult(VKAPI_PTR *PFN_vkCreateShadersEXT)(VkDevice, uint32_t,
                                                   const VkShaderCreateInfoEXT *,
                                                   const VkAllocationCallbacks *, VkShaderEXT *);
typedef void(VKAPI_PTR *PFN_vkDestroyShaderEXT)(VkDevice, VkShaderEXT,
                                                const VkAllocationCallbacks *);
typedef void(VKAPI_PTR *PFN_vkCmdBindShadersEXT)(VkCommandBuffer, uint32_t,
                                                 const VkShaderStageFlagBits *,
                                                 const VkShaderEXT *);
typedef VkResult(VKAPI_PTR *PFN_vkGetShaderBinaryDataEXT)(VkDevice, VkShaderEXT, size_t *,
                                                          void *);
#endif

/* The create info of a shader object of SPIR-V `code` (`size` bytes) for `stage`, followed by
 * `next` stages, entered at "main", with one set layout and one push-constant range. */
static inline VkShaderCreateInfoEXT spirv_shader_info(VkShaderStageFlagBits stage,
                                                      VkShaderStageFlags next, const void *code,
                                                      size_t size,
                                                      const VkDescriptorSetLayout *set_layout,
                                                      const VkPushConstantRange *push_range) {
    VkShaderCreateInfoEXT info = {VK_STRUCTURE_TYPE_SHADER_CREATE_INFO_EXT};
    info.stage = stage;
    info.nextStage = next;
    info.codeType = VK_SHADER_CODE_TYPE_SPIRV_EXT;
    info.codeSize = size;
    info.pCode = code;
    info.pName = "main";
    info.setLayoutCount = 1;
    info.pSetLayouts = set_layout;
    info.pushConstantRangeCount = 1;
    info.pPushConstantRanges = push_range;
    return info;
}

/* Rasterization state of a plain single-sample draw into one color attachment, without depth,
 * stencil or blending, for the shader objects bound in `command_buffer`. */
static inline void set_shader_object_draw_state(VkDevice device, VkCommandBuffer command_buffer,
                                                const VkViewport *viewport,
                                                const VkRect2D *scissor) {
#define SET(name) ((PFN_##name)vkGetDeviceProcAddr(device, #name))
    vkCmdSetViewportWithCount(command_buffer, 1, viewport);
    vkCmdSetScissorWithCount(command_buffer, 1, scissor);
    vkCmdSetRasterizerDiscardEnable(command_buffer, VK_FALSE);
    vkCmdSetCullMode(command_buffer, VK_CULL_MODE_NONE);
    vkCmdSetFrontFace(command_buffer, VK_FRONT_FACE_COUNTER_CLOCKWISE);
    vkCmdSetDepthTestEnable(command_buffer, VK_FALSE);
    vkCmdSetDepthWriteEnable(command_buffer, VK_FALSE);
    vkCmdSetDepthBiasEnable(command_buffer, VK_FALSE);
    vkCmdSetStencilTestEnable(command_buffer, VK_FALSE);
    SET(vkCmdSetPolygonModeEXT)(command_buffer, VK_POLYGON_MODE_FILL);
    SET(vkCmdSetRasterizationSamplesEXT)(command_buffer, VK_SAMPLE_COUNT_1_BIT);
    VkSampleMask sample_mask = ~0u;
    SET(vkCmdSetSampleMaskEXT)(command_buffer, VK_SAMPLE_COUNT_1_BIT, &sample_mask);
    SET(vkCmdSetAlphaToCoverageEnableEXT)(command_buffer, VK_FALSE);
    VkBool32 blend = VK_FALSE;
    SET(vkCmdSetColorBlendEnableEXT)(command_buffer, 0, 1, &blend);
    VkColorComponentFlags write_mask = 0xF;
    SET(vkCmdSetColorWriteMaskEXT)(command_buffer, 0, 1, &write_mask);
#undef SET
}
#endif
