/* One dispatch of one invocation whose descriptors live in a descriptor buffer
 * (VK_EXT_descriptor_buffer): the descriptor-buffer scenarios (knows nothing of gpuav).
 *
 *   descriptor_buffer_app SHADER.spv MODE INDEX WORD [OPTIONS [VERT.spv]]
 *
 * Set 0, made with VK_DESCRIPTOR_SET_LAYOUT_CREATE_DESCRIPTOR_BUFFER_BIT_EXT, has binding 0, an
 * array of 4 storage buffers, each 64 bytes of one data buffer named "particles" (descriptor
 * k's bytes hold 100 * k + w in word w), binding 1, a storage buffer of 16 words for results,
 * binding 2, an array of 4 uniform texel buffers (R32_UINT) over the same bytes as binding 0,
 * binding 3, an array of 4 storage images, each a 2D view of one 1x1 R32_UINT image that
 * holds 1234, and binding 4, an array of 4 combined image samplers of that view. Their
 * descriptors are written with vkGetDescriptorEXT into a host-visible descriptor buffer, bound
 * with vkCmdBindDescriptorBuffersEXT and vkCmdSetDescriptorBufferOffsetsEXT; the pipeline is
 * made with VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT. The push constants are the ints
 * INDEX (of the descriptor) and WORD (of the buffer), then the results buffer's device address.
 * MODE:
 *   written     every descriptor written with its 64 bytes;
 *   short       descriptor 2 (of bindings 0 and 2) written with a range of 32 bytes only;
 *   unwritten   descriptor 3 (of bindings 0, 2, 3 and 4) never written (its bytes stay zero).
 * OPTIONS, comma-separated: "offset" puts the set after an unused stretch of the descriptor
 * buffer (set offset not 0); "unmap" unmaps the descriptor buffer's memory before submitting;
 * "late" writes descriptors 3 of "unwritten" after recording, before submitting (the bytes at
 * submit time count); "resubmit" submits the command buffer twice; "no_sets" makes the
 * pipeline with a layout of no set layouts (the shader then uses push constants and device
 * addresses only) and binds no descriptor buffer; "v2" maps the descriptor buffer again with
 * vkMapMemory2KHR after writing it (VK_KHR_map_memory2) and sets the offsets with
 * vkCmdSetDescriptorBufferOffsets2EXT (VK_KHR_maintenance6); "push" adds set 1, a pushed
 * storage buffer descriptor (descriptorBufferPushDescriptors) of the results buffer, and
 * "push_short" pushes it with a range of 4 bytes; "destroyed" destroys the data buffer and the
 * image view, "freed" frees the data buffer's memory, once the descriptors are written;
 * "copied" writes the descriptors into a staging buffer, which the command buffer copies into
 * the descriptor buffer before the dispatch. With VERT.spv, SHADER is a fragment shader drawn
 * once over a 1x1 target (dynamic rendering) instead of dispatched. Prints "message" lines (vk_app_common.h), then
 * "result" and the result words. */
#include <string.h>

#include "vk_app_common.h"

#define RESULT_WORDS 16

/* VK_KHR_map_memory2 and VK_KHR_maintenance6, declared here: the system's headers may predate
 * them. */
typedef struct {
    VkStructureType sType; /* 1000271000 */
    const void *pNext;
    VkFlags flags;
    VkDeviceMemory memory;
    VkDeviceSize offset;
    VkDeviceSize size;
} MemoryMapInfo;
typedef struct {
    VkStructureType sType; /* 1000271001 */
    const void *pNext;
    VkFlags flags;
    VkDeviceMemory memory;
} MemoryUnmapInfo;
typedef struct {
    VkStructureType sType; /* 1000545007 */
    const void *pNext;
    VkShaderStageFlags stageFlags;
    VkPipelineLayout layout;
    uint32_t firstSet;
    uint32_t setCount;
    const uint32_t *pBufferIndices;
    const VkDeviceSize *pOffsets;
} SetDescriptorBufferOffsetsInfo;
typedef struct {
    VkStructureType sType; /* 1000545000 */
    void *pNext;
    VkBool32 maintenance6;
} Maintenance6Features;
typedef VkResult(VKAPI_PTR *MapMemory2)(VkDevice, const MemoryMapInfo *, void **);
typedef VkResult(VKAPI_PTR *UnmapMemory2)(VkDevice, const MemoryUnmapInfo *);
typedef void(VKAPI_PTR *SetOffsets2)(VkCommandBuffer, const SetDescriptorBufferOffsetsInfo *);
#define DATA_DESCRIPTORS 4
#define DATA_BYTES 64

