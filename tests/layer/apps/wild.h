/* Shared helpers of wild_app.c and wild_graphics.c: the app's device, buffers, one-shot
 * submissions and the result hash. The app knows nothing of gpuav. */
#ifndef WILD_H
#define WILD_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

#ifndef VK_EXT_shader_object /* older headers (Debian bookworm's 1.3.239) */
#define VK_EXT_shader_object 1
VK_DEFINE_NON_DISPATCHABLE_HANDLE(VkShaderEXT)
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_OBJECT_FEATURES_EXT ((VkStructureType)1000482000)
#define VK_STRUCTURE_TYPE_SHADER_CREATE_INFO_EXT ((VkStructureType)1000482002)
#define VK_SHADER_CODE_TYPE_SPIRV_EXT 1
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
    int codeType;
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
#endif

#ifndef VK_KHR_maintenance5 /* older headers again */
#define VK_KHR_maintenance5 1
#define VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_5_FEATURES_KHR ((VkStructureType)1000470000)
#define VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR ((VkStructureType)1000470005)
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
#endif

#define CHECK(call)                                                                   \
    do {                                                                              \
        VkResult result_ = (call);                                                    \
        if (result_ != VK_SUCCESS) {                                                  \
            fprintf(stderr, "%s:%d: %s -> %d\n", __FILE__, __LINE__, #call, result_); \
            exit(2);                                                                  \
        }                                                                             \
    } while (0)

typedef struct {
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t family;
    VkCommandPool pool;
    VkPhysicalDeviceMemoryProperties memory;
    const char *spv_dir;
    int leak; /* 0: destroy everything, 1: forget objects, 2: forget the device too */
} Context;

typedef struct {
    VkBuffer buffer;
    VkDeviceMemory memory;
    void *mapped;
    VkDeviceSize size;
} Buffer;

#define LOAD(ctx, name)                                                              \
    ((PFN_##name)vkGetDeviceProcAddr((ctx)->device, #name) ?: (fprintf(stderr, "no %s\n", #name), exit(2), NULL))

/* NULL, or host allocation callbacks (--allocator) passed to every create and destroy call */
extern const VkAllocationCallbacks *allocator;
extern int bad_dispatch; /* --bad N, else -1 */

uint32_t fnv1a(const void *bytes, size_t count);
VkShaderModule load_module(Context *ctx, const char *name);
uint32_t *load_code(Context *ctx, const char *name, size_t *size);
Buffer make_buffer(Context *ctx, VkDeviceSize size, VkBufferUsageFlags usage);
void free_buffer(Context *ctx, Buffer *buffer);
VkCommandBuffer begin_one(Context *ctx, VkCommandPool pool, VkCommandBufferUsageFlags flags);
void submit_wait(Context *ctx, VkCommandBuffer command_buffer);
enum { LOCAL = 64 };

/* Compute objects: set 0 is binding 0, an array of two storage buffers. */
typedef struct {
    VkDescriptorSetLayout push_set, plain_set;
    VkPipelineLayout push_layout, plain_layout;
    VkPipeline pipelines[3]; /* multiplier 5 (base), 7 (derivative), 9 (plain layout) */
    VkDescriptorUpdateTemplate push_template, plain_template;
    VkDescriptorPool pool;
    VkDescriptorSet set;
    VkPipelineCache cache;
} Compute;

void make_compute(Context *ctx, Compute *c, const Buffer *buffers);
void destroy_compute(Context *ctx, Compute *c);
/* Dispatch `count` regions of 64 words of buffer `which` (0 or 1; 2 at bad_dispatch). */
void dispatches(VkCommandBuffer cb, VkPipelineLayout layout, uint32_t count, uint32_t which);
VkSubmitInfo one(const VkCommandBuffer *command_buffer);
void wait_before_signal_scenario(Context *ctx, int empty);
void wait_semaphores_scenario(Context *ctx, int wait);
void python_gone_scenario(Context *ctx);
void threads_timeline_scenario(Context *ctx);
void run_graphics_scenario(Context *ctx, const char *name);
void run_compute_scenario(Context *ctx, const char *name);
void set_bad_dispatch(int index);
#endif
