/* VK_KHR_maintenance6 for the C programs: the declarations Debian bookworm's Vulkan headers
 * (1.3.239) lack, as in the Vulkan registry (the feature, and vkCmdPushConstants2KHR). */
#ifndef MAINTENANCE6_EXT_H
#define MAINTENANCE6_EXT_H
#include <vulkan/vulkan.h>

#ifndef VK_KHR_maintenance6
#define VK_KHR_maintenance6 1
#define VK_KHR_MAINTENANCE_6_EXTENSION_NAME "VK_KHR_maintenance6"
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_6_FEATURES_KHR ((VkStructureType)1000545000)
#define VK_STRUCTURE_TYPE_PUSH_CONSTANTS_INFO_KHR ((VkStructureType)1000545004)
typedef struct {
    VkStructureType sType;
    void *pNext;
    VkBool32 maintenance6;
} VkPhysicalDeviceMaintenance6FeaturesKHR;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    VkPipelineLayout layout;
    VkShaderStageFlags stageFlags;
    uint32_t offset;
    uint32_t size;
    const void *pValues;
} VkPushConstantsInfoKHR;
typedef void(VKAPI_PTR *PFN_vkCmdPushConstants2KHR)(VkCommandBuffer commandBuffer,
                                                     const VkPushConstantsInfoKHR *info);
#endif
#endif
