/* A graphics app that draws through VK_EXT_device_generated_commands: inside one dynamic
 * rendering of a 4 x 4 area with no attachments, an execute of two sequences, a vkCmdDraw of
 * two instances, another execute. Each sequence draws one full-area triangle whose instance
 * is the sequence's number (firstInstance); the fragment shader adds a palette word to its
 * pixel of a storage buffer. It knows nothing of gpuav.
 *
 * usage: dgc_draw_app VERT FRAG OTHER_FRAG TOKEN SET PALETTE WORD
 * TOKEN: the sequences' draw token: draw, draw_indexed, draw_count or draw_indexed_count
 * (the count tokens each name one draw of a second buffer). SET: "none" (the bound pipeline
 * runs every sequence), "pipelines" (an execution set: sequence k runs pipeline k, created
 * with VK_PIPELINE_CREATE_2_INDIRECT_BINDABLE_BIT_EXT; pipeline 0 draws with FRAG, pipeline 1,
 * written by vkUpdateIndirectExecutionSetPipelineEXT, with OTHER_FRAG), "wide" (the same,
 * pipeline 1's layout compatible but naming maxBoundDescriptorSets sets, set 0's and empty
 * ones) or "shaders" (an
 * execution set of shader objects (VK_EXT_shader_object): VERT and FRAG at 0 and 1, OTHER_FRAG
 * written at 2 by vkUpdateIndirectExecutionSetShaderEXT; sequence k draws with VERT and
 * fragment shader 1 + k). Set 0: binding 0 two
 * palettes (storage buffers of 4 words, k * 100 + word + 1), binding 1 the image (16 words).
 * The push constants (uint palette, int word, uint action) are (0, 0, 0), (0, 0, 1) and
 * (PALETTE, WORD, 2) for the three actions: the fragment shaders' chosen invocation (pixel 6
 * of instance 1) takes its palette and word from them.
 * Prints "message <severity>|<id>|<text>" per message (vk_app_common.h), "hash <fnv1a of the
 * image>" and "result" with the image's words.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vulkan/vulkan.h>

#include "device_generated_commands_ext.h"
#include "vk_graphics_common.h"


enum { SIDE = 4, PIXELS = SIDE * SIDE, PALETTES = 2, WORDS = 4, SEQUENCES = 2 };

static VkDevice device;
static VkPhysicalDeviceMemoryProperties memory_properties;

/* A buffer of device_generated_commands_ext.h on this program's device. */
static Buffer make_buffer(VkDeviceSize size, VkBufferUsageFlags usage, uint64_t usage2,
                          const VkMemoryRequirements *required) {
    return create_generated_commands_buffer(device, &memory_properties, size, usage, usage2,
                                            required);
}

static void free_buffer(Buffer *buffer) { destroy_generated_commands_buffer(device, buffer); }

static PFN_vkVoidFunction load(const char *name) { return load_device_function(device, name); }

static VkQueue create_generated_commands_device(VkPhysicalDevice physical, int shader_objects) {
    VkPhysicalDeviceShaderObjectFeaturesEXT object_features = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_OBJECT_FEATURES_EXT};
    object_features.shaderObject = VK_TRUE;
    VkPhysicalDeviceDeviceGeneratedCommandsFeaturesEXT generated = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DEVICE_GENERATED_COMMANDS_FEATURES_EXT,
        shader_objects ? &object_features : NULL};
    generated.deviceGeneratedCommands = VK_TRUE;
    VkPhysicalDeviceMaintenance5FeaturesKHR maintenance = {
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_5_FEATURES_KHR, &generated};
    maintenance.maintenance5 = VK_TRUE;
    VkPhysicalDeviceVulkan13Features v13 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES,
                                            &maintenance};
    v13.dynamicRendering = VK_TRUE;
    VkPhysicalDeviceVulkan12Features v12 = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                                            &v13};
    v12.bufferDeviceAddress = VK_TRUE;
    v12.shaderStorageBufferArrayNonUniformIndexing = VK_TRUE;
    VkPhysicalDeviceFeatures2 features = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, &v12};
    features.features.fragmentStoresAndAtomics = VK_TRUE;
    features.features.drawIndirectFirstInstance = VK_TRUE;
    const char *extensions[] = {"VK_EXT_device_generated_commands", "VK_KHR_maintenance5",
                                VK_EXT_SHADER_OBJECT_EXTENSION_NAME};
    VkQueue queue;
    device = create_device(physical, &features, shader_objects ? 3 : 2, extensions, &queue);
    return queue;
}

