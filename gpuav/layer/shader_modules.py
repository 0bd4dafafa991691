"""CreateShaderModule / DestroyShaderModule (seed 000: GpuOverrideDispatchCreateShaderModule).

The app's module is always created from the app's own words. When instrumentation succeeds we
create a second, instrumented "shadow" module, and the pipeline hooks substitute it where our
descriptor set is bound at draw time. Pipeline paths the layer does not follow (ray tracing,
shader objects, libraries, layouts that took our set) therefore get the original shader and
stay correct, instead of running instrumented code with nothing bound at our set.

Each module is read once (issue 19 item 7): gpuav's pass instruments the very module the
intake let in, which is the one static validation read. ``GPUAV_INSTRUMENTER=module:function``
replaces the pass with a function of the words, like ``gpuav.instrument.api.instrument_shader``
(development and tests).

What the intake and the pass make of a module is kept by content (``module_cache``), so
creating the same module again, here or in a later process, reads and instruments nothing:
the kept words have a slot for the shader id, which each creation fills with its own.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from typing import TYPE_CHECKING, Any

from gpuav.errors import GpuavError
from gpuav.layer import faults, notices, shader_validation
from gpuav.layer.reporting import internal_error_message
from gpuav.layer.shader_code import ShaderCode
from gpuav.layer.state import DeviceState, ShaderModuleState

if TYPE_CHECKING:
    from gpuav.instrument.shader_id_slot import SlottedWords
    from gpuav.layer.module_cache import Key, ModuleCache, Outcome
    from gpuav.spirv.module import Module

OVERRIDE = "GPUAV_INSTRUMENTER"

Instrumenter = Callable[..., list[int]]


def load_instrumenter() -> Instrumenter:
    """The instrumentation function of the words, imported when first needed."""
    override = os.environ.get(OVERRIDE)
    if override:
        module_name, _, function_name = override.partition(":")
        function: Instrumenter = getattr(importlib.import_module(module_name), function_name)
        return function
    from gpuav.instrument.api import instrument_shader

    return instrument_shader


# The keyword options of gpuav's own pass (``instrument_slotted``), known without importing it.
PASS_OPTIONS = frozenset(
    {
        "descriptor_set",
        "descriptor_state",
        "context_address",
        "printf",
        "checks",
        "shader_int64",
        "unroll_loop_copies",
    }
)


@cache
def instrumenter_accepts(option: str) -> bool:
    """Whether the instrumentation function takes keyword ``option`` (issue 8 added
    ``descriptor_state`` and ``context_address``)."""
    if not os.environ.get(OVERRIDE):
        return option in PASS_OPTIONS
    try:
        parameters = inspect.signature(load_instrumenter()).parameters
    except (ValueError, TypeError, ImportError, AttributeError):
        return False
    return option in parameters or any(
        parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values()
    )


def instrument_words(
    device: DeviceState,
    words: Sequence[int] | ShaderCode,
    shader_id: int,
    source: str = "A shader module",
    **options: Any,
) -> list[int] | None:
    """Instrumented words, or None when the shader stays as it is: said once per reason when
    the pass declines it, once per module (``source`` names it) when the module intake
    refuses it.

    ``options`` go to the instrumenter as they are; ``descriptor_state=True`` is added when it
    takes that option (the layer always provides the descriptor state).
    """
    outcome = instrumentation(device, words, shader_id, source, **options)
    return None if outcome is None else outcome.words_for(shader_id)


def instrumentation(
    device: DeviceState,
    words: Sequence[int] | ShaderCode,
    shader_id: int,
    source: str = "A shader module",
    **options: Any,
) -> Outcome | None:
    """``instrument_words``, keeping the words for later: the outcome of an instrumented
    module (its words for any shader id), or None."""
    if not device.enabled or device.degraded:
        return None
    options = _with_layer_options(device, options)
    code = ShaderCode.of(words)
    cache = _cache_for(device)
    try:
        faults.check("instrument_shader")
        key = outcome = None
        if cache is not None:
            key = _key(device, code, options)
            outcome = cache.lookup(key)
        if outcome is None:
            made = _outcome(device, code, shader_id, **options)
            if made is None:
                return None
            outcome, keep = made
            if key is not None and cache is not None and keep:
                diagnostics = shader_validation.known_diagnostics(device.handle, code)
                cache.remember(key, replace(outcome, diagnostics=diagnostics))
        return outcome if _delivered(device, outcome, source) else None
    except Exception as error:
        device.reporter.emit(internal_error_message("instrument_shader", error))
    return None


def recall(device: DeviceState, code: ShaderCode) -> None:
    """Before static validation of a module the device may instrument: look up its kept
    outcome, which holds validation's diagnostics too, so that a module kept on disk by an
    earlier process is served from that one file (the lookup that follows finds it in
    memory). Nothing is looked up when validation's result is in memory already."""
    if not device.enabled or device.degraded:
        return
    if not shader_validation.has_environment(device.handle):
        return  # not validated: nothing to recall
    if shader_validation.known_diagnostics(device.handle, code) is not None:
        return
    cache = _cache_for(device)
    if cache is None:
        return
    outcome = cache.lookup(_key(device, code, _with_layer_options(device, {})))
    if outcome is not None and outcome.diagnostics is not None:
        shader_validation.recall_diagnostics(device.handle, code, outcome.diagnostics)