static int has_option(const char *options, const char *name) {
    size_t length = strlen(name);
    for (const char *at = options; (at = strstr(at, name)) != NULL; at += length) {
        int starts = at == options || at[-1] == ',';
        int ends = at[length] == '\0' || at[length] == ',';
        if (starts && ends) return 1;
    }
    return 0;
}

static void *device_function(VkDevice device, const char *name) {
    void *function = (void *)vkGetDeviceProcAddr(device, name);
    if (!function) {
        fprintf(stderr, "no %s\n", name);
        exit(2);
    }
    return function;
}

/* A host-visible buffer whose device address is returned through `address`. */
static void *create_addressed_buffer(VkDevice device,
                                     const VkPhysicalDeviceMemoryProperties *properties,
                                     VkDeviceSize size, VkBufferUsageFlags usage,
                                     VkBuffer *buffer, VkDeviceMemory *memory,
                                     VkDeviceAddress *address) {
    VkMemoryAllocateFlagsInfo flags = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_FLAGS_INFO};
    flags.flags = VK_MEMORY_ALLOCATE_DEVICE_ADDRESS_BIT;
    create_host_buffer(device, properties, size,
                       usage | VK_BUFFER_USAGE_SHADER_DEVICE_ADDRESS_BIT, NULL, ~0u, &flags,
                       buffer, memory);
    VkBufferDeviceAddressInfo info = {VK_STRUCTURE_TYPE_BUFFER_DEVICE_ADDRESS_INFO};
    info.buffer = *buffer;
    *address = vkGetBufferDeviceAddress(device, &info);
    void *mapped;
    CHECK(vkMapMemory(device, *memory, 0, VK_WHOLE_SIZE, 0, &mapped));
    memset(mapped, 0, size);
    return mapped;
}

#define STAGES (VK_SHADER_STAGE_COMPUTE_BIT | VK_SHADER_STAGE_FRAGMENT_BIT)
#define TARGET_FORMAT VK_FORMAT_R8G8B8A8_UNORM

/* A 1x1 color target drawn with dynamic rendering (VK_KHR_dynamic_rendering). */
typedef struct {
    VkImage image;
    VkDeviceMemory memory;
    VkImageView view;
} Target;