static VkPipeline create_pipeline(VkPipelineLayout layout, VkShaderModule vertex,
                                  VkShaderModule fragment, int bindable) {
    VkPipelineShaderStageCreateInfo stages[2];
    vertex_fragment_stages(vertex, fragment, stages);
    DrawState state;
    init_draw_state(&state, SIDE, SIDE, 0, 0);
    VkPipelineCreateFlags2CreateInfoKHR flags2 = {
        VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR};
    flags2.flags = PIPELINE_CREATE_2_INDIRECT_BINDABLE_BIT_EXT;
    VkPipelineRenderingCreateInfo rendering = {VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO,
                                               bindable ? &flags2 : NULL};
    VkGraphicsPipelineCreateInfo info =
        draw_pipeline_info(&state, &rendering, 2, stages, layout, VK_NULL_HANDLE);
    VkPipeline pipeline;
    CHECK(vkCreateGraphicsPipelines(device, VK_NULL_HANDLE, 1, &info, NULL, &pipeline));
    return pipeline;
}

static int token_type(const char *name) {
    if (!strcmp(name, "draw")) return TOKEN_DRAW;
    if (!strcmp(name, "draw_indexed")) return TOKEN_DRAW_INDEXED;
    if (!strcmp(name, "draw_count")) return TOKEN_DRAW_COUNT;
    if (!strcmp(name, "draw_indexed_count")) return TOKEN_DRAW_INDEXED_COUNT;
    fprintf(stderr, "unknown token %s\n", name);
    exit(2);
}