def _with_layer_options(device: DeviceState, options: dict[str, Any]) -> dict[str, Any]:
    """The pass's options as the layer runs it on the device, besides the caller's."""
    if instrumenter_accepts("descriptor_state"):
        options.setdefault("descriptor_state", True)
    settings = device.instance.settings
    if settings.printf and instrumenter_accepts("printf"):
        options.setdefault("printf", True)  # debugPrintfEXT becomes printf records
    if not settings.checks and instrumenter_accepts("checks"):
        options.setdefault("checks", False)  # printf only
    if device.context_offset is not None and instrumenter_accepts("shader_int64"):
        options.setdefault("shader_int64", True)  # the layer turned shaderInt64 on
    if device.facts.cpu and instrumenter_accepts("unroll_loop_copies"):
        # Measured on llvmpipe: a copy fully unrolled ran 1.4x slower than one left alone.
        options.setdefault("unroll_loop_copies", False)
    return options


def _cache_for(device: DeviceState) -> ModuleCache | None:
    """The module cache, or None when off or when an override replaces the pass."""
    if _overridden():
        return None
    # Imported at the first module, not at instance creation (start-up cost); from the
    # module itself, which costs less at each call than from its package.
    from gpuav.layer.module_cache import cache_for

    return cache_for(device.instance.settings)


@cache
def _overridden() -> bool:
    """Whether ``GPUAV_INSTRUMENTER`` replaces the pass (read once, like its options)."""
    return bool(os.environ.get(OVERRIDE))


def layer_enabled_features(device: DeviceState) -> frozenset[str]:
    """The features ``device_setup`` turned on for the layer's own shaders."""
    names = set()
    if device.facts.fragment_stores_and_atomics:
        names.add("fragmentStoresAndAtomics")
    if device.facts.vertex_pipeline_stores_and_atomics:
        names.add("vertexPipelineStoresAndAtomics")
    if device.context_offset is not None:  # the device-address path
        names |= {"bufferDeviceAddress", "shaderInt64"}
    return frozenset(names)


def _key(device: DeviceState, code: ShaderCode, options: dict[str, Any]) -> Key:
    from gpuav.layer.module_cache import key_for

    return key_for(
        code.digest,
        {**options, "descriptor_set": device.set_index},
        shader_validation.environment_of(device.handle),
        layer_enabled_features(device),
    )


def _outcome(
    device: DeviceState, code: ShaderCode, shader_id: int, **options: Any
) -> tuple[Outcome, bool] | None:
    """What the intake and the pass make of the words, and whether it may be kept (None when
    the pass failed and said so). gpuav's pass leaves a slot for the shader id
    (``shader_id_slot``), so one outcome serves every id."""
    from gpuav.layer import module_cache, module_intake
    from gpuav.layer.module_cache import Kind, Outcome

    try:
        admitted = module_intake.admit(device.handle, code, layer_enabled_features(device))
    except Exception as error:  # whatever failed, the module cannot be vouched for
        reason = f"it could not be checked ({type(error).__name__}: {error})"
        return Outcome(Kind.REFUSED, reason), False
    if isinstance(admitted, module_intake.Refused):
        return Outcome(Kind.REFUSED, admitted.reason), True
    try:
        instrumented = _instrumented(
            admitted, code.words, shader_id, descriptor_set=device.set_index, **options
        )
    except GpuavError as error:
        return Outcome(Kind.DECLINED, str(error) or type(error).__name__), True
    except Exception as error:
        device.reporter.emit(internal_error_message("instrument_shader", error))
        return None
    # A shader with nothing to check comes back unchanged: it needs no shadow module, and
    # its actions no output block or read-back.
    if instrumented is None:
        return Outcome(Kind.UNCHANGED), True
    refusal = module_intake.refusal_after(instrumented.words)
    if refusal is not None:
        return Outcome(Kind.REFUSED, refusal), True
    return module_cache.instrumented(instrumented), True


