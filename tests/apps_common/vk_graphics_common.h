/* What the drawing test programs do alike: the copy of a color target out, a one-attachment
 * render pass and framebuffer or dynamic rendering, and the fixed-function state of a plain
 * triangle draw. Static inline, like vk_app_common.h and vk_image_common.h, which it builds on;
 * knows nothing of gpuav. */
#ifndef VK_GRAPHICS_COMMON_H
#define VK_GRAPHICS_COMMON_H
#include "vk_image_common.h"

/* Records the copy of a `width` x `height` color image in TRANSFER_SRC_OPTIMAL layout to the
 * start of `buffer`, tightly packed. */
static inline void copy_color_image_to_buffer(VkCommandBuffer command_buffer, VkImage image,
                                              uint32_t width, uint32_t height, VkBuffer buffer) {
    VkBufferImageCopy copy = {0};
    copy.imageSubresource = (VkImageSubresourceLayers){VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    copy.imageExtent = (VkExtent3D){width, height, 1};
    vkCmdCopyImageToBuffer(command_buffer, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, buffer, 1,
                           &copy);
}

/* Records a memory barrier that makes transfer writes visible to host reads. */
static inline void transfer_to_host_barrier(VkCommandBuffer command_buffer) {
    VkMemoryBarrier barrier = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL,
                               VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(command_buffer, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier, 0, NULL, 0, NULL);
}

/* Begins dynamic rendering of the whole `width` x `height` color attachment `view` (in
 * COLOR_ATTACHMENT_OPTIMAL layout), cleared to `clear` and stored. */
static inline void begin_color_rendering(VkCommandBuffer command_buffer, VkImageView view,
                                         uint32_t width, uint32_t height, VkClearValue clear) {
    VkRenderingAttachmentInfo attachment = {VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO};
    attachment.imageView = view;
    attachment.imageLayout = VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL;
    attachment.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    attachment.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    attachment.clearValue = clear;
    VkRenderingInfo rendering = {VK_STRUCTURE_TYPE_RENDERING_INFO};
    rendering.renderArea = (VkRect2D){{0, 0}, {width, height}};
    rendering.layerCount = 1;
    rendering.colorAttachmentCount = 1;
    rendering.pColorAttachments = &attachment;
    vkCmdBeginRendering(command_buffer, &rendering);
}

/* A render pass of one color attachment of `format`, cleared and stored, left in
 * `final_layout`; when that is TRANSFER_SRC_OPTIMAL, the pass's dependency lets a copy after it
 * read the attachment. */
static inline VkRenderPass create_color_render_pass(VkDevice device, VkFormat format,
                                                    VkImageLayout final_layout) {
    VkAttachmentDescription attachment = {0, format, VK_SAMPLE_COUNT_1_BIT,
                                          VK_ATTACHMENT_LOAD_OP_CLEAR, VK_ATTACHMENT_STORE_OP_STORE,
                                          VK_ATTACHMENT_LOAD_OP_DONT_CARE,
                                          VK_ATTACHMENT_STORE_OP_DONT_CARE,
                                          VK_IMAGE_LAYOUT_UNDEFINED, final_layout};
    VkAttachmentReference reference = {0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass = {0};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &reference;
    VkSubpassDependency dependency = {0, VK_SUBPASS_EXTERNAL,
                                      VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT,
                                      VK_PIPELINE_STAGE_TRANSFER_BIT,
                                      VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT,
                                      VK_ACCESS_TRANSFER_READ_BIT, 0};
    VkRenderPassCreateInfo info = {VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    info.attachmentCount = 1;
    info.pAttachments = &attachment;
    info.subpassCount = 1;
    info.pSubpasses = &subpass;
    if (final_layout == VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL) {
        info.dependencyCount = 1;
        info.pDependencies = &dependency;
    }
    VkRenderPass render_pass;
    CHECK(vkCreateRenderPass(device, &info, NULL, &render_pass));
    return render_pass;
}

/* A framebuffer of `render_pass` over the one attachment `view`, `width` x `height`. */
static inline VkFramebuffer create_framebuffer(VkDevice device, VkRenderPass render_pass,
                                               VkImageView view, uint32_t width,
                                               uint32_t height) {
    VkFramebufferCreateInfo info = {VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    info.renderPass = render_pass;
    info.attachmentCount = 1;
    info.pAttachments = &view;
    info.width = width;
    info.height = height;
    info.layers = 1;
    VkFramebuffer framebuffer;
    CHECK(vkCreateFramebuffer(device, &info, NULL, &framebuffer));
    return framebuffer;
}

/* The fixed-function state of a plain draw: triangle lists without vertex input, a viewport and
 * scissor of the whole target, filled and not culled, one sample, and `color_attachment_count`
 * (0 or 1) attachments written without blending. The create infos point into the struct, so
 * it stays where init_draw_state filled it. */
typedef struct {
    VkViewport viewport;
    VkRect2D scissor;
    VkPipelineVertexInputStateCreateInfo vertex_input;
    VkPipelineInputAssemblyStateCreateInfo assembly;
    VkPipelineViewportStateCreateInfo viewport_state;
    VkPipelineRasterizationStateCreateInfo raster;
    VkPipelineMultisampleStateCreateInfo multisample;
    VkPipelineColorBlendAttachmentState blend_attachment;
    VkPipelineColorBlendStateCreateInfo blend;
} DrawState;

/* Fills `state` for a `width` x `height` target whose attachment takes the `write_mask`
 * channels. */
static inline void init_draw_state(DrawState *state, uint32_t width, uint32_t height,
                                   uint32_t color_attachment_count,
                                   VkColorComponentFlags write_mask) {
    *state = (DrawState){{0.0f, 0.0f, (float)width, (float)height, 0.0f, 1.0f},
                         {{0, 0}, {width, height}}};
    state->vertex_input.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO;
    state->assembly.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO;
    state->assembly.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    state->viewport_state.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO;
    state->viewport_state.viewportCount = 1;
    state->viewport_state.pViewports = &state->viewport;
    state->viewport_state.scissorCount = 1;
    state->viewport_state.pScissors = &state->scissor;
    state->raster.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO;
    state->raster.polygonMode = VK_POLYGON_MODE_FILL;
    state->raster.cullMode = VK_CULL_MODE_NONE;
    state->raster.lineWidth = 1.0f;
    state->multisample.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO;
    state->multisample.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    state->blend_attachment.colorWriteMask = write_mask;
    state->blend.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO;
    state->blend.attachmentCount = color_attachment_count;
    state->blend.pAttachments = color_attachment_count ? &state->blend_attachment : NULL;
}

/* The create info of a graphics pipeline of `stages` with all of `state`; `next` extends it
 * (VkPipelineRenderingCreateInfo where `render_pass` is VK_NULL_HANDLE). */
static inline VkGraphicsPipelineCreateInfo draw_pipeline_info(
    const DrawState *state, const void *next, uint32_t stage_count,
    const VkPipelineShaderStageCreateInfo *stages, VkPipelineLayout layout,
    VkRenderPass render_pass) {
    VkGraphicsPipelineCreateInfo info = {VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO, next};
    info.stageCount = stage_count;
    info.pStages = stages;
    info.pVertexInputState = &state->vertex_input;
    info.pInputAssemblyState = &state->assembly;
    info.pViewportState = &state->viewport_state;
    info.pRasterizationState = &state->raster;
    info.pMultisampleState = &state->multisample;
    info.pColorBlendState = &state->blend;
    info.layout = layout;
    info.renderPass = render_pass;
    return info;
}

/* The stage infos of a vertex and a fragment shader, both entered at "main". */
static inline void vertex_fragment_stages(VkShaderModule vertex, VkShaderModule fragment,
                                          VkPipelineShaderStageCreateInfo stages[2]) {
    stages[0] = (VkPipelineShaderStageCreateInfo){
        VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_VERTEX_BIT,
        vertex, "main", NULL};
    stages[1] = (VkPipelineShaderStageCreateInfo){
        VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0,
        VK_SHADER_STAGE_FRAGMENT_BIT, fragment, "main", NULL};
}
#endif