int main(int argc, char **argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: dgc_draw_app VERT FRAG OTHER_FRAG TOKEN SET PALETTE WORD\n");
        return 2;
    }
    int token = token_type(argv[4]);
    int shader_objects = !strcmp(argv[5], "shaders");
    int wide = !strcmp(argv[5], "wide");
    int with_set = shader_objects || wide || !strcmp(argv[5], "pipelines");
    if (!with_set && strcmp(argv[5], "none")) return 2;
    int indexed = token == TOKEN_DRAW_INDEXED || token == TOKEN_DRAW_INDEXED_COUNT;
    int counted = token == TOKEN_DRAW_COUNT || token == TOKEN_DRAW_INDEXED_COUNT;
    uint32_t pushes[3][3] = {{0, 0, 0}, {0, 0, 1}, {0, 0, 2}};
    pushes[2][0] = (uint32_t)strtoul(argv[6], NULL, 0);
    pushes[2][1] = (uint32_t)strtol(argv[7], NULL, 0);

    const char *extension = VK_EXT_DEBUG_UTILS_EXTENSION_NAME;
    VkInstance instance = create_instance("dgc_draw_app", VK_API_VERSION_1_3, NULL, 1, &extension);
    VkDebugUtilsMessengerEXT messenger = create_messenger(
        instance,
        VK_DEBUG_UTILS_MESSAGE_SEVERITY_INFO_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
            VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT,
        print_message);
    VkPhysicalDevice physical = first_physical_device(instance);
    vkGetPhysicalDeviceMemoryProperties(physical, &memory_properties);
    VkQueue queue = create_generated_commands_device(physical, shader_objects);
    GeneratedCommandsFunctions dgc = load_generated_commands_functions(device);
    PFN_vkCreateIndirectExecutionSetEXT create_execution_set =
        (PFN_vkCreateIndirectExecutionSetEXT)load("vkCreateIndirectExecutionSetEXT");
    PFN_vkUpdateIndirectExecutionSetPipelineEXT update_execution_set =
        (PFN_vkUpdateIndirectExecutionSetPipelineEXT)load(
            "vkUpdateIndirectExecutionSetPipelineEXT");
    PFN_vkDestroyIndirectExecutionSetEXT destroy_execution_set =
        (PFN_vkDestroyIndirectExecutionSetEXT)load("vkDestroyIndirectExecutionSetEXT");
    PFN_vkUpdateIndirectExecutionSetShaderEXT update_execution_set_shaders =
        (PFN_vkUpdateIndirectExecutionSetShaderEXT)load("vkUpdateIndirectExecutionSetShaderEXT");

    /* set 0: binding 0 the palettes, binding 1 the image */
    Buffer palettes[PALETTES];
    VkDescriptorBufferInfo palette_infos[PALETTES];
    for (uint32_t k = 0; k < PALETTES; ++k) {
        palettes[k] = make_buffer(4 * WORDS, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0, NULL);
        for (uint32_t word = 0; word < WORDS; ++word)
            ((uint32_t *)palettes[k].mapped)[word] = k * 100 + word + 1;
        palette_infos[k] = (VkDescriptorBufferInfo){palettes[k].buffer, 0, VK_WHOLE_SIZE};
    }
    Buffer image = make_buffer(4 * PIXELS, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, 0, NULL);
    VkDescriptorBufferInfo image_info = {image.buffer, 0, VK_WHOLE_SIZE};
    VkShaderStageFlags stages = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
    VkDescriptorSetLayoutBinding bindings[2] = {
        {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, PALETTES, VK_SHADER_STAGE_FRAGMENT_BIT, NULL},
        {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_FRAGMENT_BIT, NULL},
    };
    VkDescriptorSetLayoutCreateInfo set_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    set_info.bindingCount = 2;
    set_info.pBindings = bindings;
    VkDescriptorSetLayout set_layout;
    CHECK(vkCreateDescriptorSetLayout(device, &set_info, NULL, &set_layout));
    VkPushConstantRange push_range = {stages, 0, sizeof pushes[0]};
    VkPipelineLayoutCreateInfo layout_info = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    layout_info.setLayoutCount = 1;
    layout_info.pSetLayouts = &set_layout;
    layout_info.pushConstantRangeCount = 1;
    layout_info.pPushConstantRanges = &push_range;
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(device, &layout_info, NULL, &layout));
    VkDescriptorPoolSize pool_size = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, PALETTES + 1};
    VkDescriptorPool descriptor_pool;
    VkDescriptorSet set =
        allocate_one_set(device, 1, &pool_size, NULL, set_layout, &descriptor_pool);
    VkWriteDescriptorSet writes[2] = {
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 0, 0, PALETTES,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, palette_infos, NULL},
        {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 1, 0, 1,
         VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &image_info, NULL},
    };
    vkUpdateDescriptorSets(device, 2, writes, 0, NULL);

    /* "wide": set 0's layout, then empty ones up to the device's limit */
    VkPhysicalDeviceProperties properties;
    vkGetPhysicalDeviceProperties(physical, &properties);
    uint32_t set_count = properties.limits.maxBoundDescriptorSets;
    VkDescriptorSetLayoutCreateInfo empty_info = {
        VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
    VkDescriptorSetLayout empty_layout;
    CHECK(vkCreateDescriptorSetLayout(device, &empty_info, NULL, &empty_layout));
    VkDescriptorSetLayout *wide_sets = calloc(set_count, sizeof *wide_sets);
    for (uint32_t k = 0; k < set_count; ++k) wide_sets[k] = k ? empty_layout : set_layout;
    VkPipelineLayoutCreateInfo wide_info = layout_info;
    wide_info.setLayoutCount = set_count;
    wide_info.pSetLayouts = wide_sets;
    VkPipelineLayout wide_layout;
    CHECK(vkCreatePipelineLayout(device, &wide_info, NULL, &wide_layout));
    free(wide_sets);

    VkShaderModule modules[3] = {VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE};
    VkPipeline pipelines[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
    VkShaderEXT shaders[3] = {VK_NULL_HANDLE, VK_NULL_HANDLE, VK_NULL_HANDLE};
    PFN_vkCmdBindShadersEXT bind_shaders = NULL;
    PFN_vkDestroyShaderEXT destroy_shader = NULL;
    if (shader_objects) {
        bind_shaders = (PFN_vkCmdBindShadersEXT)load("vkCmdBindShadersEXT");
        destroy_shader = (PFN_vkDestroyShaderEXT)load("vkDestroyShaderEXT");
        PFN_vkCreateShadersEXT create_shaders = (PFN_vkCreateShadersEXT)load("vkCreateShadersEXT");
        for (int k = 0; k < 3; ++k) {
            FILE *file = fopen(argv[1 + k], "rb");
            if (!file) return 2;
            static uint32_t code[3][4096];
            size_t size = fread(code[k], 1, sizeof code[k], file);
            fclose(file);
            VkShaderCreateInfoEXT info = {VK_STRUCTURE_TYPE_SHADER_CREATE_INFO_EXT};
            info.flags = SHADER_CREATE_INDIRECT_BINDABLE_BIT_EXT;
            info.stage = k ? VK_SHADER_STAGE_FRAGMENT_BIT : VK_SHADER_STAGE_VERTEX_BIT;
            info.nextStage = k ? 0 : VK_SHADER_STAGE_FRAGMENT_BIT;
            info.codeType = VK_SHADER_CODE_TYPE_SPIRV_EXT;
            info.codeSize = size;
            info.pCode = code[k];
            info.pName = "main";
            info.setLayoutCount = 1;
            info.pSetLayouts = &set_layout;
            info.pushConstantRangeCount = 1;
            info.pPushConstantRanges = &push_range;
            CHECK(create_shaders(device, 1, &info, NULL, &shaders[k]));
        }
    } else {
        for (int k = 0; k < 3; ++k) modules[k] = load_shader_module(device, argv[1 + k]);
        pipelines[0] = create_pipeline(layout, modules[0], modules[1], with_set);
        if (with_set)
            pipelines[1] = create_pipeline(wide ? wide_layout : layout, modules[0], modules[2], 1);
    }

    VkIndirectExecutionSetEXT execution_set = VK_NULL_HANDLE;
    if (shader_objects) {
        VkIndirectExecutionSetShaderLayoutInfoEXT set_layouts[2];
        for (int k = 0; k < 2; ++k)
            set_layouts[k] = (VkIndirectExecutionSetShaderLayoutInfoEXT){
                VK_STRUCTURE_TYPE_INDIRECT_EXECUTION_SET_SHADER_LAYOUT_INFO_EXT, NULL, 1,
                &set_layout};
        VkIndirectExecutionSetShaderInfoEXT shader_info = {
            VK_STRUCTURE_TYPE_INDIRECT_EXECUTION_SET_SHADER_INFO_EXT};
        shader_info.shaderCount = 2;
        shader_info.pInitialShaders = shaders;
        shader_info.pSetLayoutInfos = set_layouts;
        shader_info.maxShaderCount = 3;
        shader_info.pushConstantRangeCount = 1;
        shader_info.pPushConstantRanges = &push_range;
        VkIndirectExecutionSetCreateInfoEXT set_create = {
            VK_STRUCTURE_TYPE_INDIRECT_EXECUTION_SET_CREATE_INFO_EXT};
        set_create.type = INFO_TYPE_SHADER_OBJECTS;
        set_create.info = &shader_info;
        CHECK(create_execution_set(device, &set_create, NULL, &execution_set));
        VkWriteIndirectExecutionSetShaderEXT write = {
            VK_STRUCTURE_TYPE_WRITE_INDIRECT_EXECUTION_SET_SHADER_EXT};
        write.index = 2;
        write.shader = shaders[2];
        update_execution_set_shaders(device, execution_set, 1, &write);
    } else if (with_set) {
        VkIndirectExecutionSetPipelineInfoEXT pipeline_info = {
            VK_STRUCTURE_TYPE_INDIRECT_EXECUTION_SET_PIPELINE_INFO_EXT};
        pipeline_info.initialPipeline = pipelines[0];
        pipeline_info.maxPipelineCount = 2;
        VkIndirectExecutionSetCreateInfoEXT set_create = {
            VK_STRUCTURE_TYPE_INDIRECT_EXECUTION_SET_CREATE_INFO_EXT};
        set_create.type = 0;
        set_create.info = &pipeline_info;
        CHECK(create_execution_set(device, &set_create, NULL, &execution_set));
        VkWriteIndirectExecutionSetPipelineEXT write = {
            VK_STRUCTURE_TYPE_WRITE_INDIRECT_EXECUTION_SET_PIPELINE_EXT};
        write.index = 1;
        write.pipeline = pipelines[1];
        update_execution_set(device, execution_set, 1, &write);
    }

    /* indirect commands: [execution set index,] the draw token's data */
    VkIndirectCommandsExecutionSetTokenEXT set_token_data = {
        shader_objects ? INFO_TYPE_SHADER_OBJECTS : 0, stages};
    VkIndirectCommandsLayoutTokenEXT tokens[2] = {
        {VK_STRUCTURE_TYPE_INDIRECT_COMMANDS_LAYOUT_TOKEN_EXT, NULL, TOKEN_EXECUTION_SET,
         &set_token_data, 0},
        {VK_STRUCTURE_TYPE_INDIRECT_COMMANDS_LAYOUT_TOKEN_EXT, NULL, token, NULL, 0},
    };
    uint32_t draw_offset = with_set ? 8 : 0;
    tokens[1].offset = draw_offset;
    uint32_t draw_size = counted    ? sizeof(VkDrawIndirectCountIndirectCommandEXT)
                         : indexed ? sizeof(VkDrawIndexedIndirectCommand)
                                   : sizeof(VkDrawIndirectCommand);
    uint32_t stride = (draw_offset + draw_size + 7) & ~7u;
    VkIndirectCommandsLayoutCreateInfoEXT commands_info = {
        VK_STRUCTURE_TYPE_INDIRECT_COMMANDS_LAYOUT_CREATE_INFO_EXT};
    commands_info.shaderStages = stages;
    commands_info.indirectStride = stride;
    commands_info.pipelineLayout = layout;
    commands_info.tokenCount = with_set ? 2 : 1;
    commands_info.pTokens = with_set ? tokens : tokens + 1;
    VkIndirectCommandsLayoutEXT commands_layout;
    CHECK(dgc.create_commands_layout(device, &commands_info, NULL, &commands_layout));

    /* sequence k: pipeline k of the set; a triangle covering the area, instance k */
    Buffer indirect = make_buffer(SEQUENCES * stride, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, 0, NULL);
    Buffer draws = make_buffer(SEQUENCES * 32, VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT, 0, NULL);
    for (uint32_t k = 0; k < SEQUENCES; ++k) {
        uint8_t *sequence = (uint8_t *)indirect.mapped + k * stride;
        if (shader_objects) { /* one index per stage: the vertex shader, fragment shader 1 + k */
            ((uint32_t *)sequence)[0] = 0;
            ((uint32_t *)sequence)[1] = 1 + k;
        } else if (with_set) {
            *(uint32_t *)sequence = k;
        }
        uint8_t *draw = counted ? (uint8_t *)draws.mapped + k * 32 : sequence + draw_offset;
        if (indexed)
            *(VkDrawIndexedIndirectCommand *)draw = (VkDrawIndexedIndirectCommand){3, 1, 0, 0, k};
        else
            *(VkDrawIndirectCommand *)draw = (VkDrawIndirectCommand){3, 1, 0, k};
        if (counted)
            *(VkDrawIndirectCountIndirectCommandEXT *)(sequence + draw_offset) =
                (VkDrawIndirectCountIndirectCommandEXT){draws.address + k * 32, 32, 1};
    }
    Buffer index_buffer = make_buffer(12, VK_BUFFER_USAGE_INDEX_BUFFER_BIT, 0, NULL);
    uint32_t indices[3] = {0, 1, 2};
    memcpy(index_buffer.mapped, indices, sizeof indices);

    VkGeneratedCommandsPipelineInfoEXT pipeline_named = {
        VK_STRUCTURE_TYPE_GENERATED_COMMANDS_PIPELINE_INFO_EXT, NULL, pipelines[0]};
    VkGeneratedCommandsMemoryRequirementsInfoEXT requirements_info = {
        VK_STRUCTURE_TYPE_GENERATED_COMMANDS_MEMORY_REQUIREMENTS_INFO_EXT,
        with_set ? NULL : &pipeline_named};
    requirements_info.indirectExecutionSet = execution_set;
    requirements_info.indirectCommandsLayout = commands_layout;
    requirements_info.maxSequenceCount = SEQUENCES;
    requirements_info.maxDrawCount = counted ? 1 : 0;
    VkMemoryRequirements2 requirements = {VK_STRUCTURE_TYPE_MEMORY_REQUIREMENTS_2};
    dgc.memory_requirements(device, &requirements_info, &requirements);
    VkDeviceSize preprocess_size = requirements.memoryRequirements.size;
    Buffer preprocess = {0};
    if (preprocess_size)
        preprocess = make_buffer(preprocess_size, 0, BUFFER_USAGE_2_PREPROCESS_BUFFER_BIT_EXT,
                                 &requirements.memoryRequirements);
    VkGeneratedCommandsInfoEXT generated = {VK_STRUCTURE_TYPE_GENERATED_COMMANDS_INFO_EXT,
                                            with_set ? NULL : &pipeline_named};
    generated.shaderStages = stages;
    generated.indirectExecutionSet = execution_set;
    generated.indirectCommandsLayout = commands_layout;
    generated.indirectAddress = indirect.address;
    generated.indirectAddressSize = SEQUENCES * stride;
    generated.preprocessAddress = preprocess.address;
    generated.preprocessSize = preprocess_size;
    generated.maxSequenceCount = SEQUENCES;
    generated.maxDrawCount = counted ? 1 : 0;

    VkCommandPool command_pool = create_command_pool(device);
    VkCommandBuffer command_buffer =
        begin_command_buffer(device, command_pool, VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT);
    VkRenderingInfo rendering = {VK_STRUCTURE_TYPE_RENDERING_INFO};
    rendering.renderArea = (VkRect2D){{0, 0}, {SIDE, SIDE}};
    rendering.layerCount = 1;
    vkCmdBeginRendering(command_buffer, &rendering);
    VkShaderStageFlagBits stage_bits[2] = {VK_SHADER_STAGE_VERTEX_BIT,
                                           VK_SHADER_STAGE_FRAGMENT_BIT};
    if (shader_objects) {
        bind_shaders(command_buffer, 2, stage_bits, shaders);
        VkViewport viewport = {0.0f, 0.0f, SIDE, SIDE, 0.0f, 1.0f};
        set_shader_object_draw_state(device, command_buffer, &viewport, &rendering.renderArea);
        vkCmdSetPrimitiveTopology(command_buffer, VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST);
        vkCmdSetPrimitiveRestartEnable(command_buffer, VK_FALSE);
        ((PFN_vkCmdSetVertexInputEXT)load("vkCmdSetVertexInputEXT"))(command_buffer, 0, NULL, 0,
                                                                    NULL);
    } else {
        vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, pipelines[0]);
    }
    vkCmdBindDescriptorSets(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, layout, 0, 1, &set, 0,
                            NULL);
    if (indexed) vkCmdBindIndexBuffer(command_buffer, index_buffer.buffer, 0, VK_INDEX_TYPE_UINT32);
    vkCmdPushConstants(command_buffer, layout, stages, 0, sizeof pushes[0], pushes[0]);
    dgc.execute_generated(command_buffer, VK_FALSE, &generated);
    /* an execution set leaves the pipeline (or shader) bindings undefined: bind the initial
     * ones again */
    if (shader_objects)
        bind_shaders(command_buffer, 2, stage_bits, shaders);
    else if (with_set)
        vkCmdBindPipeline(command_buffer, VK_PIPELINE_BIND_POINT_GRAPHICS, pipelines[0]);
    vkCmdPushConstants(command_buffer, layout, stages, 0, sizeof pushes[1], pushes[1]);
    vkCmdDraw(command_buffer, 3, 2, 0, 0);
    vkCmdPushConstants(command_buffer, layout, stages, 0, sizeof pushes[2], pushes[2]);
    dgc.execute_generated(command_buffer, VK_FALSE, &generated);
    vkCmdEndRendering(command_buffer);
    CHECK(vkEndCommandBuffer(command_buffer));

    VkFence fence = submit_and_wait(device, queue, command_buffer);
    /* The Khronos layer reads its GPU-AV results back when a wait shows the work done; its
     * own timeline may trail the app's fence, so give it an idle wait as well. */
    CHECK(vkQueueWaitIdle(queue));
    printf("hash %08x\n", fnv1a(image.mapped, 4 * PIXELS));
    printf("result");
    for (int k = 0; k < PIXELS; ++k) printf(" %u", ((uint32_t *)image.mapped)[k]);
    printf("\n");
    fflush(stdout);

    vkDestroyFence(device, fence, NULL);
    vkDestroyCommandPool(device, command_pool, NULL);
    if (preprocess_size) free_buffer(&preprocess);
    free_buffer(&index_buffer);
    free_buffer(&draws);
    free_buffer(&indirect);
    dgc.destroy_commands_layout(device, commands_layout, NULL);
    if (execution_set) destroy_execution_set(device, execution_set, NULL);
    for (int k = 0; k < 2; ++k)
        if (pipelines[k]) vkDestroyPipeline(device, pipelines[k], NULL);
    for (int k = 0; k < 3; ++k) {
        if (modules[k]) vkDestroyShaderModule(device, modules[k], NULL);
        if (shaders[k]) destroy_shader(device, shaders[k], NULL);
    }
    vkDestroyDescriptorPool(device, descriptor_pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyPipelineLayout(device, wide_layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    vkDestroyDescriptorSetLayout(device, empty_layout, NULL);
    free_buffer(&image);
    for (uint32_t k = 0; k < PALETTES; ++k) free_buffer(&palettes[k]);
    destroy_device_and_instance(device, instance, messenger);
    return 0;
}
