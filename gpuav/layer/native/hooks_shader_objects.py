"""Shader object entry points (VK_EXT_shader_object): translate the create infos, let the
engine (``gpuav.layer.shader_objects``) plan, call down with instrumented code and the
push-constant ranges every layout gets, record."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import vulkan._vulkan as vk
from vulkan._vulkan import ffi as vkffi

from gpuav.layer import shader_object_binaries, shader_objects, shader_validation
from gpuav.layer.calls import VulkanCallFailed
from gpuav.layer.command_buffers import degrade
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord, Native, enabled_state
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.hooks_pipelines import _push_range_array, _push_ranges
from gpuav.layer.native.vk import address, bytes_at, handles_at, words_at
from gpuav.layer.pipeline_layouts import PushRange
from gpuav.layer.shader_object_binaries import Specialization
from gpuav.layer.shader_objects import ShaderObjectInfo, ShaderObjectPlan
from gpuav.layer.state import DeviceState, ShaderObjectState

ERROR_INITIALIZATION_FAILED = -3
ERROR_OUT_OF_HOST_MEMORY = -1
SUCCESS = 0
INCOMPLETE = 5


def _specialization(info: Any) -> Specialization | None:
    """A copy of the VkSpecializationInfo, if any (binary code ignores it)."""
    given = info.pSpecializationInfo
    if not address(given):
        return None
    entries = tuple(
        (int(entry.constantID), int(entry.offset), int(entry.size))
        for entry in (given.pMapEntries[i] for i in range(given.mapEntryCount))
    )
    size = int(given.dataSize)
    data = bytes_at(address(given.pData), size)
    return entries, data


def _shader_infos(create_infos: int, count: int) -> list[ShaderObjectInfo]:
    infos = vkffi.cast("VkShaderCreateInfoEXT *", create_infos)
    found = []
    for index in range(count):
        info = infos[index]
        code, size = address(info.pCode), int(info.codeSize)
        spirv = int(info.codeType) == vk.VK_SHADER_CODE_TYPE_SPIRV_EXT
        found.append(
            ShaderObjectInfo(
                int(info.stage),
                tuple(_push_ranges(info)),
                tuple(words_at(code, size // 4)) if spirv else None,
                b"" if spirv else bytes_at(code, size),
                bool(int(info.flags) & vk.VK_SHADER_CREATE_LINK_STAGE_BIT_EXT),
                _specialization(info) if spirv else None,
            )
        )
    return found


def _validate_code(record: DeviceRecord, device: int, infos: list[ShaderObjectInfo]) -> None:
    """SPIR-V code is validated statically as a module's is; the shader is passed on."""
    if not shader_validation.has_environment(device):
        return
    for index, info in enumerate(infos):
        if info.words is not None:
            shader_validation.pre_call_validate_create_shader_module(
                device,
                info.words,
                record.instance.state.reporter,
                f"code of shader object create info {index} (stage {info.stage:#x})",
                "vkCreateShadersEXT",
            )


def _patched(
    create_infos: int, count: int, plans: Sequence[ShaderObjectPlan], keep: list[Any]
) -> int:
    """Copies of the create infos with the planned push-constant ranges and code."""
    if all(plan.push_ranges is None and plan.words is None for plan in plans):
        return create_infos
    copies = vkffi.new("VkShaderCreateInfoEXT[]", count)
    keep.append(copies)
    vkffi.memmove(copies, vkffi.cast("VkShaderCreateInfoEXT *", create_infos), vkffi.sizeof(copies))
    for index, plan in enumerate(plans):
        if plan.push_ranges is not None:
            copies[index].pushConstantRangeCount = len(plan.push_ranges)
            copies[index].pPushConstantRanges = _push_range_array(plan.push_ranges, keep)
        if plan.words is not None:
            code = vkffi.new("uint32_t[]", plan.words)
            keep.append(code)
            copies[index].codeType = vk.VK_SHADER_CODE_TYPE_SPIRV_EXT
            copies[index].codeSize = 4 * len(plan.words)
            copies[index].pCode = code
        if plan.from_binary:
            copies[index].pSpecializationInfo = _specialization_info(plan.specialization, keep)
    return address(copies)


