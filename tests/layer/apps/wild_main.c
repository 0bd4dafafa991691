/* wild_app's instance, devices and command line (scenarios in wild_app.c, wild_graphics.c).
 *
 * usage: wild_app SPV_DIR [--messenger] [--chained-messenger] [--debug-utils] [--allocator]
 *                [--leak N] [--bad N]
 *                SCENARIO...
 * --chained-messenger chains a messenger to VkInstanceCreateInfo only.
 * SCENARIO: compute many threads shader-object second-device second-instance dynamic-rendering
 *           wait-before-signal wait-before-signal-empty wait-semaphores submit-and-exit
 *           python-gone threads-timeline geometry-tessellation
 *           tessellation-indexed multiview library
 *           library-flags2 multi-draw mesh; multi-draw-reporting and mesh-reporting only under
 *           gpuav's test instrumenter (tests/layer/fake_instrument.py)
 * Prints "<scenario> <fnv1a hex>" per scenario and "message <severity>|<id>|<text>" per
 * message its messenger received. --leak 1 forgets every object but the device and instance,
 * --leak 2 forgets those too; --bad N makes dispatch N index its two-buffer array with 2;
 * --allocator passes host allocation callbacks everywhere and prints "live-allocations N"
 * (blocks not given back) at exit.
 */
#include <string.h>

#include "wild.h"

/* --allocator: host memory through callbacks, as engines with their own allocators do; a
 * header before each block keeps its size for reallocation. */
enum { HEADER = 64 };
const VkAllocationCallbacks *allocator;
static size_t live_allocations;

static void *VKAPI_PTR allocate(void *user, size_t size, size_t alignment,
                                VkSystemAllocationScope scope) {
    (void)user, (void)scope;
    if (alignment > HEADER) return NULL;
    char *block = aligned_alloc(HEADER, HEADER + ((size + HEADER - 1) / HEADER) * HEADER);
    if (!block) return NULL;
    *(size_t *)block = size;
    __atomic_add_fetch(&live_allocations, 1, __ATOMIC_RELAXED);
    return block + HEADER;
}

static void VKAPI_PTR release(void *user, void *memory) {
    (void)user;
    if (!memory) return;
    __atomic_sub_fetch(&live_allocations, 1, __ATOMIC_RELAXED);
    free((char *)memory - HEADER);
}

static void *VKAPI_PTR reallocate(void *user, void *original, size_t size, size_t alignment,
                                  VkSystemAllocationScope scope) {
    if (!original) return allocate(user, size, alignment, scope);
    if (!size) {
        release(user, original);
        return NULL;
    }
    void *moved = allocate(user, size, alignment, scope);
    if (!moved) return NULL;
    size_t old = *(size_t *)((char *)original - HEADER);
    memcpy(moved, original, old < size ? old : size);
    release(user, original);
    return moved;
}

static const VkAllocationCallbacks callbacks = {NULL, allocate, reallocate, release, NULL, NULL};

static VkBool32 VKAPI_PTR on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                     VkDebugUtilsMessageTypeFlagsEXT types,
                                     const VkDebugUtilsMessengerCallbackDataEXT *data,
                                     void *user) {
    (void)types;
    (void)user;
    printf("message %d|%s|", (int)severity, data->pMessageIdName ? data->pMessageIdName : "");
    for (const char *c = data->pMessage; *c; ++c) putchar(*c == '\n' ? ' ' : *c);
    printf("\n");
    fflush(stdout);
    return VK_FALSE;
}

/* VK_EXT_shader_object and VK_KHR_maintenance5 only where a scenario uses them (the Khronos
 * layer of Debian bookworm knows neither) */
static int shader_objects, maintenance5, mesh;

static void create_device(Context *ctx, VkInstance instance) {
    uint32_t count = 1;
    VkResult result = vkEnumeratePhysicalDevices(instance, &count, &ctx->physical);
    if (result != VK_SUCCESS && result != VK_INCOMPLETE) exit(2);
    vkGetPhysicalDeviceMemoryProperties(ctx->physical, &ctx->memory);
    ctx->family = 0;
    VkPhysicalDeviceMaintenance5FeaturesKHR maintenance = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_5_FEATURES_KHR};
    maintenance.maintenance5 = VK_TRUE;
    VkPhysicalDeviceMeshShaderFeaturesEXT mesh_shader = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT, maintenance5 ? &maintenance : NULL};
    mesh_shader.meshShader = VK_TRUE;
    void *optional = mesh ? (void *)&mesh_shader : maintenance5 ? (void *)&maintenance : NULL;
    VkPhysicalDeviceShaderObjectFeaturesEXT shader_object = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_OBJECT_FEATURES_EXT, optional};
    shader_object.shaderObject = VK_TRUE;
    VkPhysicalDeviceGraphicsPipelineLibraryFeaturesEXT library = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_GRAPHICS_PIPELINE_LIBRARY_FEATURES_EXT,
        shader_objects ? (void *)&shader_object : optional};
    library.graphicsPipelineLibrary = VK_TRUE;
    VkPhysicalDeviceMultiDrawFeaturesEXT multi_draw = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MULTI_DRAW_FEATURES_EXT, &library};
    multi_draw.multiDraw = VK_TRUE;
    VkPhysicalDeviceVulkan13Features v13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                            &multi_draw};
    v13.dynamicRendering = VK_TRUE;
    VkPhysicalDeviceVulkan12Features v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            &v13};
    v12.drawIndirectCount = VK_TRUE;
    v12.timelineSemaphore = VK_TRUE;
    VkPhysicalDeviceVulkan11Features v11 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                            &v12};
    v11.multiview = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v11};
    features.features.geometryShader = VK_TRUE;
    features.features.tessellationShader = VK_TRUE;
    features.features.multiDrawIndirect = VK_TRUE;
    const char *extensions[7] = {"VK_KHR_push_descriptor", "VK_KHR_pipeline_library",
                                 "VK_EXT_graphics_pipeline_library", "VK_EXT_multi_draw"};
    uint32_t extension_count = 4;
    if (shader_objects) extensions[extension_count++] = "VK_EXT_shader_object";
    if (maintenance5) extensions[extension_count++] = "VK_KHR_maintenance5";
    if (mesh) extensions[extension_count++] = "VK_EXT_mesh_shader";
    float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = ctx->family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo info = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &features};
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue_info;
    info.enabledExtensionCount = extension_count;
    info.ppEnabledExtensionNames = extensions;
    CHECK(vkCreateDevice(ctx->physical, &info, allocator, &ctx->device));
    vkGetDeviceQueue(ctx->device, ctx->family, 0, &ctx->queue);
    VkCommandPoolCreateInfo pool_info = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    pool_info.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pool_info.queueFamilyIndex = ctx->family;
    CHECK(vkCreateCommandPool(ctx->device, &pool_info, allocator, &ctx->pool));
}

