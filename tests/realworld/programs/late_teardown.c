/* For exit_calls_app.py: destroys a Vulkan device and instance from a libc atexit handler,
 * which runs after the Python interpreter has finalized, then writes "done" to a file so the
 * test sees that the handler finished. */
#include <stdio.h>
#include <stdlib.h>
#include <vulkan/vulkan.h>

static VkInstance saved_instance;
static VkDevice saved_device;
static const char *marker_path;

static void destroy_saved_objects(void) {
    VkResult result = vkDeviceWaitIdle(saved_device);
    vkDestroyDevice(saved_device, NULL);
    vkDestroyInstance(saved_instance, NULL);
    FILE *marker = fopen(marker_path, "w");
    if (marker != NULL) {
        fprintf(marker, "done %d", (int)result);
        fclose(marker);
    }
}

void destroy_at_exit(VkInstance instance, VkDevice device, const char *marker) {
    saved_instance = instance;
    saved_device = device;
    static char path[4096];
    snprintf(path, sizeof path, "%s", marker);
    marker_path = path;
    atexit(destroy_saved_objects);
}