static void create_target(VkDevice device, const VkPhysicalDeviceMemoryProperties *properties,
                          Target *target) {
    VkImageCreateInfo info = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = TARGET_FORMAT;
    info.extent = (VkExtent3D){1, 1, 1};
    info.mipLevels = info.arrayLayers = 1;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT;
    CHECK(vkCreateImage(device, &info, NULL, &target->image));
    VkMemoryRequirements requirements;
    vkGetImageMemoryRequirements(device, target->image, &requirements);
    VkMemoryAllocateInfo allocate = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    allocate.allocationSize = requirements.size;
    allocate.memoryTypeIndex = memory_type(properties, requirements.memoryTypeBits, 0);
    CHECK(vkAllocateMemory(device, &allocate, NULL, &target->memory));
    CHECK(vkBindImageMemory(device, target->image, target->memory, 0));
    VkImageViewCreateInfo view = {VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view.image = target->image;
    view.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view.format = TARGET_FORMAT;
    view.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    CHECK(vkCreateImageView(device, &view, NULL, &target->view));
}

static void destroy_target(VkDevice device, Target *target) {
    vkDestroyImageView(device, target->view, NULL);
    vkDestroyImage(device, target->image, NULL);
    vkFreeMemory(device, target->memory, NULL);
}

static VkPipeline create_graphics_pipeline(VkDevice device, VkPipelineLayout layout,
                                           VkShaderModule vertex, VkShaderModule fragment) {
    VkPipelineShaderStageCreateInfo stages[2] = {
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
         VK_SHADER_STAGE_VERTEX_BIT, vertex, "main", NULL},
        {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
         VK_SHADER_STAGE_FRAGMENT_BIT, fragment, "main", NULL},
    };
    VkPipelineVertexInputStateCreateInfo input = {
        VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    VkPipelineInputAssemblyStateCreateInfo assembly = {
        VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    VkViewport viewport = {0, 0, 1, 1, 0, 1};
    VkRect2D scissor = {{0, 0}, {1, 1}};
    VkPipelineViewportStateCreateInfo viewports = {
        VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    viewports.viewportCount = viewports.scissorCount = 1;
    viewports.pViewports = &viewport;
    viewports.pScissors = &scissor;
    VkPipelineRasterizationStateCreateInfo raster = {
        VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    raster.lineWidth = 1;
    VkPipelineMultisampleStateCreateInfo multisample = {
        VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineColorBlendAttachmentState attachment = {0};
    attachment.colorWriteMask = 0xF;
    VkPipelineColorBlendStateCreateInfo blend = {
        VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
    blend.attachmentCount = 1;
    blend.pAttachments = &attachment;
    VkFormat format = TARGET_FORMAT;
    VkPipelineRenderingCreateInfo rendering = {VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO};
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachmentFormats = &format;
    VkGraphicsPipelineCreateInfo info = {VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO,
                                         &rendering};
    info.flags = VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT;
    info.stageCount = 2;
    info.pStages = stages;
    info.pVertexInputState = &input;
    info.pInputAssemblyState = &assembly;
    info.pViewportState = &viewports;
    info.pRasterizationState = &raster;
    info.pMultisampleState = &multisample;
    info.pColorBlendState = &blend;
    info.layout = layout;
    VkPipeline pipeline;
    CHECK(vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));
    return pipeline;
}

/* One triangle over the 1x1 target: one fragment. */
static void draw_one_fragment(VkDevice device, VkCommandBuffer command_buffer,
                              const Target *target) {
    VkImageMemoryBarrier to_attachment = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    to_attachment.dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    to_attachment.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    to_attachment.newLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    to_attachment.srcQueueFamilyIndex = to_attachment.dstQueueFamilyIndex =
        VK_QUEUE_FAMILY_IGNORED;
    to_attachment.image = target->image;
    to_attachment.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1,
                                                               0, 1};
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                         VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT, 0, 0, NULL, 0, NULL, 1,
                         &to_attachment);
    VkRenderingAttachmentInfo color = {VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    color.imageView = target->view;
    color.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    color.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    color.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    VkRenderingInfo rendering = {VK_STRUCTURE_TYPE_RENDERING_INFO};
    rendering.renderArea = (VkRect2D){{0, 0}, {1, 1}};
    rendering.layerCount = 1;
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachments = &color;
    PFN_vkCmdBeginRenderingKHR begin = device_function(device, "vkCmdBeginRenderingKHR");
    PFN_vkCmdEndRenderingKHR end = device_function(device, "vkCmdEndRenderingKHR");
    begin(command_buffer, &rendering);
    vkCmdDraw(command_buffer, 3, 1, 0, 0);
    end(command_buffer);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s SHADER MODE INDEX WORD [OPTIONS]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[2];
    struct {
        int32_t index, word;
        VkDeviceAddress results;
    } push_values = {(int32_t)strtol(argv[3], NULL, 0), (int32_t)strtol(argv[4], NULL, 0), 0};
    const char *options = argc > 5 ? argv[5] : "";
    const char *vertex_path = argc > 6 && argv[6][0] ? argv[6] : NULL;
    VkPipelineBindPoint bind_point =
        vertex_path ? VK_PIPELINE_BIND_POINT_GRAPHICS : VK_PIPELINE_BIND_POINT_COMPUTE;
    const char *extensions[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
    VkInstance instance =
        create_instance("descriptor_buffer_app", VK_API_VERSION_1_2, NULL, 1, extensions);
    VkDebugUtilsMessengerEXT messenger = create_messenger(
        instance,
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT, print_message);
    VkPhysicalDevice physical = first_physical_device(instance);
    VkPhysicalDeviceMemoryProperties memory_properties;
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkPhysicalDeviceDescriptorBufferPropertiesEXT buffer_properties = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DESCRIPTOR_BUFFER_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 properties = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                              &buffer_properties};
    vkGetPhysicalDeviceProperties2(physical, &properties);

    int v2 = has_option(options, "v2");
    int pushing = has_option(options, "push") || has_option(options, "push_short");
    Maintenance6Features maintenance6 = {(VkStructureType)1000545000, NULL, VK_TRUE};
    VkPhysicalDeviceDescriptorBufferFeaturesEXT descriptor_buffer = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DESCRIPTOR_BUFFER_FEATURES_EXT,
        v2 ? &maintenance6 : NULL};
    descriptor_buffer.descriptorBuffer = VK_TRUE;
    descriptor_buffer.descriptorBufferPushDescriptors = pushing ? VK_TRUE : VK_FALSE;
    VkPhysicalDeviceVulkan12Features vulkan12 = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, &descriptor_buffer};
    vulkan12.bufferDeviceAddress = VK_TRUE;
    vulkan12.shaderUniformTexelBufferArrayDynamicIndexing = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &vulkan12};
    features.features.shaderStorageImageArrayDynamicIndexing = VK_TRUE;
    features.features.shaderSampledImageArrayDynamicIndexing = VK_TRUE;
    features.features.fragmentStoresAndAtomics = VK_TRUE;
    VkPhysicalDeviceDynamicRenderingFeatures dynamic_rendering = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DYNAMIC_RENDERING_FEATURES, NULL, VK_TRUE};
    const char *device_extensions[5] = {VK_EXT_DESCRIPTOR_BUFFER_EXTENSION_NAME,
                                        VK_KHR_SYNCHRONIZATION_2_EXTENSION_NAME};
    uint32_t extension_count = 2;
    if (v2) {
        device_extensions[extension_count++] = "VK_KHR_map_memory2";
        device_extensions[extension_count++] = "VK_KHR_maintenance6";
    }
    if (pushing) device_extensions[extension_count++] = VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME;
    if (vertex_path) {
        device_extensions[extension_count++] = VK_KHR_DYNAMIC_RENDERING_EXTENSION_NAME;
        dynamic_rendering.pNext = features.pNext;
        features.pNext = &dynamic_rendering;
    }
    VkQueue queue;
    VkDevice device =
        create_device(physical, &features, extension_count, device_extensions, &queue);
    PFN_vkGetDescriptorSetLayoutSizeEXT layout_size =
        device_function(device, "vkGetDescriptorSetLayoutSizeEXT");
    PFN_vkGetDescriptorSetLayoutBindingOffsetEXT binding_offset =
        device_function(device, "vkGetDescriptorSetLayoutBindingOffsetEXT");
    PFN_vkGetDescriptorEXT get_descriptor = device_function(device, "vkGetDescriptorEXT");
    PFN_vkCmdBindDescriptorBuffersEXT bind_buffers =
        device_function(device, "vkCmdBindDescriptorBuffersEXT");
    PFN_vkCmdSetDescriptorBufferOffsetsEXT set_offsets =
        device_function(device, "vkCmdSetDescriptorBufferOffsetsEXT");

    VkDescriptorSetLayoutBinding bindings[5] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, DATA_DESCRIPTORS, STAGES, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, STAGES, NULL},
        {2, VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, DATA_DESCRIPTORS,
         STAGES, NULL},
        {3, VK_DESCRIPTOR_TYPE_STORAGE_IMAGE, DATA_DESCRIPTORS, STAGES, NULL},
        {4, VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, DATA_DESCRIPTORS,
         STAGES, NULL},
    };
    VkDescriptorSetLayoutCreateInfo set_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.flags = VK_DESCRIPTOR_SET_LAYOUT_CREATE_DESCRIPTOR_BUFFER_BIT_EXT;
    set_info.bindingCount = 5;
    set_info.pBindings = bindings;
    VkDescriptorSetLayout set_layouts[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
    CHECK(vkCreateDescriptorSetLayout(device, &set_info, NULL, &set_layouts[0]));
    VkDescriptorSetLayout set_layout = set_layouts[0];
    VkDescriptorSetLayoutBinding pushed_binding = {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                                                   STAGES, NULL};
    set_info.flags |= VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR;
    set_info.bindingCount = 1;
    set_info.pBindings = &pushed_binding;
    if (pushing) CHECK(vkCreateDescriptorSetLayout(device, &set_info, NULL, &set_layouts[1]));
    VkPushConstantRange push = {STAGES, 0, sizeof push_values};
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = has_option(options, "no_sets") ? 0 : pushing ? 2 : 1;
    layout_info.pSetLayouts = set_layouts;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push;
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(device, &layout_info, NULL, &layout));

    VkDeviceSize set_size, data_offset, result_offset, texel_offset, image_offset,
        sampled_offset;
    layout_size(device, set_layout, &set_size);
    binding_offset(device, set_layout, 0, &data_offset);
    binding_offset(device, set_layout, 1, &result_offset);
    binding_offset(device, set_layout, 2, &texel_offset);
    binding_offset(device, set_layout, 3, &image_offset);
    binding_offset(device, set_layout, 4, &sampled_offset);
    VkDeviceSize alignment = buffer_properties.descriptorBufferOffsetAlignment;
    VkDeviceSize set_offset =
        has_option(options, "offset") ? (set_size + alignment - 1) / alignment * alignment : 0;
    VkBuffer descriptors, data, results;
    VkDeviceMemory descriptor_memory, data_memory, result_memory;
    VkDeviceAddress descriptor_address, data_address, result_address;
    uint8_t *descriptor_bytes = create_addressed_buffer(
        device, &memory_properties, set_offset + set_size,
        VK_BUFFER_USAGE_RESOURCE_DESCRIPTOR_BUFFER_BIT_EXT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
        &descriptors, &descriptor_memory, &descriptor_address);
    int copied = has_option(options, "copied");
    VkBuffer staging;
    VkDeviceMemory staging_memory;
    VkDeviceAddress staging_address;
    uint8_t *staging_bytes = create_addressed_buffer(
        device, &memory_properties, set_offset + set_size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT,
        &staging, &staging_memory, &staging_address);
    uint8_t *written_bytes = copied ? staging_bytes : descriptor_bytes;
    uint32_t *data_words = create_addressed_buffer(
        device, &memory_properties, DATA_DESCRIPTORS * DATA_BYTES,
        VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT, &data,
        &data_memory, &data_address);
    uint32_t *result_words = create_addressed_buffer(
        device, &memory_properties, 4 * RESULT_WORDS, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT,
        &results, &result_memory, &result_address);
    push_values.results = result_address;
    PFN_vkSetDebugUtilsObjectNameEXT set_name =
        device_function(device, "vkSetDebugUtilsObjectNameEXT");
    VkDebugUtilsObjectNameInfoEXT name = {VK_STRUCTURE_TYPE_DEBUG_UTILS_OBJECT_NAME_INFO_EXT};
    name.objectType = VK_OBJECT_TYPE_BUFFER;
    name.objectHandle = (uint64_t)data;
    name.pObjectName = "particles";
    CHECK(set_name(device, &name));
    for (uint32_t k = 0; k < DATA_DESCRIPTORS * DATA_BYTES / 4; ++k)
        data_words[k] = 100 * (k / (DATA_BYTES / 4)) + k % (DATA_BYTES / 4);

    size_t descriptor_size = buffer_properties.storageBufferDescriptorSize;
    size_t texel_size = buffer_properties.uniformTexelBufferDescriptorSize;
    for (uint32_t k = 0; k <= 2 * DATA_DESCRIPTORS; ++k) {
        int is_result = k == DATA_DESCRIPTORS, is_texel = k > DATA_DESCRIPTORS;
        uint32_t element = is_texel ? k - DATA_DESCRIPTORS - 1 : k;
        if (!is_result && element == 3 && !strcmp(mode, "unwritten")) continue;
        VkDescriptorAddressInfoEXT described = {VK_STRUCTURE_TYPE_DESCRIPTOR_ADDRESS_INFO_EXT};
        described.address = is_result ? result_address : data_address + element * DATA_BYTES;
        described.range = is_result ? 4 * RESULT_WORDS
                          : (element == 2 && !strcmp(mode, "short")) ? DATA_BYTES / 2
                                                                     : DATA_BYTES;
        described.format = is_texel ? VK_FORMAT_R32_UINT : VK_FORMAT_UNDEFINED;
        VkDescriptorGetInfoEXT get_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_GET_INFO_EXT};
        get_info.type = is_texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                 : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        if (is_texel)
            get_info.data.pUniformTexelBuffer = &described;
        else
            get_info.data.pStorageBuffer = &described;
        VkDeviceSize at = set_offset + (is_result  ? result_offset
                                        : is_texel ? texel_offset + element * texel_size
                                                   : data_offset + element * descriptor_size);
        get_descriptor(device, &get_info, is_texel ? texel_size : descriptor_size,
                       written_bytes + at);
    }
    VkImage image;
    VkDeviceMemory image_memory;
    VkImageView image_view;
    VkImageCreateInfo image_info = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    image_info.imageType = VK_IMAGE_TYPE_2D;
    image_info.format = VK_FORMAT_R32_UINT;
    image_info.extent = (VkExtent3D){1, 1, 1};
    image_info.mipLevels = 1;
    image_info.arrayLayers = 1;
    image_info.samples = VK_SAMPLE_COUNT_1_BIT;
    image_info.tiling = VK_IMAGE_TILING_OPTIMAL;
    image_info.usage = VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT |
                       VK_IMAGE_USAGE_TRANSFER_DST_BIT;
    CHECK(vkCreateImage(device, &image_info, NULL, &image));
    VkMemoryRequirements image_requirements;
    vkGetImageMemoryRequirements(device, image, &image_requirements);
    VkMemoryAllocateInfo image_allocate = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    image_allocate.allocationSize = image_requirements.size;
    image_allocate.memoryTypeIndex =
        memory_type(&memory_properties, image_requirements.memoryTypeBits, 0);
    CHECK(vkAllocateMemory(device, &image_allocate, NULL, &image_memory));
    CHECK(vkBindImageMemory(device, image, image_memory, 0));
    VkImageViewCreateInfo view_info = {VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    view_info.image = image;
    view_info.viewType = VK_IMAGE_VIEW_TYPE_2D;
    view_info.format = VK_FORMAT_R32_UINT;
    view_info.subresourceRange = (VkImageSubresourceRange){VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    CHECK(vkCreateImageView(device, &view_info, NULL, &image_view));
    VkDescriptorImageInfo described_image = {VK_NULL_HANDLE, image_view, VK_IMAGE_LAYOUT_GENERAL};
    VkDescriptorGetInfoEXT image_get = {VK_STRUCTURE_TYPE_DESCRIPTOR_GET_INFO_EXT};
    image_get.type = VK_DESCRIPTOR_TYPE_STORAGE_IMAGE;
    image_get.data.pStorageImage = &described_image;
    size_t image_size = buffer_properties.storageImageDescriptorSize;
    for (uint32_t k = 0; k < DATA_DESCRIPTORS; ++k) {
        if (k == 3 && !strcmp(mode, "unwritten")) continue;
        get_descriptor(device, &image_get, image_size,
                       written_bytes + set_offset + image_offset + k * image_size);
    }
    VkSamplerCreateInfo sampler_info = {VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
    VkSampler sampler;
    CHECK(vkCreateSampler(device, &sampler_info, NULL, &sampler));
    VkDescriptorImageInfo described_sampled = {sampler, image_view, VK_IMAGE_LAYOUT_GENERAL};
    VkDescriptorGetInfoEXT sampled_get = {VK_STRUCTURE_TYPE_DESCRIPTOR_GET_INFO_EXT};
    sampled_get.type = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    sampled_get.data.pCombinedImageSampler = &described_sampled;
    size_t sampled_size = buffer_properties.combinedImageSamplerDescriptorSize;
    if (!buffer_properties.combinedImageSamplerDescriptorSingleArray) {
        fprintf(stderr, "combined image samplers in two arrays: not written here\n");
        exit(2);
    }
    for (uint32_t k = 0; k < DATA_DESCRIPTORS; ++k) {
        if (k == 3 && !strcmp(mode, "unwritten")) continue;
        get_descriptor(device, &sampled_get, sampled_size,
                       written_bytes + set_offset + sampled_offset + k * sampled_size);
    }
    int destroyed = has_option(options, "destroyed"), freed = has_option(options, "freed");
    if (destroyed) {
        vkDestroyBuffer(device, data, NULL);
        vkDestroyImageView(device, image_view, NULL);
    }
    if (freed) vkFreeMemory(device, data_memory, NULL);
    /* Descriptors 3 as "late" writes them, after recording. */
    VkDescriptorAddressInfoEXT late = {VK_STRUCTURE_TYPE_DESCRIPTOR_ADDRESS_INFO_EXT};
    late.address = data_address + 3 * DATA_BYTES;
    late.range = DATA_BYTES;
    late.format = VK_FORMAT_R32_UINT;
    VkDescriptorGetInfoEXT late_info = {VK_STRUCTURE_TYPE_DESCRIPTOR_GET_INFO_EXT};
    late_info.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    late_info.data.pStorageBuffer = &late;
    VkDescriptorGetInfoEXT late_texel = {VK_STRUCTURE_TYPE_DESCRIPTOR_GET_INFO_EXT};
    late_texel.type = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    late_texel.data.pUniformTexelBuffer = &late;
    if (has_option(options, "unmap")) vkUnmapMemory(device, descriptor_memory);
    if (v2) {
        UnmapMemory2 unmap2 = device_function(device, "vkUnmapMemory2KHR");
        MapMemory2 map2 = device_function(device, "vkMapMemory2KHR");
        MemoryUnmapInfo unmap_info = {(VkStructureType)1000271001, NULL, 0, descriptor_memory};
        CHECK(unmap2(device, &unmap_info));
        MemoryMapInfo map_info = {(VkStructureType)1000271000, NULL, 0, descriptor_memory, 0,
                                  VK_WHOLE_SIZE};
        CHECK(map2(device, &map_info, (void **)&descriptor_bytes));
    }

    VkShaderModule module = load_shader_module(device, argv[1]);
    VkShaderModule vertex = vertex_path ? load_shader_module(device, vertex_path) : VK_NULL_HANDLE;
    Target target = {0};
    VkPipeline pipeline;
    if (vertex_path) {
        create_target(device, &memory_properties, &target);
        pipeline = create_graphics_pipeline(device, layout, vertex, module);
    } else {
        VkComputePipelineCreateInfo pipeline_info = {
            VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
        pipeline_info.flags = VK_PIPELINE_CREATE_DESCRIPTOR_BUFFER_BIT_EXT;
        pipeline_info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
        pipeline_info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
        pipeline_info.stage.module = module;
        pipeline_info.stage.pName = "main";
        pipeline_info.layout = layout;
        CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &pipeline_info, NULL,
                                       &pipeline));
    }

    VkCommandPool command_pool = create_command_pool(device);
    VkCommandBuffer command_buffer = begin_command_buffer(device, command_pool, 0);
    VkImageMemoryBarrier to_general = {VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER};
    to_general.dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    to_general.oldLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    to_general.newLayout = VK_IMAGE_LAYOUT_GENERAL;
    to_general.srcQueueFamilyIndex = to_general.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
    to_general.image = image;
    to_general.subresourceRange = view_info.subresourceRange;
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT,
                         VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 0, NULL, 0, NULL, 1, &to_general);
    VkClearColorValue clear = {.uint32 = {1234, 0, 0, 0}};
    vkCmdClearColorImage(command_buffer, image, VK_IMAGE_LAYOUT_GENERAL, &clear, 1,
                         &view_info.subresourceRange);
    VkImageMemoryBarrier cleared = to_general;
    cleared.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    cleared.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
    cleared.oldLayout = VK_IMAGE_LAYOUT_GENERAL;
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 0, NULL, 0, NULL, 1, &cleared);
    if (copied) {
        VkBufferCopy whole = {0, 0, set_offset + set_size};
        vkCmdCopyBuffer(command_buffer, staging, descriptors, 1, &whole);
        VkMemoryBarrier copied_barrier = {VK_STRUCTURE_TYPE_MEMORY_BARRIER};
        copied_barrier.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
        copied_barrier.dstAccessMask = VK_ACCESS_SHADER_READ_BIT;
        vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                             VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &copied_barrier, 0, NULL,
                             0, NULL);
    }
    vkCmdBindPipeline(command_buffer, bind_point, pipeline);
    VkDescriptorBufferBindingInfoEXT binding_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_BUFFER_BINDING_INFO_EXT};
    binding_info.address = descriptor_address;
    binding_info.usage = VK_BUFFER_USAGE_RESOURCE_DESCRIPTOR_BUFFER_BIT_EXT;
    uint32_t buffer_index = 0;
    if (!has_option(options, "no_sets")) {
        bind_buffers(command_buffer, 1, &binding_info);
        SetDescriptorBufferOffsetsInfo offsets_info = {
            (VkStructureType)1000545007, NULL, STAGES, layout, 0, 1,
            &buffer_index, &set_offset};
        if (v2) {
            SetOffsets2 set_offsets2 = device_function(device, "vkCmdSetDescriptorBufferOffsets2EXT");
            set_offsets2(command_buffer, &offsets_info);
        } else {
            set_offsets(command_buffer, bind_point, layout, 0, 1, &buffer_index, &set_offset);
        }
    }
    if (pushing) {
        VkDescriptorBufferInfo pushed = {results, 0,
                                         has_option(options, "push_short") ? 4 : 4 * RESULT_WORDS};
        VkWriteDescriptorSet write = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        write.descriptorCount = 1;
        write.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        write.pBufferInfo = &pushed;
        PFN_vkCmdPushDescriptorSetKHR push_set =
            device_function(device, "vkCmdPushDescriptorSetKHR");
        push_set(command_buffer, bind_point, layout, 1, 1, &write);
    }
    vkCmdPushConstants(command_buffer, layout, STAGES, 0, sizeof push_values, &push_values);
    if (vertex_path) {
        draw_one_fragment(device, command_buffer, &target);
    } else {
        vkCmdDispatch(command_buffer, 1, 1, 1);
    }
    CHECK(vkEndCommandBuffer(command_buffer));
    if (has_option(options, "late")) {
        get_descriptor(device, &late_info, descriptor_size,
                       descriptor_bytes + set_offset + data_offset + 3 * descriptor_size);
        get_descriptor(device, &late_texel, texel_size,
                       descriptor_bytes + set_offset + texel_offset + 3 * texel_size);
    }
    int submits = has_option(options, "resubmit") ? 2 : 1;
    for (int k = 0; k < submits; ++k) {
        VkFence fence = submit_and_wait(device, queue, command_buffer);
        CHECK(vkQueueWaitIdle(queue)); /* the Khronos layer reports GPU-AV findings here */
        vkDestroyFence(device, fence, NULL);
    }

    printf("result");
    for (int k = 0; k < RESULT_WORDS; ++k) printf(" %u", result_words[k]);
    printf("\n");
    vkDestroyCommandPool(device, command_pool, NULL);
    vkDestroyPipeline(device, pipeline, NULL);
    if (vertex_path) {
        destroy_target(device, &target);
        vkDestroyShaderModule(device, vertex, NULL);
    }
    vkDestroyShaderModule(device, module, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layouts[0], NULL);
    vkDestroyDescriptorSetLayout(device, set_layouts[1], NULL);
    vkDestroySampler(device, sampler, NULL);
    if (!destroyed) vkDestroyImageView(device, image_view, NULL);
    vkDestroyImage(device, image, NULL);
    vkFreeMemory(device, image_memory, NULL);
    vkDestroyBuffer(device, descriptors, NULL);
    if (!destroyed) vkDestroyBuffer(device, data, NULL);
    vkDestroyBuffer(device, results, NULL);
    vkDestroyBuffer(device, staging, NULL);
    vkFreeMemory(device, staging_memory, NULL);
    vkFreeMemory(device, descriptor_memory, NULL);
    if (!freed) vkFreeMemory(device, data_memory, NULL);
    vkFreeMemory(device, result_memory, NULL);
    vkDestroyDevice(device, NULL);
    destroy_messenger(instance, messenger);
    vkDestroyInstance(instance, NULL);
    return 0;
}
