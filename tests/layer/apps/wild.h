/* Shared helpers of wild_app.c and wild_graphics.c: the app's device, buffers, one-shot
 * submissions and the result hash. The app knows nothing of gpuav. */
#ifndef WILD_H
#define WILD_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

/* VK_KHR_maintenance5 and VK_EXT_shader_object, which older headers lack */
#include "maintenance5_ext.h"
#include "shader_object_ext.h"

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
