"""The Python side of the native layer: the implementation of every hooked entry point.

``attach`` runs once per process from the embedding init code, which layer.c runs when the
first vkCreateInstance starts Python. It gives each extern "Python" entry point its
implementation, wrapped so that anything escaping is reported (cffi then returns the declared
error value; the implementations themselves already catch their engine work and call down
regardless, or layer.c calls down around them: prototypes.RECORDED_AROUND_GOING_DOWN).
GetProcAddr is answered in C (layer.c) from the flags each instance and device registers
there, so looking up a function never enters Python.

Before the interpreter finalizes (its atexit handlers), and at the exit of a C host whose
embedded interpreter is never finalized, pending submissions are read back and reported;
after that the C wrappers no longer enter Python.
"""

from __future__ import annotations

import atexit

from gpuav.layer.native import prototypes
from gpuav.layer.native.dispatch import REGISTRY, Native
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.lazy_hooks import LazyHook, LazyHooks

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# Each hook module is imported at the first call of one of its entry points (lazy_hooks).
hooks_action_checks = LazyHooks("gpuav.layer.native.hooks_action_checks")
hooks_buffer_views = LazyHooks("gpuav.layer.native.hooks_buffer_views")
hooks_buffers = LazyHooks("gpuav.layer.native.hooks_buffers")
hooks_commands = LazyHooks("gpuav.layer.native.hooks_commands")
hooks_debug = LazyHooks("gpuav.layer.native.hooks_debug")
hooks_device = LazyHooks("gpuav.layer.native.hooks_device")
hooks_descriptor_buffer_memory = LazyHooks("gpuav.layer.native.hooks_descriptor_buffer_memory")
hooks_descriptor_buffers = LazyHooks("gpuav.layer.native.hooks_descriptor_buffers")
hooks_descriptors = LazyHooks("gpuav.layer.native.hooks_descriptors")
hooks_extension_draws = LazyHooks("gpuav.layer.native.hooks_extension_draws")
hooks_fetch_state = LazyHooks("gpuav.layer.native.hooks_fetch_state")
hooks_generated_commands = LazyHooks("gpuav.layer.native.hooks_generated_commands")
hooks_instance = LazyHooks("gpuav.layer.native.hooks_instance")
hooks_labels = LazyHooks("gpuav.layer.native.hooks_labels")
hooks_pipelines = LazyHooks("gpuav.layer.native.hooks_pipelines")
hooks_queue = LazyHooks("gpuav.layer.native.hooks_queue")
hooks_ray_tracing = LazyHooks("gpuav.layer.native.hooks_ray_tracing")
hooks_resources = LazyHooks("gpuav.layer.native.hooks_resources")
hooks_shader_modules = LazyHooks("gpuav.layer.native.hooks_shader_modules")
hooks_shader_objects = LazyHooks("gpuav.layer.native.hooks_shader_objects")

ERROR_INITIALIZATION_FAILED = -3

