"""C declarations of the Vulkan commands the native front end hooks or calls down to, and the
generated C wrappers that stand in front of every hooked command (see layer.c).

The signatures come from the ``vulkan`` package's declarations (its ``PFN_vk*`` typedefs), with
every handle and pointer widened to ``uintptr_t`` and every enum to ``int32_t``. On the 64-bit
ABIs we support these are passed exactly like the originals, and cffi hands them to Python as
plain ints, which is what the engine wants and what costs least per call. Struct contents are
read by casting an address into the ``vulkan`` package's ffi.
"""

from __future__ import annotations

# The draws, dispatches and traces: each an action, numbered in its command buffer (the
# generated-commands executes are actions too, hooked apart).
ACTIONS: tuple[str, ...] = (
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
    "vkCmdTraceRaysKHR",
    "vkCmdTraceRaysIndirectKHR",
    "vkCmdTraceRaysIndirect2KHR",
)
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
    "vkCreateRayTracingPipelinesKHR",
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
    "vkDestroyShaderEXT",
    "vkGetShaderBinaryDataEXT",
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
    "vkCmdBindDescriptorBuffersEXT",
    "vkCmdBindDescriptorBufferEmbeddedSamplersEXT",
    "vkGetDescriptorEXT",
    "vkCmdSetDescriptorBufferOffsets2EXT",
    "vkMapMemory",
    "vkUnmapMemory",
    "vkMapMemory2KHR",
    "vkUnmapMemory2KHR",
    "vkCmdCopyBuffer",
    "vkCmdCopyBuffer2",
    "vkCmdCopyImageToBuffer",
    "vkCmdCopyImageToBuffer2",
    "vkCmdUpdateBuffer",
    "vkCmdFillBuffer",
    *ACTIONS,
    "vkCmdExecuteCommands",
    "vkQueueSubmit",
    "vkQueueSubmit2",
    "vkQueueWaitIdle",
    "vkDeviceWaitIdle",
    "vkWaitForFences",
    "vkGetFenceStatus",
    "vkWaitSemaphores",
    "vkGetSemaphoreCounterValue",
    "vkCmdExecuteGeneratedCommandsNV",
    "vkCmdExecuteGeneratedCommandsEXT",
    "vkCreateIndirectExecutionSetEXT",
    "vkUpdateIndirectExecutionSetPipelineEXT",
    "vkUpdateIndirectExecutionSetShaderEXT",
    "vkDestroyIndirectExecutionSetEXT",
    "vkCmdBeginDebugUtilsLabelEXT",
    "vkCmdEndDebugUtilsLabelEXT",
    "vkQueueBeginDebugUtilsLabelEXT",
    "vkQueueEndDebugUtilsLabelEXT",
    "vkCreateBuffer",
    "vkDestroyBuffer",
    "vkCreateBufferView",
    "vkDestroyBufferView",
    "vkBindBufferMemory",
    "vkBindBufferMemory2",
    "vkGetBufferDeviceAddress",
    "vkCreateImage",
    "vkCreateImageView",
    "vkCreateSampler",
    "vkDestroyImageView",
    "vkDestroySampler",
    "vkDestroyImage",
    "vkBindImageMemory",
    "vkBindImageMemory2",
    "vkFreeMemory",
    # Indirect and vertex-fetch checks (hooks_action_checks, hooks_fetch_state).
    "vkCreateCommandPool",
    "vkCmdBindVertexBuffers",
    "vkCmdBindVertexBuffers2",
    "vkCmdBindIndexBuffer",
    "vkCmdBindIndexBuffer2KHR",
    "vkCmdSetVertexInputEXT",
    # Push constants, for the verdicts of entry functions indexed by them (host_terms).
    "vkCmdPushConstants",
    "vkCmdPushConstants2KHR",
)

# Instance-level commands among HOOKED (the rest are device-level).
INSTANCE_LEVEL = frozenset(
    {
        "vkCreateInstance",
        "vkDestroyInstance",
        "vkCreateDevice",
        "vkGetPhysicalDeviceProperties",
        "vkGetPhysicalDeviceProperties2",
        "vkCreateDebugUtilsMessengerEXT",
        "vkDestroyDebugUtilsMessengerEXT",
        "vkCreateDebugReportCallbackEXT",
        "vkDestroyDebugReportCallbackEXT",
    }
)
# Handed out whether or not GPU-AV is on: they carry the chain and keep the tables.
ALWAYS_HOOKED = frozenset(
    {"vkCreateInstance", "vkDestroyInstance", "vkCreateDevice", "vkDestroyDevice"}
)
# Handed out only with the reserve-binding-slot setting (they lower maxBoundDescriptorSets).
RESERVE_ONLY = frozenset({"vkGetPhysicalDeviceProperties", "vkGetPhysicalDeviceProperties2"})

