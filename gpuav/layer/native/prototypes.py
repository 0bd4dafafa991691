"""C declarations of the Vulkan commands the native front end hooks or calls down to.

The signatures come from the ``vulkan`` package's declarations (its ``PFN_vk*`` typedefs), with
every handle and pointer widened to ``uintptr_t`` and every enum to ``int32_t``. On the 64-bit
ABIs we support these are passed exactly like the originals, and cffi hands them to Python as
plain ints, which is what the engine wants and what costs least per call. Struct contents are
read by casting an address into the ``vulkan`` package's ffi.
"""

from __future__ import annotations

from functools import cache

from vulkan._vulkan import ffi as vkffi

# Commands with a C entry point of ours (returned from GetProcAddr when GPU-AV is on).
HOOKED: tuple[str, ...] = (
    "vkCreateInstance",
    "vkDestroyInstance",
    "vkGetPhysicalDeviceProperties",
    "vkGetPhysicalDeviceProperties2",
    "vkCreateDevice",
    "vkDestroyDevice",
    "vkCreateDebugUtilsMessengerEXT",
    "vkDestroyDebugUtilsMessengerEXT",
    "vkCreateDebugReportCallbackEXT",
    "vkDestroyDebugReportCallbackEXT",
    "vkSetDebugUtilsObjectNameEXT",
    "vkCreateShaderModule",
    "vkDestroyShaderModule",
    "vkCreatePipelineLayout",
    "vkDestroyPipelineLayout",
    "vkCreateGraphicsPipelines",
    "vkCreateComputePipelines",
    "vkDestroyPipeline",
    "vkAllocateCommandBuffers",
    "vkFreeCommandBuffers",
    "vkResetCommandPool",
    "vkDestroyCommandPool",
    "vkBeginCommandBuffer",
    "vkEndCommandBuffer",
    "vkResetCommandBuffer",
    "vkCmdBindPipeline",
    "vkCmdBindShadersEXT",
    "vkCreateShadersEXT",
    "vkCreateDescriptorSetLayout",
    "vkDestroyDescriptorSetLayout",
    "vkAllocateDescriptorSets",
    "vkFreeDescriptorSets",
    "vkResetDescriptorPool",
    "vkDestroyDescriptorPool",
    "vkUpdateDescriptorSets",
    "vkCreateDescriptorUpdateTemplate",
    "vkDestroyDescriptorUpdateTemplate",
    "vkUpdateDescriptorSetWithTemplate",
    "vkCmdBindDescriptorSets",
    "vkCmdPushDescriptorSetKHR",
    "vkCmdPushDescriptorSetWithTemplateKHR",
    "vkCmdBindDescriptorSets2KHR",
    "vkCmdSetDescriptorBufferOffsetsEXT",
    "vkCmdDraw",
    "vkCmdDrawIndexed",
    "vkCmdDrawIndirect",
    "vkCmdDrawIndexedIndirect",
    "vkCmdDrawIndirectCount",
    "vkCmdDrawIndexedIndirectCount",
    "vkCmdDrawMultiEXT",
    "vkCmdDrawMultiIndexedEXT",
    "vkCmdDrawIndirectByteCountEXT",
    "vkCmdDrawMeshTasksEXT",
    "vkCmdDrawMeshTasksIndirectEXT",
    "vkCmdDrawMeshTasksIndirectCountEXT",
    "vkCmdDispatch",
    "vkCmdDispatchIndirect",
    "vkCmdDispatchBase",
    "vkCmdExecuteCommands",
    "vkCmdWaitEvents",
    "vkCmdWaitEvents2",
    "vkQueueSubmit",
    "vkQueueSubmit2",
    "vkQueueWaitIdle",
    "vkDeviceWaitIdle",
    "vkWaitForFences",
)