def _instrumented(
    module: Module, words: Sequence[int], shader_id: int, **keywords: Any
) -> SlottedWords | None:
    """The instrumented words, or None when nothing needs a check: gpuav's pass changes the
    module the intake read; an override gets the words and the id (and leaves no slot)."""
    from gpuav.instrument.shader_id_slot import SlottedWords

    if os.environ.get(OVERRIDE):
        given = list(words)
        instrumented = load_instrumenter()(list(given), shader_id=shader_id, **keywords)
        return None if instrumented == given else SlottedWords(instrumented, shader_id, ())
    from gpuav.instrument.api import instrument_slotted

    return instrument_slotted(module, **keywords)


def _delivered(device: DeviceState, outcome: Outcome, source: str) -> bool:
    """Say what the outcome says (as when it was made); whether the module is instrumented."""
    from gpuav.layer.module_cache import Kind

    if outcome.kind is Kind.REFUSED:
        device.reporter.emit(notices.module_passed_unchanged(source, outcome.reason))
    elif outcome.kind is Kind.DECLINED:
        device.reporter.emit_once(
            f"instrument:{outcome.reason}", notices.instrumentation_failed(outcome.reason)
        )
    return outcome.kind is Kind.INSTRUMENTED


def pre_call_record_create_shader_module(
    device: DeviceState, words: Sequence[int] | ShaderCode
) -> tuple[int, Outcome | None]:
    """The module's shader id (seed 000's per-device counter) and the instrumentation, if
    any. Modules of the same words share an id, so that their instrumented words are the same
    too and the driver's own cache serves a module created again (a pipeline names its modules'
    ids, so two equal modules in one pipeline are told apart by stage only)."""
    if not device.enabled or device.degraded:
        return next(device.shader_ids), None
    code = ShaderCode.of(words)
    shader_id = device.module_shader_ids.get(code.digest)
    if shader_id is None:
        shader_id = device.module_shader_ids[code.digest] = next(device.shader_ids)
    return shader_id, instrumentation(device, code, shader_id, "A module of vkCreateShaderModule")


def post_call_record_create_shader_module(
    device: DeviceState,
    handle: int,
    shader_id: int,
    words: Sequence[int] | ShaderCode,
    instrumented: Outcome | None,
) -> None:
    """Keep the module; its instrumented twin is made when a pipeline first needs it
    (``shadow_of``), so that creating a module hands the driver nothing but the app's."""
    code = ShaderCode.of(words).data
    device.shader_modules[handle] = ShaderModuleState(handle, shader_id, code, pending=instrumented)


def shadow_of(device: DeviceState, module: ShaderModuleState) -> int:
    """The module's instrumented twin, made at its first use; 0 when there is none."""
    pending, module.pending = module.pending, None
    if pending is not None:
        module.verdicts = pending.verdicts
        try:
            module.shadow = device.calls.create_shader_module(pending.words_for(module.shader_id))
        except Exception as error:
            from gpuav.layer.command_buffers import degrade

            degrade(device, f"shader module creation: {error}")
    return module.shadow


def context_shadow(device: DeviceState, module: ShaderModuleState) -> int:
    """The module instrumented to reach our buffers through the pushed context address
    (issue 8), made when a pipeline first needs it; 0 when it cannot be had."""
    if module.context_tried or device.context_offset is None:
        return module.context_shadow
    module.context_tried = True
    from gpuav.instrument.descriptor_state import PushConstantAddress

    instrumented = instrument_words(
        device,
        list(module.words),
        module.shader_id,
        context_address=PushConstantAddress(device.context_offset),
    )
    if instrumented is not None:
        try:
            module.context_shadow = device.calls.create_shader_module(instrumented)
        except Exception as error:
            from gpuav.layer.command_buffers import degrade

            degrade(device, f"shader module creation: {error}")
    return module.context_shadow


def pre_call_record_destroy_shader_module(device: DeviceState, handle: int) -> None:
    """Drop the module's state; pipeline trackers keep their own copy of the words."""
    state = device.shader_modules.pop(handle, None)
    if state is not None:
        for shadow in (state.shadow, state.context_shadow):
            if shadow:
                device.calls.destroy_shader_module(shadow)
