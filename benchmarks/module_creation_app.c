/* Times what a program pays to start Vulkan and create its shaders, under whatever layers the
 * environment loads (bench_startup.py, bench_module_creation.py). Knows nothing of gpuav.
 *
 *   module_creation_app LIST PASSES
 *
 * LIST has one module a line: "<path.spv> <pipeline 0|1> <push bytes> <n> then n times
 * <set> <binding> <descriptor type> <count>": the compute pipeline's layout, from the
 * module's own resources. The device enables every core feature the driver has. Each of
 * PASSES passes creates every module (and its compute pipeline where asked) and destroys
 * them again. Prints, in microseconds:
 *   startup <vkCreateInstance> <vkCreateDevice> <first vkCreateShaderModule> <span>
 * where span runs from the call of vkCreateInstance to the return of the first
 * vkCreateShaderModule, the calls between them (physical device queries) included.
 *   module <pass> <index> <vkCreateShaderModule> <vkCreateComputePipelines, -1: none asked,
 *                                                  -2: failed>
 */
#include <string.h>
#include <time.h>

#include "vk_app_common.h"

#define MAX_BINDINGS 32
#define MAX_SETS 8
#define MAX_MODULES 512

struct module_entry {
    char path[1024];
    int pipeline;
    uint32_t push_bytes;
    uint32_t binding_count;
    uint32_t sets[MAX_BINDINGS], bindings[MAX_BINDINGS], types[MAX_BINDINGS], counts[MAX_BINDINGS];
    uint32_t *code;
    size_t code_size;
};

static double now_us(void) {
    struct timespec time;
    clock_gettime(CLOCK_MONOTONIC, &time);
    return (double)time.tv_sec * 1e6 + (double)time.tv_nsec / 1e3;
}

static void read_code(struct module_entry *entry) {
    FILE *file = fopen(entry->path, "rb");
    if (!file) {
        perror(entry->path);
        exit(2);
    }
    fseek(file, 0, SEEK_END);
    entry->code_size = (size_t)ftell(file);
    fseek(file, 0, SEEK_SET);
    entry->code = malloc(entry->code_size);
    if (!entry->code || fread(entry->code, 1, entry->code_size, file) != entry->code_size) exit(2);
    fclose(file);
}

static uint32_t read_list(const char *path, struct module_entry *entries) {
    FILE *file = fopen(path, "r");
    if (!file) {
        perror(path);
        exit(2);
    }
    uint32_t count = 0;
    while (count < MAX_MODULES) {
        struct module_entry *entry = &entries[count];
        if (fscanf(file, "%1023s %d %u %u", entry->path, &entry->pipeline, &entry->push_bytes,
                   &entry->binding_count) != 4)
            break;
        if (entry->binding_count > MAX_BINDINGS) exit(2);
        for (uint32_t i = 0; i < entry->binding_count; ++i)
            if (fscanf(file, "%u %u %u %u", &entry->sets[i], &entry->bindings[i],
                       &entry->types[i], &entry->counts[i]) != 4)
                exit(2);
        read_code(entry);
        ++count;
    }
    fclose(file);
    return count;
}

/* The device with every core feature of Vulkan 1.0 to 1.3 the driver has. */
static VkDevice create_full_device(VkPhysicalDevice physical, VkQueue *queue) {
    static VkPhysicalDeviceVulkan13Features features13 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
    static VkPhysicalDeviceVulkan12Features features12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &features13};
    static VkPhysicalDeviceVulkan11Features features11 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, &features12};
    static VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                                 &features11};
    vkGetPhysicalDeviceFeatures2(physical, &features);
    return create_device(physical, &features, 0, NULL, queue);
}