# Extension names that reach the same hook as a core command (same signature).
ALIASES: dict[str, str] = {
    "vkGetPhysicalDeviceProperties2KHR": "vkGetPhysicalDeviceProperties2",
    "vkCmdDrawIndirectCountKHR": "vkCmdDrawIndirectCount",
    "vkCmdDrawIndirectCountAMD": "vkCmdDrawIndirectCount",
    "vkCmdDrawIndexedIndirectCountKHR": "vkCmdDrawIndexedIndirectCount",
    "vkCmdDrawIndexedIndirectCountAMD": "vkCmdDrawIndexedIndirectCount",
    "vkCmdDispatchBaseKHR": "vkCmdDispatchBase",
    "vkCmdWaitEvents2KHR": "vkCmdWaitEvents2",
    "vkQueueSubmit2KHR": "vkQueueSubmit2",
    "vkCreateDescriptorUpdateTemplateKHR": "vkCreateDescriptorUpdateTemplate",
    "vkDestroyDescriptorUpdateTemplateKHR": "vkDestroyDescriptorUpdateTemplate",
    "vkUpdateDescriptorSetWithTemplateKHR": "vkUpdateDescriptorSetWithTemplate",
    "vkCmdPushDescriptorSet": "vkCmdPushDescriptorSetKHR",
    "vkCmdPushDescriptorSetWithTemplate": "vkCmdPushDescriptorSetWithTemplateKHR",
    "vkCmdBindDescriptorSets2": "vkCmdBindDescriptorSets2KHR",
}

# Commands the layer calls down the chain without hooking them.
CALLED: tuple[str, ...] = (
    "vkEnumerateDeviceExtensionProperties",
    "vkGetPhysicalDeviceFeatures",
    "vkGetPhysicalDeviceFeatures2",
    "vkGetPhysicalDeviceMemoryProperties",
    "vkCreateDescriptorSetLayout",
    "vkDestroyDescriptorSetLayout",
    "vkCreateDescriptorPool",
    "vkDestroyDescriptorPool",
    "vkAllocateDescriptorSets",
    "vkUpdateDescriptorSets",
    "vkCreateBuffer",
    "vkDestroyBuffer",
    "vkGetBufferMemoryRequirements",
    "vkAllocateMemory",
    "vkFreeMemory",
    "vkBindBufferMemory",
    "vkMapMemory",
    "vkUnmapMemory",
    "vkCmdBindDescriptorSets",
    "vkCmdPipelineBarrier",
    "vkCmdPushConstants",
    "vkGetBufferDeviceAddress",
    "vkCreateFence",
    "vkDestroyFence",
    "vkGetFenceStatus",
    "vkGetSemaphoreCounterValue",
)


def _widen(ctype: object) -> str:
    """The C type we declare for one parameter or result of a Vulkan command."""
    kind = ctype.kind  # type: ignore[attr-defined]
    if kind == "pointer":
        return "uintptr_t"
    if kind == "enum":
        return "int32_t"
    if kind == "void":
        return "void"
    if kind == "primitive":
        return str(ctype.cname)  # type: ignore[attr-defined]
    raise ValueError(f"unsupported parameter kind {kind} ({ctype})")


@cache
def signature(name: str) -> tuple[str, tuple[str, ...]]:
    """(result type, parameter types) of command ``name`` after widening."""
    function = vkffi.typeof(f"PFN_{name}")
    return _widen(function.result), tuple(_widen(arg) for arg in function.args)


def typedef_name(name: str) -> str:
    return f"gpuav_PFN_{name}"


def stub_name(name: str) -> str:
    return f"gpuav_{name}"


def cdef() -> str:
    """Declarations for the embedded module: call typedefs and extern "Python" entry points."""
    lines: list[str] = []
    for name in dict.fromkeys((*HOOKED, *CALLED)):
        result, params = signature(name)
        lines.append(f"typedef {result} (*{typedef_name(name)})({', '.join(params)});")
    for name in HOOKED:
        result, params = signature(name)
        lines.append(f'extern "Python" {result} {stub_name(name)}({", ".join(params)});')
    return "\n".join(lines)