IMPLEMENTATIONS: dict[str, LazyHook] = {
    "vkCreateInstance": hooks_instance.create_instance,
    "vkDestroyInstance": hooks_instance.destroy_instance,
    "vkGetPhysicalDeviceProperties": hooks_device.get_physical_device_properties,
    "vkGetPhysicalDeviceProperties2": hooks_device.get_physical_device_properties2,
    "vkCreateDevice": hooks_device.create_device,
    "vkDestroyDevice": hooks_device.destroy_device,
    "vkCreateDebugUtilsMessengerEXT": hooks_debug.create_debug_utils_messenger,
    "vkDestroyDebugUtilsMessengerEXT": hooks_debug.destroy_debug_utils_messenger,
    "vkCreateDebugReportCallbackEXT": hooks_debug.create_debug_report_callback,
    "vkDestroyDebugReportCallbackEXT": hooks_debug.destroy_debug_report_callback,
    "vkSetDebugUtilsObjectNameEXT": hooks_debug.set_debug_utils_object_name,
    "vkCreateShaderModule": hooks_shader_modules.create_shader_module,
    "vkDestroyShaderModule": hooks_shader_modules.destroy_shader_module,
    "vkCreatePipelineLayout": hooks_pipelines.create_pipeline_layout,
    "vkDestroyPipelineLayout": hooks_pipelines.destroy_pipeline_layout,
    "vkCreateGraphicsPipelines": hooks_pipelines.create_graphics_pipelines,
    "vkCreateComputePipelines": hooks_pipelines.create_compute_pipelines,
    "vkCreateRayTracingPipelinesKHR": hooks_ray_tracing.create_ray_tracing_pipelines,
    "vkDestroyPipeline": hooks_pipelines.destroy_pipeline,
    "vkAllocateCommandBuffers": hooks_commands.allocate_command_buffers,
    "vkFreeCommandBuffers": hooks_commands.free_command_buffers,
    "vkResetCommandPool": hooks_commands.reset_command_pool,
    "vkDestroyCommandPool": hooks_commands.destroy_command_pool,
    "vkBeginCommandBuffer": hooks_commands.begin_command_buffer,
    "vkEndCommandBuffer": hooks_commands.end_command_buffer,
    "vkResetCommandBuffer": hooks_commands.reset_command_buffer,
    "vkCmdBindPipeline": hooks_commands.cmd_bind_pipeline,
    "vkCmdBindShadersEXT": hooks_shader_objects.cmd_bind_shaders,
    "vkCreateShadersEXT": hooks_shader_objects.create_shaders,
    "vkDestroyShaderEXT": hooks_shader_objects.destroy_shader,
    "vkGetShaderBinaryDataEXT": hooks_shader_objects.get_shader_binary_data,
    "vkCreateDescriptorSetLayout": hooks_descriptors.create_descriptor_set_layout,
    "vkDestroyDescriptorSetLayout": hooks_descriptors.destroy_descriptor_set_layout,
    "vkAllocateDescriptorSets": hooks_descriptors.allocate_descriptor_sets,
    "vkFreeDescriptorSets": hooks_descriptors.free_descriptor_sets,
    "vkResetDescriptorPool": hooks_descriptors.reset_descriptor_pool,
    "vkDestroyDescriptorPool": hooks_descriptors.destroy_descriptor_pool,
    "vkUpdateDescriptorSets": hooks_descriptors.update_descriptor_sets,
    "vkCreateDescriptorUpdateTemplate": hooks_descriptors.create_descriptor_update_template,
    "vkDestroyDescriptorUpdateTemplate": hooks_descriptors.destroy_descriptor_update_template,
    "vkUpdateDescriptorSetWithTemplate": hooks_descriptors.update_descriptor_set_with_template,
    "vkCmdBindDescriptorSets": hooks_descriptors.cmd_bind_descriptor_sets,
    "vkCmdPushDescriptorSetKHR": hooks_descriptors.cmd_push_descriptor_set,
    "vkCmdPushDescriptorSetWithTemplateKHR": (
        hooks_descriptors.cmd_push_descriptor_set_with_template
    ),
    "vkCmdBindDescriptorSets2KHR": hooks_descriptors.cmd_bind_descriptor_sets2,
    "vkCmdSetDescriptorBufferOffsetsEXT": (
        hooks_descriptor_buffers.cmd_set_descriptor_buffer_offsets
    ),
    "vkCmdBindDescriptorBuffersEXT": hooks_descriptor_buffers.cmd_bind_descriptor_buffers,
    "vkCmdBindDescriptorBufferEmbeddedSamplersEXT": (
        hooks_descriptor_buffers.cmd_bind_descriptor_buffer_embedded_samplers
    ),
    "vkGetDescriptorEXT": hooks_descriptor_buffers.get_descriptor,
    "vkCmdSetDescriptorBufferOffsets2EXT": (
        hooks_descriptor_buffers.cmd_set_descriptor_buffer_offsets2
    ),
    "vkMapMemory": hooks_descriptor_buffer_memory.map_memory,
    "vkUnmapMemory": hooks_descriptor_buffer_memory.unmap_memory,
    "vkMapMemory2KHR": hooks_descriptor_buffer_memory.map_memory2,
    "vkUnmapMemory2KHR": hooks_descriptor_buffer_memory.unmap_memory2,
    "vkCmdCopyBuffer": hooks_descriptor_buffer_memory.cmd_copy_buffer,
    "vkCmdCopyBuffer2": hooks_descriptor_buffer_memory.cmd_copy_buffer2,
    "vkCmdCopyImageToBuffer": hooks_descriptor_buffer_memory.cmd_copy_image_to_buffer,
    "vkCmdCopyImageToBuffer2": hooks_descriptor_buffer_memory.cmd_copy_image_to_buffer2,
    "vkCmdUpdateBuffer": hooks_descriptor_buffer_memory.cmd_update_buffer,
    "vkCmdFillBuffer": hooks_descriptor_buffer_memory.cmd_fill_buffer,
    "vkCmdDrawIndirectByteCountEXT": hooks_extension_draws.cmd_draw_indirect_byte_count,
    "vkCmdDrawMeshTasksEXT": hooks_extension_draws.cmd_draw_mesh_tasks,
    "vkCmdDispatch": hooks_commands.cmd_dispatch,
    "vkCmdDispatchBase": hooks_commands.cmd_dispatch_base,
    "vkCmdTraceRaysKHR": hooks_ray_tracing.cmd_trace_rays,
    "vkCmdTraceRaysIndirectKHR": hooks_ray_tracing.cmd_trace_rays_indirect,
    "vkCmdTraceRaysIndirect2KHR": hooks_ray_tracing.cmd_trace_rays_indirect2,
    "vkCmdExecuteCommands": hooks_commands.cmd_execute_commands,
    "vkQueueSubmit": hooks_queue.queue_submit_hook,
    "vkQueueSubmit2": hooks_queue.queue_submit2_hook,
    "vkQueueWaitIdle": hooks_queue.queue_wait_idle_hook,
    "vkDeviceWaitIdle": hooks_queue.device_wait_idle_hook,
    "vkWaitForFences": hooks_queue.wait_for_fences_hook,
    "vkGetFenceStatus": hooks_queue.get_fence_status_hook,
    "vkWaitSemaphores": hooks_queue.wait_semaphores_hook,
    "vkGetSemaphoreCounterValue": hooks_queue.get_semaphore_counter_value_hook,
    "vkCmdExecuteGeneratedCommandsNV": hooks_commands.cmd_execute_generated_commands_nv,
    "vkCmdExecuteGeneratedCommandsEXT": hooks_commands.cmd_execute_generated_commands_ext,
    "vkCreateIndirectExecutionSetEXT": hooks_generated_commands.create_indirect_execution_set,
    "vkUpdateIndirectExecutionSetPipelineEXT": (
        hooks_generated_commands.update_indirect_execution_set_pipeline
    ),
    "vkUpdateIndirectExecutionSetShaderEXT": (
        hooks_generated_commands.update_indirect_execution_set_shader
    ),
    "vkDestroyIndirectExecutionSetEXT": hooks_generated_commands.destroy_indirect_execution_set,
    "vkCmdBeginDebugUtilsLabelEXT": hooks_labels.cmd_begin_debug_utils_label,
    "vkCmdEndDebugUtilsLabelEXT": hooks_labels.cmd_end_debug_utils_label,
    "vkQueueBeginDebugUtilsLabelEXT": hooks_labels.queue_begin_debug_utils_label,
    "vkQueueEndDebugUtilsLabelEXT": hooks_labels.queue_end_debug_utils_label,
    "vkCreateBuffer": hooks_buffers.create_buffer,
    "vkDestroyBuffer": hooks_buffers.destroy_buffer,
    "vkBindBufferMemory": hooks_buffers.bind_buffer_memory,
    "vkBindBufferMemory2": hooks_buffers.bind_buffer_memory2,
    "vkGetBufferDeviceAddress": hooks_buffers.get_buffer_device_address,
    "vkCreateBufferView": hooks_buffer_views.create_buffer_view,
    "vkDestroyBufferView": hooks_buffer_views.destroy_buffer_view,
    "vkCreateImage": hooks_resources.create_image,
    "vkCreateImageView": hooks_resources.create_image_view,
    "vkCreateSampler": hooks_resources.create_sampler,
    "vkDestroyImageView": hooks_resources.destroy_image_view,
    "vkDestroySampler": hooks_resources.destroy_sampler,
    "vkDestroyImage": hooks_resources.destroy_image,
    "vkBindImageMemory": hooks_resources.bind_image_memory,
    "vkBindImageMemory2": hooks_resources.bind_image_memory2,
    "vkFreeMemory": hooks_resources.free_memory,
}
# The indirect and vertex-fetch checks wrap these hooks (hooks_action_checks).
IMPLEMENTATIONS |= {
    "vkCreateDevice": hooks_action_checks.create_device,
    "vkDestroyDevice": hooks_action_checks.destroy_device,
    "vkCreateBuffer": hooks_action_checks.create_buffer,
    "vkCreateCommandPool": hooks_action_checks.create_command_pool,
    "vkCreateGraphicsPipelines": hooks_fetch_state.create_graphics_pipelines,
    "vkDestroyPipeline": hooks_fetch_state.destroy_pipeline,
    "vkCmdSetVertexInputEXT": hooks_fetch_state.cmd_set_vertex_input,
    "vkCmdDraw": hooks_action_checks.cmd_draw,
    "vkCmdDrawIndexed": hooks_action_checks.cmd_draw_indexed,
    "vkCmdDrawMultiEXT": hooks_action_checks.cmd_draw_multi,
    "vkCmdDrawMultiIndexedEXT": hooks_action_checks.cmd_draw_multi_indexed,
    "vkCmdDrawIndirect": hooks_action_checks.cmd_draw_indirect,
    "vkCmdDrawIndexedIndirect": hooks_action_checks.cmd_draw_indexed_indirect,
    "vkCmdDrawIndirectCount": hooks_action_checks.cmd_draw_indirect_count,
    "vkCmdDrawIndexedIndirectCount": hooks_action_checks.cmd_draw_indexed_indirect_count,
    "vkCmdDispatchIndirect": hooks_action_checks.cmd_dispatch_indirect,
    "vkCmdDrawMeshTasksIndirectEXT": hooks_action_checks.cmd_draw_mesh_tasks_indirect,
    "vkCmdDrawMeshTasksIndirectCountEXT": (hooks_action_checks.cmd_draw_mesh_tasks_indirect_count),
    "vkQueueSubmit": hooks_action_checks.queue_submit,
    "vkQueueSubmit2": hooks_action_checks.queue_submit2,
}
# Descriptor buffers wrap the hooks that follow set layouts, buffers, images and memory
# (hooks_descriptor_buffers, hooks_descriptor_buffer_memory).
IMPLEMENTATIONS |= {
    "vkCreateDevice": hooks_descriptor_buffers.create_device,
    "vkCreateDescriptorSetLayout": hooks_descriptor_buffers.create_descriptor_set_layout,
    "vkDestroyDescriptorSetLayout": hooks_descriptor_buffers.destroy_descriptor_set_layout,
    "vkDestroyBuffer": hooks_descriptor_buffer_memory.destroy_buffer,
    "vkBindBufferMemory": hooks_descriptor_buffer_memory.bind_buffer_memory,
    "vkBindBufferMemory2": hooks_descriptor_buffer_memory.bind_buffer_memory2,
    "vkFreeMemory": hooks_descriptor_buffer_memory.free_memory,
    "vkDestroyImage": hooks_descriptor_buffer_memory.destroy_image,
    "vkDestroyImageView": hooks_descriptor_buffer_memory.destroy_image_view,
    "vkCreateImageView": hooks_descriptor_buffer_memory.create_image_view,
}