static VkPipelineLayout create_layout(VkDevice device, const struct module_entry *entry,
                                      VkDescriptorSetLayout *set_layouts) {
    uint32_t set_count = 0;
    for (uint32_t i = 0; i < entry->binding_count; ++i)
        if (entry->sets[i] + 1 > set_count) set_count = entry->sets[i] + 1;
    if (set_count > MAX_SETS) exit(2);
    for (uint32_t set = 0; set < set_count; ++set) {
        VkDescriptorSetLayoutBinding bindings[MAX_BINDINGS];
        uint32_t count = 0;
        for (uint32_t i = 0; i < entry->binding_count; ++i) {
            if (entry->sets[i] != set) continue;
            VkDescriptorSetLayoutBinding binding = {entry->bindings[i], entry->types[i],
                                                    entry->counts[i],
                                                    VK_SHADER_STAGE_COMPUTE_BIT, NULL};
            bindings[count++] = binding;
        }
        VkDescriptorSetLayoutCreateInfo info = {
            VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
        info.bindingCount = count;
        info.pBindings = bindings;
        CHECK(vkCreateDescriptorSetLayout(device, &info, NULL, &set_layouts[set]));
    }
    VkPushConstantRange push = {VK_SHADER_STAGE_COMPUTE_BIT, 0, entry->push_bytes};
    VkPipelineLayoutCreateInfo info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    info.setLayoutCount = set_count;
    info.pSetLayouts = set_layouts;
    info.pushConstantRangeCount = entry->push_bytes ? 1 : 0;
    info.pPushConstantRanges = &push;
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(device, &info, NULL, &layout));
    for (uint32_t set = 0; set < set_count; ++set)
        vkDestroyDescriptorSetLayout(device, set_layouts[set], NULL);
    return layout;
}

static VkShaderModule create_module(VkDevice device, const struct module_entry *entry) {
    VkShaderModuleCreateInfo info = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
    info.codeSize = entry->code_size;
    info.pCode = entry->code;
    VkShaderModule module;
    CHECK(vkCreateShaderModule(device, &info, NULL, &module));
    return module;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s LIST PASSES\n", argv[0]);
        return 2;
    }
    static struct module_entry entries[MAX_MODULES];
    uint32_t module_count = read_list(argv[1], entries);
    int passes = atoi(argv[2]);
    double start = now_us();
    double span_start = start, span_us = -1;
    VkInstance instance = create_instance("module_creation_app", VK_API_VERSION_1_3, NULL, 0, NULL);
    double instance_us = now_us() - start;
    VkPhysicalDevice physical = first_physical_device(instance);
    VkQueue queue;
    start = now_us();
    VkDevice device = create_full_device(physical, &queue);
    double device_us = now_us() - start;
    double first_module_us = -1;
    for (int pass = 0; pass < passes; ++pass) {
        for (uint32_t index = 0; index < module_count; ++index) {
            const struct module_entry *entry = &entries[index];
            start = now_us();
            VkShaderModule module = create_module(device, entry);
            double module_us = now_us() - start;
            if (first_module_us < 0) {
                first_module_us = module_us;
                span_us = now_us() - span_start;
            }
            double pipeline_us = -1;
            if (entry->pipeline) {
                VkDescriptorSetLayout set_layouts[MAX_SETS];
                VkPipelineLayout layout = create_layout(device, entry, set_layouts);
                VkComputePipelineCreateInfo info = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
                info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
                info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
                info.stage.module = module;
                info.stage.pName = "main";
                info.layout = layout;
                VkPipeline pipeline;
                start = now_us();
                VkResult created =
                    vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline);
                pipeline_us = now_us() - start;
                if (created == VK_SUCCESS)
                    vkDestroyPipeline(device, pipeline, NULL);
                else
                    pipeline_us = -2; /* a feature the device lacks: left out of the figures */
                vkDestroyPipelineLayout(device, layout, NULL);
            }
            vkDestroyShaderModule(device, module, NULL);
            printf("module %d %u %.1f %.1f\n", pass, index, module_us, pipeline_us);
        }
    }
    printf("startup %.1f %.1f %.1f %.1f\n", instance_us, device_us, first_module_us, span_us);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    for (uint32_t index = 0; index < module_count; ++index) free(entries[index].code);
    return 0;
}