def _specialization_info(specialization: Specialization | None, keep: list[Any]) -> Any:
    if specialization is None:
        return vkffi.NULL
    entries, data = specialization
    info = vkffi.new("VkSpecializationInfo *")
    items = vkffi.new("VkSpecializationMapEntry[]", len(entries))
    bytes_ = vkffi.new("char[]", data)
    keep += [info, items, bytes_]
    for item, (constant, offset, size) in zip(items, entries, strict=True):
        item.constantID, item.offset, item.size = constant, offset, size
    info.mapEntryCount, info.pMapEntries = len(entries), items
    info.dataSize, info.pData = len(data), bytes_
    return info


def _push_layout(record: DeviceRecord, device: int, ranges: Sequence[PushRange]) -> int:
    """A pipeline layout of ours with no sets and exactly ``ranges``."""
    keep: list[Any] = []
    info = vkffi.new("VkPipelineLayoutCreateInfo *")
    info.sType = vk.VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO
    info.pushConstantRangeCount = len(ranges)
    info.pPushConstantRanges = _push_range_array(list(ranges), keep)
    out = vkffi.new("uint64_t[1]")
    result = int(record.next.vkCreatePipelineLayout(device, address(info), 0, address(out)))
    if result < 0:
        raise VulkanCallFailed("vkCreatePipelineLayout", result)
    return int(out[0])


def _give_layouts(
    record: DeviceRecord, device: int, state: DeviceState, plans: Sequence[ShaderObjectPlan]
) -> None:
    """Each shader object to be instrumented gets its push layout before it is made; one that
    cannot have it keeps the app's code (it could not be reached)."""
    for plan in plans:
        if plan.tracker is None or plan.push_ranges is None:
            continue
        try:
            plan.layout = _push_layout(record, device, plan.push_ranges)
        except VulkanCallFailed as error:
            degrade(state, f"shader object layout creation: {error}")
            plan.words, plan.tracker = None, None


def create_shaders(
    device: int, count: int, create_infos: int, allocator: int, shaders_out: int
) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    create = record.next.vkCreateShadersEXT
    state = enabled_state(record)
    infos: list[ShaderObjectInfo] | None = None
    plans: list[ShaderObjectPlan] | None = None
    passed = create_infos
    keep: list[Any] = []
    if state is not None:
        try:
            infos = _shader_infos(create_infos, count)
            _validate_code(record, device, infos)
            plans = shader_objects.pre_call_record_create_shaders(state, infos)
            _give_layouts(record, device, state, plans)
            passed = _patched(create_infos, count, plans, keep)
        except BaseException as error:
            report_error("vkCreateShadersEXT", error, record.instance.state)
            if plans is not None:
                shader_objects.release_layouts(state, plans)
            infos, plans, passed = None, None, create_infos
    result = int(create(device, count, passed, allocator, shaders_out))
    if result < 0 and plans is not None and any(plan.words is not None for plan in plans):
        # The driver refused instrumented code: what it made goes, and the app's code is made
        # (with the push-constant ranges every layout gets).
        destroy = record.next.vkDestroyShaderEXT
        for handle in handles_at(shaders_out, count):
            if handle:
                destroy(device, handle, allocator)
        for plan in plans:
            if plan.words is not None:
                plan.words, plan.tracker = None, None
        passed = _patched(create_infos, count, plans, keep)
        result = int(create(device, count, passed, allocator, shaders_out))
    if state is not None and infos is not None and plans is not None:
        try:
            handles = handles_at(shaders_out, count) if result >= 0 else [0] * count
            made = shader_objects.post_call_record_create_shaders(state, infos, plans, handles)
            _hand_out_app_code_binaries(record, device, state, count, create_infos, made)
        except BaseException as error:
            report_error("vkCreateShadersEXT", error, record.instance.state)
    return result


