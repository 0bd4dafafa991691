/* LD_PRELOAD shim for vkcube: runs $CAPTURE_COMMAND (e.g. an xwd screenshot) when the app,
 * about to tear down, waits for its device to go idle: its last frame has been drawn and
 * queued for presentation then, while its swapchain still exists (destroying it first could
 * drop that last present, and the screen would show the frame before). vkcube with --c N
 * stops after N frames, so the captured image is the same frame on every run. A later wait
 * (a resize's) captures again over the earlier image. Declares the few Vulkan types it needs
 * instead of needing the Vulkan headers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int32_t VkResult;
typedef struct VkDevice_T *VkDevice;
typedef VkResult (*device_wait_idle_fn)(VkDevice);

VkResult vkDeviceWaitIdle(VkDevice device) {
    device_wait_idle_fn next = (device_wait_idle_fn)dlsym(RTLD_NEXT, "vkDeviceWaitIdle");
    VkResult result = next(device);
    const char *command = getenv("CAPTURE_COMMAND");
    if (command != NULL && system(command) != 0) {
        fprintf(stderr, "capture_at_close: '%s' failed\n", command);
    }
    return result;
}
