"""Static validation at vkCreateShaderModule, against what the device was created with.

Each diagnostic of ``gpuav.validate`` becomes one message (id = the rule's VUID) through the
instance's reporter; the app's shader is passed on unchanged whatever is found. The result is
cached by the module's words and the device's environment, so creating the same module again
costs a hash, and ``module_intake`` asking again before instrumenting costs the same; with the
module cache on, the result is also kept on disk beside the instrumentation's
(``module_cache``), so a later process validating the same words reads nothing. The
module read for validation is handed on to that instrumentation (``shader_code``): each
module is read once. ``GPUAV_VALIDATE_SHADERS=0`` turns the check off (the intake then only
reads the module).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from gpuav.errors import GpuavError
from gpuav.layer.reporting import LayerMessage, Reporter, internal_error_message
from gpuav.layer.shader_code import ShaderCode
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.target_envs import TARGET_ENVS

if TYPE_CHECKING:
    from gpuav.layer.module_cache import ModuleCache

SETTING = "GPUAV_VALIDATE_SHADERS"
INVALID_SPIRV_RULE = "VUID-VkShaderModuleCreateInfo-pCode-08736"
CACHED_RESULTS = 4096  # a few hundred bytes each; an app with many modules keeps them all


@dataclass(frozen=True)
class ShaderEnvironment:
    """What a device enabled at creation: the validator's view of it. ``limits`` are
    VkPhysicalDeviceLimits names and values (empty when the front end did not give them).
    Its hash is made once: every module creation looks results up by it."""

    target_env: str
    features: frozenset[str]
    extensions: frozenset[str]
    limits: tuple[tuple[str, int], ...] = ()

    def __hash__(self) -> int:
        return self._hash

    @cached_property
    def _hash(self) -> int:
        return hash((self.target_env, self.features, self.extensions, self.limits))


# Environments by device handle, recorded at vkCreateDevice, and the module caches.
_ENVIRONMENTS: dict[int, ShaderEnvironment] = {}
_CACHES: dict[int, ModuleCache] = {}


def validation_enabled() -> bool:
    return os.environ.get(SETTING, "1").strip().lower() not in ("0", "false", "off", "no")


def target_env_for(api_version: int) -> str:
    """``vulkan1.x`` for a packed VK_MAKE_API_VERSION, capped at the newest we know."""
    environment = f"vulkan1.{(api_version >> 12) & 0x3FF}"
    return environment if environment in TARGET_ENVS else TARGET_ENVS[-1]


def post_call_record_create_device(
    device: int, environment: ShaderEnvironment, cache: ModuleCache | None = None
) -> None:
    if validation_enabled():
        _ENVIRONMENTS[device] = environment
        if cache is not None:
            _CACHES[device] = cache


def has_environment(device: int) -> bool:
    return device in _ENVIRONMENTS


def environment_of(device: int) -> ShaderEnvironment | None:
    """What the device's modules are validated against (None: not validated)."""
    return _ENVIRONMENTS.get(device)


def pre_call_record_destroy_device(device: int) -> None:
    _ENVIRONMENTS.pop(device, None)
    _CACHES.pop(device, None)


def pre_call_validate_create_shader_module(
    device: int,
    words: Sequence[int] | ShaderCode,
    reporter: Reporter,
    module_name: str = "a shader module",
    command: str = "vkCreateShaderModule",
) -> list[Diagnostic]:
    """Report every broken rule of the module (its words, or its code as the native layer
    read it); never raises. Returns the diagnostics."""
    environment = _ENVIRONMENTS.get(device)
    if environment is None:
        return []
    try:
        code = ShaderCode.of(words)
        diagnostics = _validate_cached(code, environment, _CACHES.get(device))
        code.hand_on()
    except Exception as error:  # the shader is passed on whatever happens here
        reporter.emit(internal_error_message("shader validation", error))
        return []
    for diagnostic in diagnostics:
        reporter.emit(message_for(diagnostic, module_name, command))
    return list(diagnostics)


def diagnostics_for(
    device: int, code: ShaderCode, added_features: frozenset[str] = frozenset()
) -> tuple[Diagnostic, ...] | None:
    """The module's diagnostics for the device (cached), with ``added_features`` enabled too,
    or None when the device's environment is unknown. Raises only what the validator itself
    cannot turn into a diagnostic. A module read here stays with ``code``."""
    environment = _ENVIRONMENTS.get(device)
    if environment is None:
        return None
    if added_features - environment.features:
        environment = replace(environment, features=environment.features | added_features)
    return _validate_cached(code, environment, _CACHES.get(device))


def known_diagnostics(device: int, code: ShaderCode) -> tuple[Diagnostic, ...] | None:
    """The module's diagnostics for the device when they are at hand (validated already in
    this process), else None; validates nothing."""
    environment = _ENVIRONMENTS.get(device)
    return None if environment is None else _RESULTS.get((code.digest, environment))


def recall_diagnostics(device: int, code: ShaderCode, diagnostics: tuple[Diagnostic, ...]) -> None:
    """Take the module's diagnostics for the device from where they were kept with its
    instrumentation (``module_cache``): validating it then reads no file of its own."""
    environment = _ENVIRONMENTS.get(device)
    if environment is not None:
        _remember((code.digest, environment), diagnostics)


def message_for(
    diagnostic: Diagnostic, module_name: str, command: str = "vkCreateShaderModule"
) -> LayerMessage:
    where = ""
    if diagnostic.instruction_index is not None:
        where = f" (instruction {diagnostic.instruction_index})"
    return LayerMessage(
        message_id=diagnostic.rule,
        severity=diagnostic.severity.value,
        text=f"{command}: {module_name}{where}: {diagnostic.message}",
    )


# Results by (digest of the words, environment); cleared when full.
_RESULTS: dict[tuple[bytes, ShaderEnvironment], tuple[Diagnostic, ...]] = {}


def _validate_cached(
    code: ShaderCode, environment: ShaderEnvironment, cache: ModuleCache | None
) -> tuple[Diagnostic, ...]:
    key = (code.digest, environment)
    found = _RESULTS.get(key)
    if found is None:
        found = _validate_kept(code, environment, cache) if cache else _validate(code, environment)
        _remember(key, found)
    return found


def _remember(key: tuple[bytes, ShaderEnvironment], diagnostics: tuple[Diagnostic, ...]) -> None:
    if len(_RESULTS) >= CACHED_RESULTS:
        _RESULTS.clear()
    _RESULTS[key] = diagnostics


def _validate_kept(
    code: ShaderCode, environment: ShaderEnvironment, cache: ModuleCache
) -> tuple[Diagnostic, ...]:
    """The diagnostics kept on disk for the words, or found and kept now."""
    import json

    from gpuav.layer.module_cache import diagnostics_of, rows_of, validation_key

    key = validation_key(code.digest, environment)
    payload = cache.disk.load(key)
    if payload is not None:
        try:
            return diagnostics_of(json.loads(bytes(payload)))
        except (ValueError, TypeError):
            pass  # not what this version writes: validated again and written anew
    found = _validate(code, environment)
    cache.disk.store(key, json.dumps(rows_of(found)).encode())
    return found


def _validate(code: ShaderCode, environment: ShaderEnvironment) -> tuple[Diagnostic, ...]:
    from gpuav.validate.api import validate_module

    try:
        return tuple(
            validate_module(
                code.module(),
                target_env=environment.target_env,
                features=environment.features,
                extensions=environment.extensions,
                limits=dict(environment.limits),
            )
        )
    except GpuavError as error:  # words that are not SPIR-V at all
        return (Diagnostic(INVALID_SPIRV_RULE, str(error)),)