def _on_error(name: str) -> Callable[[Any, Any, Any], None]:
    def handler(exception_type: Any, value: Any, traceback: Any) -> None:
        if value is not None:
            report_error(name, value)

    return handler


def retire() -> None:
    """The Python side's last act (the process is ending): read back and report every pending
    submission, and leave each device's spill block with no descriptor state, since from now
    on layer.c binds it with instrumented pipelines and nothing keeps its bound-set words
    current (stale ones would make correct accesses look out of bounds)."""
    records = list(REGISTRY.devices.values())
    if not records:
        return
    from gpuav.layer import queue_submit  # imported already where a device was created
    from gpuav.layer.descriptor_sets import NO_STATE_AREA

    for record in records:
        state = record.state
        if state is None:
            continue
        try:
            if state.pending:
                queue_submit.read_back_finished(state, settle_all=True)
            if state.output is not None:
                spill = state.output.spill
                words = spill.chunk.area_words
                start = spill.bound_sets_offset
                words[start : start + len(NO_STATE_AREA)] = NO_STATE_AREA
                spill.area = None
        except BaseException as error:
            report_error("exit", error, record.instance.state)


def attach(ffi: Any, lib: Any) -> None:
    """Bind every C entry point of the embedded module to its Python implementation."""
    Native.ffi = ffi
    Native.lib = lib
    for name in prototypes.entered_from_c():
        # The result type from the layer's own declarations: prototypes.signature would import
        # the vulkan package's tables (start-up cost).
        result = ffi.typeof(prototypes.typedef_name(name)).result
        options: dict[str, Any] = {"name": prototypes.python_name(name), "onerror": _on_error(name)}
        if result.kind != "void":
            options["error"] = ERROR_INITIALIZATION_FAILED if result.cname == "int32_t" else 0
        binder = ffi.def_extern(**options)
        implementation = IMPLEMENTATIONS[name]
        implementation.bind = binder
        binder(implementation)
    ffi.def_extern(name="gpuav_py_retire", onerror=_on_error("exit"))(retire)
    ffi.def_extern(name="gpuav_python_attach", error=0)(lambda: 1)
    # Before the interpreter finalizes; a C host's exit runs the same through layer.c.
    atexit.register(lib.gpuav_python_retire)
