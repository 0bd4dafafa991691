"""Shader module entry points: validate the app's words, find or make the instrumented
copy, call down with the app's own create info, record.

Apart from the pipeline hooks, so that a program's first ``vkCreateShaderModule`` imports no
pipeline code (start-up cost)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuav.layer import shader_modules, shader_validation
from gpuav.layer.native.dispatch import REGISTRY, DeviceRecord, enabled_state
from gpuav.layer.native.errors import report_error
from gpuav.layer.native.vk import address, at, bytes_at, handles_at
from gpuav.layer.shader_code import ShaderCode

if TYPE_CHECKING:
    from gpuav.layer.module_cache import Outcome

ERROR_INITIALIZATION_FAILED = -3


def create_shader_module(device: int, create_info: int, allocator: int, module_out: int) -> int:
    record = REGISTRY.device_of(device)
    if record is None:
        return ERROR_INITIALIZATION_FAILED
    code: ShaderCode | None = None
    try:  # one copy of the app's bytes, for validation and the engine
        info = at(create_info, "VkShaderModuleCreateInfo")
        code = ShaderCode.from_bytes(_code_bytes(address(info.pCode), int(info.codeSize)))
    except BaseException as error:
        report_error("vkCreateShaderModule", error, record.instance.state)
    state = enabled_state(record)
    if state is not None and code is not None:
        try:
            shader_modules.recall(state, code)
        except BaseException as error:
            report_error("vkCreateShaderModule", error, record.instance.state)
    if code is not None:
        _validate_shader_module(record, device, code)
    prepared: tuple[ShaderCode, int, Outcome | None] | None = None
    if state is not None and code is not None:
        try:
            shader_id, instrumented = shader_modules.pre_call_record_create_shader_module(
                state, code
            )
            prepared = (code, shader_id, instrumented)
        except BaseException as error:
            report_error("vkCreateShaderModule", error, record.instance.state)
    result = int(record.next.vkCreateShaderModule(device, create_info, allocator, module_out))
    if result == 0 and state is not None and prepared is not None:
        try:
            code, shader_id, instrumented = prepared
            handle = handles_at(module_out, 1)[0]
            shader_modules.post_call_record_create_shader_module(
                state, handle, shader_id, code, instrumented
            )
        except BaseException as error:
            report_error("vkCreateShaderModule", error, record.instance.state)
    return result


def _code_bytes(code_address: int, code_size: int) -> bytes:
    """The module's whole words (``codeSize`` rounded down to a word) as bytes: one copy."""
    return bytes_at(code_address, code_size - code_size % 4)


def _validate_shader_module(record: DeviceRecord, device: int, code: ShaderCode) -> None:
    """Static validation against the device's enabled features; the shader is passed on."""
    if not shader_validation.has_environment(device):
        return
    try:
        shader_validation.pre_call_validate_create_shader_module(
            device, code, record.instance.state.reporter
        )
    except BaseException as error:
        report_error("vkCreateShaderModule (validation)", error, record.instance.state)


def destroy_shader_module(device: int, module: int, allocator: int) -> None:
    record = REGISTRY.device_of(device)
    if record is None:
        return
    if record.state is not None and module:
        try:
            shader_modules.pre_call_record_destroy_shader_module(record.state, module)
        except BaseException as error:
            report_error("vkDestroyShaderModule", error, record.instance.state)
    record.next.vkDestroyShaderModule(device, module, allocator)
