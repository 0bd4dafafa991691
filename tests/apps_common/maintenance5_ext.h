/* VK_KHR_maintenance5 for the C test programs: the declarations Debian bookworm's Vulkan
 * headers (1.3.239) lack, as in the Vulkan registry (the feature, and the 64-bit pipeline
 * create flags and buffer usage). */
#ifndef MAINTENANCE5_EXT_H
#define MAINTENANCE5_EXT_H
#include <vulkan/vulkan.h>

#ifndef VK_KHR_maintenance5
#define VK_KHR_maintenance5 1
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_5_FEATURES_KHR ((VkStructureType)1000470000)
#define VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR ((VkStructureType)1000470005)
#define VK_STRUCTURE_TYPE_BUFFER_USAGE_FLAGS_2_CREATE_INFO_KHR ((VkStructureType)1000470006)
#define VK_PIPELINE_CREATE_2_LIBRARY_BIT_KHR 0x00000800ULL
typedef struct {
    VkStructureType sType;
    void *pNext;
    VkBool32 maintenance5;
} VkPhysicalDeviceMaintenance5FeaturesKHR;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    uint64_t flags;
} VkPipelineCreateFlags2CreateInfoKHR;
typedef struct {
    VkStructureType sType;
    const void *pNext;
    uint64_t usage;
} VkBufferUsageFlags2CreateInfoKHR;
#endif
#endif
