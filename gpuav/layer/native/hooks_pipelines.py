"""Pipeline layout and pipeline entry points: translate, ask the engine, build
modified copies of the create infos, call down once, record."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer import pipeline_layouts, pipelines, shader_validation
from gpuav.layer.calls import (
    PIPELINE_BIND_POINT_COMPUTE,
    PIPELINE_BIND_POINT_GRAPHICS,
    PipelineInfo,
    StageInfo,
)
from gpuav.layer.command_buffers import pushed_context_offset
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord, Native, enabled_state
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import (
    address,
    at,
    copy_struct,
    find,
    handles_at,
    replace_in_chain,
    words_at,
)
from gpuav.layer.pipelines import PipelinePlan
from gpuav.layer.state import DeviceState

if TYPE_CHECKING:
    pass

PIPELINE_CREATE_LIBRARY = 0x800
PIPELINE_LAYOUT_CREATE_INDEPENDENT_SETS = 0x2  # VK_EXT_graphics_pipeline_library
ERROR_INITIALIZATION_FAILED = -3


# -- pipeline layouts -------------------------------------------------------------------------


def create_pipeline_layout(device: int, create_info: int, allocator: int, layout_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    state = enabled_state(record)
    create = record.next.vkCreatePipelineLayout
    patched_info = 0
    set_count = 0
    added_set = False
    context_stages = 0
    set_layouts: list[int] = []
    keep: list[Any] = []
    if state is not None:
        try:
            info = at(create_info, "VkPipelineLayoutCreateInfo")
            set_count = int(info.setLayoutCount)
            set_layouts = handles_at(address(info.pSetLayouts), set_count)
            wanted = pipeline_layouts.pre_call_record_create_pipeline_layout(
                state, set_layouts, bool(int(info.flags) & PIPELINE_LAYOUT_CREATE_INDEPENDENT_SETS)
            )
            ranges = pipeline_layouts.pre_call_record_push_constant_ranges(
                state, _push_ranges(info)
            )
            if wanted is not None or ranges is not None:
                copy = copy_struct(create_info, "VkPipelineLayoutCreateInfo", keep)
                patched_info = address(copy)
            if wanted is not None:
                array = vkffi.new("uint64_t[]", wanted)
                keep.append(array)
                copy.setLayoutCount = len(wanted)
                copy.pSetLayouts = vkffi.cast("VkDescriptorSetLayout *", array)
                added_set = True
            if ranges is not None:
                new_ranges, context_stages = ranges
                copy.pushConstantRangeCount = len(new_ranges)
                copy.pPushConstantRanges = _push_range_array(new_ranges, keep)
        except BaseException as error:
            report_error("vkCreatePipelineLayout", error, record.instance.state)
            patched_info = 0
    result = int(create(device, patched_info or create_info, allocator, layout_out))
    patched = added_set and bool(patched_info) and result == 0
    if patched_info and result < 0 and added_set and context_stages:
        # Our set pushed a limit over the edge: keep the app's sets, and the push-constant
        # ranges every layout and shader object gets (pipeline_layouts), so that this layout
        # stays compatible with the others.
        copy.setLayoutCount = set_count
        copy.pSetLayouts = info.pSetLayouts
        result = int(create(device, patched_info, allocator, layout_out))
    if patched_info and result < 0:
        # Make the app's layout as it asked.
        result = int(create(device, create_info, allocator, layout_out))
        context_stages = 0
    if result == 0 and state is not None:
        try:
            handle = handles_at(layout_out, 1)[0]
            pipeline_layouts.post_call_record_create_pipeline_layout(
                state, handle, set_count, patched, context_stages, set_layouts
            )
        except BaseException as error:
            report_error("vkCreatePipelineLayout", error, record.instance.state)
    return result


def _push_ranges(info: Any) -> list[tuple[int, int, int]]:
    """The push-constant ranges of a VkPipelineLayoutCreateInfo or VkShaderCreateInfoEXT."""
    items = info.pPushConstantRanges
    return [
        (int(items[i].stageFlags), int(items[i].offset), int(items[i].size))
        for i in range(info.pushConstantRangeCount)
    ]


def _push_range_array(ranges: list[tuple[int, int, int]], keep: list[Any]) -> Any:
    items = vkffi.new("VkPushConstantRange[]", len(ranges))
    keep.append(items)
    for index, (stages, offset, size) in enumerate(ranges):
        items[index].stageFlags = stages
        items[index].offset = offset
        items[index].size = size
    return items


def destroy_pipeline_layout(device: int, layout: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    destroy_now = True
    if record.state is not None and layout:
        try:
            destroy_now = pipeline_layouts.pre_call_record_destroy_pipeline_layout(
                record.state, layout
            )
        except BaseException as error:
            report_error("vkDestroyPipelineLayout", error, record.instance.state)
            destroy_now = True
    if destroy_now:
        record.next.vkDestroyPipelineLayout(device, layout, allocator)


# -- pipelines --------------------------------------------------------------------------------


def _stage_info(stage: Any) -> StageInfo:
    module = address(stage.module)
    inline_words = None
    if not module:
        chained = find(address(stage.pNext), vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO)
        if chained:
            code = at(chained, "VkShaderModuleCreateInfo")
            inline_words = tuple(words_at(address(code.pCode), int(code.codeSize) // 4))
    name = vkffi.string(stage.pName).decode("utf-8", "replace") if stage.pName else ""
    return StageInfo(int(stage.stage), module, inline_words, name)


def _buffer_robustness(pipeline_next: Any, stage_nexts: list[Any]) -> tuple[int, int]:
    """(storage, uniform) buffer behaviours of VkPipelineRobustnessCreateInfoEXT, from the
    pipeline's chain or else the first stage's that has one."""
    for chain_start in (pipeline_next, *stage_nexts):
        found = find(address(chain_start), vk.VK_STRUCTURE_TYPE_PIPELINE_ROBUSTNESS_CREATE_INFO_EXT)
        if found:
            info = at(found, "VkPipelineRobustnessCreateInfoEXT")
            return int(info.storageBuffers), int(info.uniformBuffers)
    return 0, 0


def _creates_library(info: Any) -> bool:
    flags = int(info.flags)
    # maintenance5: a chained VkPipelineCreateFlags2CreateInfoKHR replaces flags
    flags2 = find(address(info.pNext), vk.VK_STRUCTURE_TYPE_PIPELINE_CREATE_FLAGS_2_CREATE_INFO_KHR)
    if flags2:
        flags = int(at(flags2, "VkPipelineCreateFlags2CreateInfoKHR").flags)
    return bool(flags & PIPELINE_CREATE_LIBRARY)


def _library_handles(libraries: Any) -> tuple[int, ...]:
    """The pipelines a VkPipelineLibraryCreateInfoKHR links (none when it is null)."""
    if not address(libraries):
        return ()
    return tuple(handles_at(address(libraries.pLibraries), int(libraries.libraryCount)))


def _linked_libraries(info: Any) -> tuple[int, ...]:
    """The libraries a graphics pipeline links (VkPipelineLibraryCreateInfoKHR chained)."""
    found = find(address(info.pNext), vk.VK_STRUCTURE_TYPE_PIPELINE_LIBRARY_CREATE_INFO_KHR)
    if not found:
        return ()
    return _library_handles(at(found, "VkPipelineLibraryCreateInfoKHR"))


def _apply_to_stage(stage: Any, index: int, plan: PipelinePlan, keep: list[Any]) -> None:
    """Point a copied stage at the shadow module or at instrumented inline code."""
    if index in plan.modules:
        stage.module = vkffi.cast("VkShaderModule", plan.modules[index])
    if index in plan.inline_words:
        words = plan.inline_words[index]
        first = address(stage.pNext)
        original = find(first, vk.VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO)
        code_copy = copy_struct(original, "VkShaderModuleCreateInfo", keep)
        code = vkffi.new("uint32_t[]", words)
        keep.append(code)
        code_copy.codeSize = 4 * len(words)
        code_copy.pCode = code
        head = replace_in_chain(first, original, address(code_copy), keep)
        if head is not None:
            stage.pNext = vkffi.cast("void *", head)


def _graphics_infos(create_infos: int, count: int) -> list[PipelineInfo]:
    infos = vkffi.cast("VkGraphicsPipelineCreateInfo *", create_infos)
    return [
        PipelineInfo(
            address(infos[i].layout),
            tuple(_stage_info(infos[i].pStages[s]) for s in range(infos[i].stageCount)),
            _linked_libraries(infos[i]),
            _buffer_robustness(
                infos[i].pNext, [infos[i].pStages[s].pNext for s in range(infos[i].stageCount)]
            ),
            _creates_library(infos[i]),
        )
        for i in range(count)
    ]


def _compute_infos(create_infos: int, count: int) -> list[PipelineInfo]:
    infos = vkffi.cast("VkComputePipelineCreateInfo *", create_infos)
    return [
        PipelineInfo(
            address(infos[i].layout),
            (_stage_info(infos[i].stage),),
            buffer_robustness=_buffer_robustness(infos[i].pNext, [infos[i].stage.pNext]),
        )
        for i in range(count)
    ]


def _patched_graphics(
    create_infos: int, count: int, plans: list[PipelinePlan], keep: list[Any]
) -> int:
    copies = vkffi.new("VkGraphicsPipelineCreateInfo[]", count)
    keep.append(copies)
    vkffi.memmove(
        copies, vkffi.cast("VkGraphicsPipelineCreateInfo *", create_infos), vkffi.sizeof(copies)
    )
    for i, plan in enumerate(plans):
        if not plan.changes_create_info:
            continue
        stage_count = copies[i].stageCount
        stages = vkffi.new("VkPipelineShaderStageCreateInfo[]", stage_count)
        keep.append(stages)
        vkffi.memmove(stages, copies[i].pStages, vkffi.sizeof(stages))
        for index in range(stage_count):
            _apply_to_stage(stages[index], index, plan, keep)
        copies[i].pStages = stages
    return address(copies)


def _patched_compute(
    create_infos: int, count: int, plans: list[PipelinePlan], keep: list[Any]
) -> int:
    copies = vkffi.new("VkComputePipelineCreateInfo[]", count)
    keep.append(copies)
    vkffi.memmove(
        copies, vkffi.cast("VkComputePipelineCreateInfo *", create_infos), vkffi.sizeof(copies)
    )
    for i, plan in enumerate(plans):
        if plan.changes_create_info:
            _apply_to_stage(copies[i].stage, 0, plan, keep)
    return address(copies)


def _validate_inline_code(
    record: DeviceRecord, device: int, command: str, infos: list[PipelineInfo]
) -> None:
    """Stage code chained as a VkShaderModuleCreateInfo (maintenance5) is validated like a
    module; the reporter says which pipeline stage it came from."""
    if not shader_validation.has_environment(device):
        return
    for pipeline_index, info in enumerate(infos):
        for stage in info.stages:
            if stage.inline_words is not None:
                shader_validation.pre_call_validate_create_shader_module(
                    device,
                    stage.inline_words,
                    record.instance.state.reporter,
                    f"inline code of stage {stage.stage:#x} of create info {pipeline_index}",
                    command,
                )


def _create_pipelines(
    command: str,
    bind_point: int,
    read: Callable[[int, int], list[PipelineInfo]],
    patch: Callable[[int, int, list[PipelinePlan], list[Any]], int],
    device: int,
    cache: int,
    count: int,
    create_infos: int,
    allocator: int,
    pipelines_out: int,
    deferred_operation: int | None = None,
) -> int:
    """``deferred_operation``: the command takes one first (ray tracing); with GPU-AV on it is
    not passed down, so that the pipelines exist when this returns and can be tracked."""
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    state = enabled_state(record)
    create = getattr(record.next, command)
    if deferred_operation is not None:
        create = _with_deferred_operation(create, 0 if state is not None else deferred_operation)
    infos: list[PipelineInfo] | None = None
    plans: list[PipelinePlan] | None = None
    passed = create_infos
    keep: list[Any] = []
    if state is not None:
        try:
            infos = read(create_infos, count)
            _validate_inline_code(record, device, command, infos)
            plans = pipelines.pre_call_record_create_pipelines(state, bind_point, infos)
            if plans is not None:
                passed = patch(create_infos, count, plans, keep)
        except BaseException as error:
            report_error(command, error, record.instance.state)
            infos, plans, passed = None, None, create_infos
    result = int(create(device, cache, count, passed, allocator, pipelines_out))
    if state is not None and infos is not None and result >= 0:
        try:
            handles = handles_at(pipelines_out, count)
            pipelines.post_call_record_create_pipelines(state, bind_point, infos, plans, handles)
            _remember_spill_bindings(state, handles)
        except BaseException as error:
            report_error(command, error, record.instance.state)
    return result


def _with_deferred_operation(create: Any, operation: int) -> Callable[..., Any]:
    return lambda device, *rest: create(device, operation, *rest)


def _remember_spill_bindings(state: DeviceState, handles: list[int]) -> None:
    """Tell layer.c how to bind the spill block with each instrumented pipeline, for when
    vkCmdBindPipeline cannot enter Python (the interpreter has gone)."""
    output = state.output
    if output is None:
        return
    for handle in handles:
        pipeline = state.pipelines.get(handle)
        if pipeline is None or not pipeline.instrumented:
            continue
        if pushed_context_offset(state, pipeline) is not None:
            continue  # no set to bind
        Native.lib.gpuav_remember_pipeline(
            state.handle, handle, pipeline.layout, state.set_index, output.spill.descriptor_set
        )


def create_graphics_pipelines(
    device: int, cache: int, count: int, create_infos: int, allocator: int, pipelines_out: int
) -> int:
    return _create_pipelines(
        "vkCreateGraphicsPipelines", PIPELINE_BIND_POINT_GRAPHICS, _graphics_infos,
        _patched_graphics, device, cache, count, create_infos, allocator, pipelines_out,
    )  # fmt: skip


def create_compute_pipelines(
    device: int, cache: int, count: int, create_infos: int, allocator: int, pipelines_out: int
) -> int:
    return _create_pipelines(
        "vkCreateComputePipelines", PIPELINE_BIND_POINT_COMPUTE, _compute_infos,
        _patched_compute, device, cache, count, create_infos, allocator, pipelines_out,
    )  # fmt: skip


def destroy_pipeline(device: int, pipeline: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    if record.state is not None and pipeline:
        Native.lib.gpuav_forget_pipeline(device, pipeline)
        try:
            pipelines.pre_call_record_destroy_pipeline(record.state, pipeline)
        except BaseException as error:
            report_error("vkDestroyPipeline", error, record.instance.state)
    record.next.vkDestroyPipeline(device, pipeline, allocator)