def _hand_out_app_code_binaries(
    record: DeviceRecord,
    device: int,
    state: DeviceState,
    count: int,
    create_infos: int,
    made: Sequence[ShaderObjectState | None],
) -> None:
    """The driver's binaries of the app's own code for the instrumented shader objects made
    from SPIR-V: twins made with the app's create infos unchanged (linked ones together, as
    they were), asked for their binaries and destroyed."""
    wanted = [index for index, shader in enumerate(made) if shader and shader.binary is None]
    if not wanted:
        return
    twins = vkffi.new("uint64_t[]", count)
    result = int(record.next.vkCreateShadersEXT(device, count, create_infos, 0, address(twins)))
    try:
        for index in wanted:
            shader = made[index]
            if shader is not None and result >= 0 and twins[index]:
                shader.binary = _binary_of(record, device, int(twins[index]))
    finally:
        for twin in twins:
            if twin:
                record.next.vkDestroyShaderEXT(device, int(twin), 0)


def _binary_of(record: DeviceRecord, device: int, shader: int) -> bytes | None:
    size = vkffi.new("size_t *")
    get = record.next.vkGetShaderBinaryDataEXT
    if int(get(device, shader, address(size), 0)) != SUCCESS:
        return None
    data = vkffi.new("char[]", int(size[0]))
    if int(get(device, shader, address(size), address(data))) != SUCCESS:
        return None
    return bytes(vkffi.buffer(data, int(size[0])))


def destroy_shader(device: int, shader: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    if record.state is not None and shader:
        try:
            shader_objects.pre_call_record_destroy_shader(record.state, shader)
        except BaseException as error:
            report_error("vkDestroyShaderEXT", error, record.instance.state)
    record.next.vkDestroyShaderEXT(device, shader, allocator)


def get_shader_binary_data(device: int, shader: int, size: int, data: int) -> int:
    """An instrumented shader object hands out the binary of the app's own code, never gpuav's
    (``shader_object_binaries``): the driver is not asked."""
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    device_state = record.state
    state = None if device_state is None else device_state.shader_objects.get(shader)
    if device_state is None or state is None:
        return int(record.next.vkGetShaderBinaryDataEXT(device, shader, size, data))
    try:
        binary = shader_object_binaries.hand_out(device_state, state)
        if binary is None:
            return ERROR_OUT_OF_HOST_MEMORY  # no twin could be made: nothing safe to give
        given = vkffi.cast("size_t *", size)
        if data:
            if int(given[0]) < len(binary):
                return INCOMPLETE  # nothing is written (vkGetShaderBinaryDataEXT)
            vkffi.memmove(vkffi.cast("char *", data), binary, len(binary))
        given[0] = len(binary)
    except BaseException as error:
        report_error("vkGetShaderBinaryDataEXT", error, record.instance.state)
        return ERROR_OUT_OF_HOST_MEMORY
    return SUCCESS


def cmd_bind_shaders(command_buffer: int, stage_count: int, stages: int, shaders: int) -> None:
    record = REGISTRY.devices.get(Native.lib.gpuav_dispatch_key(command_buffer))
    if record is None:
        return
    record.next.vkCmdBindShadersEXT(command_buffer, stage_count, stages, shaders)
    state = None if record.state is None else record.state.command_buffers.get(command_buffer)
    if state is not None and stage_count:
        try:
            flags = vkffi.cast("uint32_t *", stages)
            # pShaders may be null: every stage named is unbound.
            handles = handles_at(shaders, stage_count) if shaders else [0] * stage_count
            shader_objects.post_call_record_cmd_bind_shaders(
                state, [int(flags[i]) for i in range(stage_count)], handles
            )
        except BaseException as error:
            report_error("vkCmdBindShadersEXT", error, record.instance.state)