static void destroy_device(Context *ctx) {
    if (ctx->leak >= 2) return;
    if (!ctx->leak) vkDestroyCommandPool(ctx->device, ctx->pool, allocator);
    vkDestroyDevice(ctx->device, allocator);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: wild_app SPV_DIR [options] SCENARIO...\n");
        return 2;
    }
    int messenger = 0, chained = 0, debug_utils = 0, first = 2;
    Context ctx = {0};
    ctx.spv_dir = argv[1];
    for (; first < argc && !strncmp(argv[first], "--", 2); ++first) {
        if (!strcmp(argv[first], "--messenger"))
            messenger = debug_utils = 1;
        else if (!strcmp(argv[first], "--chained-messenger"))
            chained = debug_utils = 1;
        else if (!strcmp(argv[first], "--allocator"))
            allocator = &callbacks;
        else if (!strcmp(argv[first], "--debug-utils"))
            debug_utils = 1;
        else if (!strcmp(argv[first], "--leak") && first + 1 < argc)
            ctx.leak = atoi(argv[++first]);
        else if (!strcmp(argv[first], "--bad") && first + 1 < argc)
            set_bad_dispatch(atoi(argv[++first]));
        else {
            fprintf(stderr, "unknown option %s\n", argv[first]);
            return 2;
        }
    }
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "wild_app";
    app.apiVersion = VK_API_VERSION_1_3;
    const char *extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkDebugUtilsMessengerCreateInfoEXT messenger_info = {
        VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
    messenger_info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT |
                                     VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT;
    messenger_info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                                 VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT;
    messenger_info.pfnUserCallback = on_message;
    VkInstanceCreateInfo instance_info = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    instance_info.pApplicationInfo = &app;
    instance_info.enabledExtensionCount = debug_utils ? 1 : 0;
    if (chained) instance_info.pNext = &messenger_info; /* never created */
    instance_info.ppEnabledExtensionNames = &extension;
    VkInstance instance;
    CHECK(vkCreateInstance(&instance_info, allocator, &instance));
    VkDebugUtilsMessengerEXT handle = VK_NULL_HANDLE;
    PFN_vkCreateDebugUtilsMessengerEXT create_messenger =
        (PFN_vkCreateDebugUtilsMessengerEXT)vkGetInstanceProcAddr(instance,
                                                                  "vkCreateDebugUtilsMessengerEXT");
    if (messenger) CHECK(create_messenger(instance, &messenger_info, allocator, &handle));
    for (int i = first; i < argc; ++i) {
        shader_objects |= !strcmp(argv[i], "shader-object");
        maintenance5 |= !strcmp(argv[i], "library-flags2");
        mesh |= !strncmp(argv[i], "mesh", 4);
    }
    create_device(&ctx, instance);
    for (int i = first; i < argc; ++i) {
        if (!strcmp(argv[i], "second-device")) {
            Context other = ctx;
            create_device(&other, instance);
            run_compute_scenario(&other, "compute");
            run_compute_scenario(&ctx, "compute"); /* interleaved with the first device */
            destroy_device(&other);
        } else if (!strcmp(argv[i], "second-instance")) {
            /* a whole second instance (its messenger chained at creation), then the first
             * again after it is gone */
            VkInstanceCreateInfo other_info = instance_info;
            other_info.pNext = messenger ? &messenger_info : NULL;
            VkInstance other_instance;
            CHECK(vkCreateInstance(&other_info, allocator, &other_instance));
            Context other = ctx;
            create_device(&other, other_instance);
            run_compute_scenario(&other, "compute");
            other.leak = 0;
            destroy_device(&other);
            vkDestroyInstance(other_instance, allocator);
            run_compute_scenario(&ctx, "compute");
        } else {
            run_compute_scenario(&ctx, argv[i]);
        }
        fflush(stdout);
    }
    destroy_device(&ctx);
    if (ctx.leak >= 2) return 0;
    if (handle) {
        PFN_vkDestroyDebugUtilsMessengerEXT destroy_messenger =
            (PFN_vkDestroyDebugUtilsMessengerEXT)vkGetInstanceProcAddr(
                instance, "vkDestroyDebugUtilsMessengerEXT");
        destroy_messenger(instance, handle, allocator);
    }
    vkDestroyInstance(instance, allocator);
    if (allocator) printf("live-allocations %zu\n", live_allocations);
    return 0;
}
