"""CreateShaderModule / DestroyShaderModule (seed 000: GpuOverrideDispatchCreateShaderModule).

The app's module is always created from the app's own words. When instrumentation succeeds we
create a second, instrumented "shadow" module, and the pipeline hooks substitute it where our
descriptor set is bound at draw time. Pipeline paths the layer does not follow (ray tracing,
shader objects, libraries, layouts that took our set) therefore get the original shader and
stay correct, instead of running instrumented code with nothing bound at our set.

``GPUAV_INSTRUMENTER=module:function`` replaces ``gpuav.instrument.api.instrument_shader``
(development and tests).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable

from gpuav.errors import GpuavError
from gpuav.layer import faults, notices
from gpuav.layer.reporting import internal_error_message
from gpuav.layer.state import DeviceState, ShaderModuleState

Instrumenter = Callable[..., list[int]]


def load_instrumenter() -> Instrumenter:
    """The instrumentation function, imported when first needed."""
    override = os.environ.get("GPUAV_INSTRUMENTER")
    if override:
        module_name, _, function_name = override.partition(":")
        function: Instrumenter = getattr(importlib.import_module(module_name), function_name)
        return function
    from gpuav.instrument.api import instrument_shader

    return instrument_shader


def instrument_words(device: DeviceState, words: list[int], shader_id: int) -> list[int] | None:
    """Instrumented words, or None (said once per reason) when the shader stays as it is."""
    if not device.enabled or device.degraded:
        return None
    try:
        faults.check("instrument_shader")
        instrumented = load_instrumenter()(
            list(words), shader_id=shader_id, descriptor_set=device.set_index
        )
        return [int(word) for word in instrumented]
    except GpuavError as error:
        reason = str(error) or type(error).__name__
        device.reporter.emit_once(f"instrument:{reason}", notices.instrumentation_failed(reason))
    except Exception as error:
        device.reporter.emit(internal_error_message("instrument_shader", error))
    return None


def pre_call_record_create_shader_module(
    device: DeviceState, words: list[int]
) -> tuple[int, list[int] | None]:
    """A fresh shader id (seed 000's per-device counter) and the instrumented words, if any."""
    shader_id = next(device.shader_ids)
    return shader_id, instrument_words(device, words, shader_id)


def post_call_record_create_shader_module(
    device: DeviceState,
    handle: int,
    shader_id: int,
    words: list[int],
    instrumented: list[int] | None,
) -> None:
    shadow = 0
    if instrumented is not None:
        try:
            shadow = device.calls.create_shader_module(instrumented)
        except Exception as error:
            from gpuav.layer.command_buffers import degrade

            degrade(device, f"shader module creation: {error}")
    device.shader_modules[handle] = ShaderModuleState(handle, shader_id, tuple(words), shadow)


def pre_call_record_destroy_shader_module(device: DeviceState, handle: int) -> None:
    """Drop the module's state; pipeline trackers keep their own copy of the words."""
    state = device.shader_modules.pop(handle, None)
    if state is not None and state.shadow:
        device.calls.destroy_shader_module(state.shadow)