# Commands newer than the ``vulkan`` package's declarations (widened as ``signature`` does).
NEWER_SIGNATURES: dict[str, tuple[str, tuple[str, ...]]] = {
    "vkCmdExecuteGeneratedCommandsEXT": ("void", ("uintptr_t", "uint32_t", "uintptr_t")),
    "vkCreateIndirectExecutionSetEXT": (
        "int32_t",
        ("uintptr_t", "uintptr_t", "uintptr_t", "uintptr_t"),
    ),
    "vkUpdateIndirectExecutionSetPipelineEXT": (
        "void",
        ("uintptr_t", "uintptr_t", "uint32_t", "uintptr_t"),
    ),
    "vkUpdateIndirectExecutionSetShaderEXT": (
        "void",
        ("uintptr_t", "uintptr_t", "uint32_t", "uintptr_t"),
    ),
    "vkDestroyIndirectExecutionSetEXT": ("void", ("uintptr_t", "uintptr_t", "uintptr_t")),
}

# Extension names that reach the same hook as a core command (same signature).
ALIASES: dict[str, str] = {
    "vkGetPhysicalDeviceProperties2KHR": "vkGetPhysicalDeviceProperties2",
    "vkCmdDrawIndirectCountKHR": "vkCmdDrawIndirectCount",
    "vkCmdDrawIndirectCountAMD": "vkCmdDrawIndirectCount",
    "vkCmdDrawIndexedIndirectCountKHR": "vkCmdDrawIndexedIndirectCount",
    "vkCmdDrawIndexedIndirectCountAMD": "vkCmdDrawIndexedIndirectCount",
    "vkCmdDispatchBaseKHR": "vkCmdDispatchBase",
    "vkQueueSubmit2KHR": "vkQueueSubmit2",
    "vkCreateDescriptorUpdateTemplateKHR": "vkCreateDescriptorUpdateTemplate",
    "vkDestroyDescriptorUpdateTemplateKHR": "vkDestroyDescriptorUpdateTemplate",
    "vkUpdateDescriptorSetWithTemplateKHR": "vkUpdateDescriptorSetWithTemplate",
    "vkCmdPushDescriptorSet": "vkCmdPushDescriptorSetKHR",
    "vkCmdPushDescriptorSetWithTemplate": "vkCmdPushDescriptorSetWithTemplateKHR",
    "vkCmdBindDescriptorSets2": "vkCmdBindDescriptorSets2KHR",
    "vkWaitSemaphoresKHR": "vkWaitSemaphores",
    "vkGetSemaphoreCounterValueKHR": "vkGetSemaphoreCounterValue",
    "vkBindBufferMemory2KHR": "vkBindBufferMemory2",
    "vkCmdBindVertexBuffers2EXT": "vkCmdBindVertexBuffers2",
    "vkCmdBindIndexBuffer2": "vkCmdBindIndexBuffer2KHR",
    "vkCmdPushConstants2": "vkCmdPushConstants2KHR",
    "vkBindImageMemory2KHR": "vkBindImageMemory2",
    "vkGetBufferDeviceAddressKHR": "vkGetBufferDeviceAddress",
    "vkGetBufferDeviceAddressEXT": "vkGetBufferDeviceAddress",
    "vkMapMemory2": "vkMapMemory2KHR",
    "vkUnmapMemory2": "vkUnmapMemory2KHR",
    "vkCmdCopyBuffer2KHR": "vkCmdCopyBuffer2",
    "vkCmdCopyImageToBuffer2KHR": "vkCmdCopyImageToBuffer2",
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
    "vkResetFences",
    "vkGetFenceStatus",
    "vkGetSemaphoreCounterValue",
    "vkGetDescriptorSetLayoutSizeEXT",
    "vkGetDescriptorSetLayoutBindingOffsetEXT",
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


def signature(name: str) -> tuple[str, tuple[str, ...]]:
    """(result type, parameter types) of command ``name`` after widening."""
    if name in NEWER_SIGNATURES:
        return NEWER_SIGNATURES[name]
    # Build time only: at run time the layer's own ffi declares them (the vulkan package's
    # tables stay off the instance path).
    from vulkan._vulkan import ffi as vkffi

    function = vkffi.typeof(f"PFN_{name}")
    return _widen(function.result), tuple(_widen(arg) for arg in function.args)


def entered_from_c() -> tuple[str, ...]:
    """The hooked commands with a Python implementation."""
    return tuple(name for name in HOOKED if name not in NATIVE_ONLY)


def typedef_name(name: str) -> str:
    return f"gpuav_PFN_{name}"


def python_name(name: str) -> str:
    """The extern "Python" entry point of a hooked command (entered from its C wrapper)."""
    return f"gpuav_py_{name}"


def _typedefs() -> list[str]:
    lines: list[str] = []
    for name in dict.fromkeys((*HOOKED, *CALLED)):
        result, params = signature(name)
        lines.append(f"typedef {result} (*{typedef_name(name)})({', '.join(params)});")
    return lines


def cdef() -> str:
    """Declarations for the embedded module: call typedefs and extern "Python" entry points."""
    lines = _typedefs()
    for name in entered_from_c():
        result, params = signature(name)
        lines.append(f'extern "Python" {result} {python_name(name)}({", ".join(params)});')
    return "\n".join(lines)


def c_slots() -> str:
    """The slot of each hooked command in a dispatch table (layer.c's GPUAV_SLOTS)."""
    lines = [f"#define GPUAV_HOOKED_COUNT {len(HOOKED)}"]
    lines += [f"#define GPUAV_SLOT_{name} {slot}" for slot, name in enumerate(HOOKED)]
    return "\n".join(lines)


_ERROR_INITIALIZATION_FAILED = "GPUAV_VK_ERROR_INITIALIZATION_FAILED"
# Commands whose wrapper never enters Python: it calls down, then notes what the command set
# (fetch_bindings.c). They run before nearly every draw; the draw hooks read what they noted.
# A push constants' note is what the layer works a verdict out from (host_terms.Pushed).
NATIVE_ONLY: dict[str, str] = {
    "vkCmdBindVertexBuffers": "gpuav_note_vertex_buffers(a0, a1, a2, a3, a4, 0, 0);",
    "vkCmdBindVertexBuffers2": "gpuav_note_vertex_buffers(a0, a1, a2, a3, a4, a5, a6);",
    "vkCmdBindIndexBuffer": "gpuav_note_index_buffer(a0, a1, a2, GPUAV_WHOLE_SIZE, a3);",
    "vkCmdBindIndexBuffer2KHR": "gpuav_note_index_buffer(a0, a1, a2, a3, a4);",
    "vkCmdPushConstants": "gpuav_note_push_constants(a0, a3, a4, a5);",
    "vkCmdPushConstants2KHR": "gpuav_note_push_constants_info(a0, a1);",
}
# Actions whose Python hook only records, before layer.c calls down itself (the action's
# output block is bound first). Python's own call down goes through a cffi function pointer
# (libffi): 0.44 us a call on the 2-core VM, and a renderer makes one per draw.
RECORDED_BEFORE_GOING_DOWN = frozenset(ACTIONS)
# ...and the binds a renderer makes around each draw, recorded after layer.c called down.
RECORDED_AROUND_GOING_DOWN = RECORDED_BEFORE_GOING_DOWN | {
    "vkCmdBindPipeline",
    "vkCmdBindDescriptorSets",
    "vkCmdBindDescriptorSets2KHR",
    "vkCmdPushDescriptorSetKHR",
    "vkCmdPushDescriptorSetWithTemplateKHR",
}
# What layer.c does before a command enters Python or goes down: keep fetch_bindings.c's
# entries to the command buffers' recordings and lives.
_BEFORE = {
    "vkBeginCommandBuffer": "if (enabled) { gpuav_fetch_bindings_clear(a0); }",
    "vkFreeCommandBuffers": "gpuav_fetch_bindings_forget_each(a2, a3);",
}
# What layer.c does itself when a command went down without Python: keep instrumented
# pipelines bound with gpuav's set, and forget them when they go.
_AFTER_PASSING_DOWN = {
    "vkCmdBindPipeline": "if (enabled) { gpuav_bind_spill_block(a0, a1, a2); }",
    "vkDestroyPipeline": "gpuav_forget_pipeline(a0, a1);",
}


def _wrapper(name: str) -> str:
    """A C entry point: into Python while it is usable and GPU-AV is on, else down the chain."""
    result, params = signature(name)
    arguments = ", ".join(f"a{index}" for index in range(len(params)))
    declared = ", ".join(f"{ctype} a{index}" for index, ctype in enumerate(params))
    give = "" if result == "void" else "return "
    if name == "vkCreateInstance":
        into_python = "gpuav_start_python()"
    elif name == "vkCreateDevice":
        into_python = "gpuav_python_usable() && gpuav_enabled_for(a0)"
    else:
        into_python = "gpuav_python_usable() && enabled"
    body = [f"static {result} gpuav_{name}({declared}) {{"]
    if name in ("vkCreateInstance", "vkCreateDevice"):
        body.append(f"    if ({into_python}) {{ {give}{python_name(name)}({arguments}); }}")
        body.append(f"    {give}gpuav_fallback_{name}({arguments});")
    elif name in ("vkDestroyInstance", "vkDestroyDevice"):
        body.append("    int enabled;")
        body.append(f"    gpuav_next_function(a0, GPUAV_SLOT_{name}, &enabled);")
        body.append(f"    if ({into_python}) {{ {python_name(name)}({arguments}); return; }}")
        body.append(f"    gpuav_fallback_destroy(a0, a1, GPUAV_SLOT_{name});")
    else:
        failed = (
            ""
            if result == "void"
            else (_ERROR_INITIALIZATION_FAILED if result == "int32_t" else "0")
        )
        body.append("    int enabled;")
        body.append(
            f"    {typedef_name(name)} next = "
            f"({typedef_name(name)})gpuav_next_function(a0, GPUAV_SLOT_{name}, &enabled);"
        )
        if name in _BEFORE:
            body.append(f"    {_BEFORE[name]}")
        if name in NATIVE_ONLY:
            body.append("    if (next == NULL) { return; }")
            body.append(f"    next({arguments});")
            body.append(f"    if (enabled) {{ {NATIVE_ONLY[name]} }}")
            body.append("}")
            return "\n".join(body)
        if name in RECORDED_AROUND_GOING_DOWN:
            body += _recorded_around(name, into_python, arguments)
            return "\n".join(body)
        body.append(f"    if ({into_python}) {{ {give}{python_name(name)}({arguments}); "
                    f"{'' if give else 'return; '}}}")  # fmt: skip
        body.append(f"    if (next == NULL) {{ return {failed}; }}".replace("return ;", "return;"))
        body.append(f"    {give}next({arguments});")
        if name in _AFTER_PASSING_DOWN:
            body.append(f"    {_AFTER_PASSING_DOWN[name]}")
    body.append("}")
    return "\n".join(body)


# The actions, and the binds that bind gpuav's spill block with an instrumented pipeline:
# Python records the output block to bind, and the wrapper binds it (gpuav_bind_output_before).
OUTPUT_BOUND_BY_WRAPPER = RECORDED_BEFORE_GOING_DOWN | {"vkCmdBindPipeline"}


def _recorded_around(name: str, into_python: str, arguments: str) -> list[str]:
    """The rest of a wrapper of RECORDED_AROUND_GOING_DOWN: Python records and the wrapper
    calls down, once, whether or not Python could record."""
    entered = f"{python_name(name)}({arguments});"
    if name in OUTPUT_BOUND_BY_WRAPPER:
        entered += " gpuav_bind_output_before(a0);"
    record = f"    if ({into_python}) {{ {entered} }}"
    going_down = ["    if (next == NULL) { return; }", f"    next({arguments});"]
    if name in RECORDED_BEFORE_GOING_DOWN:
        return [record, *going_down, "}"]
    after = _AFTER_PASSING_DOWN.get(name)
    if after is None:
        return [*going_down, record, "}"]
    recorded = f"    if ({into_python}) {{ {entered} return; }}"
    return [*going_down, recorded, f"    {after}", "}"]


def _hook_kinds(name: str) -> str:
    kinds = ["GPUAV_HOOK_INSTANCE" if name in INSTANCE_LEVEL else "GPUAV_HOOK_DEVICE"]
    if name in ALWAYS_HOOKED:
        kinds.append("GPUAV_HOOK_ALWAYS")
    if name in RESERVE_ONLY:
        kinds.append("GPUAV_HOOK_RESERVE_ONLY")
    return " | ".join(kinds)


def c_wrappers() -> str:
    """layer.c's GPUAV_WRAPPERS: typedefs, the wrappers, their addresses by slot, and the name
    table GetProcAddr searches (sorted, aliases included)."""
    lines = _typedefs()
    for name in entered_from_c():
        result, params = signature(name)
        lines.append(f"static {result} {python_name(name)}({', '.join(params)});")
    lines += [_wrapper(name) for name in HOOKED]
    lines.append("static const uintptr_t gpuav_wrappers[GPUAV_HOOKED_COUNT] = {")
    lines += [f"    (uintptr_t)&gpuav_{name}," for name in HOOKED]
    lines.append("};")
    names = {name: name for name in HOOKED} | dict(ALIASES)
    lines.append("static const struct gpuav_hook_name gpuav_hook_names[] = {")
    for name in sorted(names, key=lambda text: text.encode()):
        canonical = names[name]
        lines.append(f'    {{"{name}", GPUAV_SLOT_{canonical}, {_hook_kinds(canonical)}}},')
    lines.append("};")
    return "\n".join(lines)
