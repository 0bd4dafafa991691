"""The validator's entry point: every rule family over one module (its words, or the module
already read), never raising.

A family that fails on a module it did not expect becomes a ``GPUAV-validator-internal-error``
diagnostic instead of an exception, so the layer (on the shader-creation path) and the CLI
always get an answer; only words that cannot be read at all raise ``DecodeError``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterable, Iterator, Mapping, Sequence

from gpuav.spirv import read
from gpuav.spirv.module import Module
from gpuav.validate import (
    rules_atomics,
    rules_block_layout,
    rules_builtins,
    rules_capabilities,
    rules_decorations,
    rules_execution,
    rules_float_controls,
    rules_grammar_versions,
    rules_groups,
    rules_image_operands,
    rules_images,
    rules_interface,
    rules_memory,
    rules_nonuniform,
    rules_pointers,
    rules_push_constants,
    rules_resources,
    rules_storage,
)
from gpuav.validate.context import RuleFamily, ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.target_envs import TARGET_ENVS

INTERNAL_ERROR_RULE = "GPUAV-validator-internal-error"

# Every rule family, in the order their diagnostics are reported. A new family adds its
# ``check`` here (one line).
RULE_FAMILIES: tuple[RuleFamily, ...] = (
    rules_capabilities.check,
    rules_grammar_versions.check,
    rules_images.check,
    rules_image_operands.check,
    rules_decorations.check,
    rules_resources.check,
    rules_block_layout.check,
    rules_push_constants.check,
    rules_groups.check,
    rules_builtins.check,
    rules_execution.check,
    rules_memory.check,
    rules_storage.check,
    rules_pointers.check,
    rules_atomics.check,
    rules_float_controls.check,
    rules_interface.check,
    rules_nonuniform.check,
)


def validate(
    words_or_module: Module | bytes | bytearray | memoryview | Sequence[int],
    *,
    target_env: str = "vulkan1.1",
    features: Iterable[str] = (),
    extensions: Iterable[str] = (),
    limits: Mapping[str, int] | None = None,
    families: Iterable[RuleFamily] | None = None,
) -> list[Diagnostic]:
    """Diagnostics of every rule family (or of ``families``), module-wide ones first, then in
    instruction order. Raises ``DecodeError`` only when the words are not a SPIR-V module and
    ``ValueError`` for an unknown ``target_env``."""
    _check_target_env(target_env)
    module = words_or_module if isinstance(words_or_module, Module) else read(words_or_module)
    return validate_module(
        module,
        target_env=target_env,
        features=features,
        extensions=extensions,
        limits=limits,
        families=families,
    )


def validate_module(
    module: Module,
    *,
    target_env: str = "vulkan1.1",
    features: Iterable[str] = (),
    extensions: Iterable[str] = (),
    limits: Mapping[str, int] | None = None,
    families: Iterable[RuleFamily] | None = None,
) -> list[Diagnostic]:
    """``validate`` for a module already read (the layer reads each module once). The module
    is only read: it is the same, word for word, afterwards, and the diagnostics refer to
    nothing in it, so a pass may change it once this returns."""
    _check_target_env(target_env)
    context = ValidationContext(
        module,
        target_env=target_env,
        features=frozenset(features),
        extensions=frozenset(extensions),
        limits=dict(limits or {}),
    )
    diagnostics: list[Diagnostic] = []
    with _collector_paused():
        for family in RULE_FAMILIES if families is None else families:
            diagnostics.extend(run_family(family, context))
    diagnostics.sort(key=_position)
    return diagnostics


def _check_target_env(target_env: str) -> None:
    if target_env not in TARGET_ENVS:
        raise ValueError(f"unknown target environment {target_env!r}; one of {TARGET_ENVS}")


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic-garbage collection while the analyses and families run.

    They allocate many short-lived containers (refcounting frees them), and each young
    collection would also traverse the module's instructions: about a sixth of the time on
    small modules. Cyclic garbage made meanwhile waits for the next collection.
    """
    enabled = gc.isenabled()
    if enabled:
        gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def run_family(family: RuleFamily, context: ValidationContext) -> list[Diagnostic]:
    """The family's diagnostics; an exception it raises becomes one more diagnostic."""
    found: list[Diagnostic] = []
    try:
        found.extend(family(context))
    except Exception as error:  # validation must answer, whatever the module
        name = f"{getattr(family, '__module__', '?')}.{getattr(family, '__qualname__', family)}"
        found.append(
            Diagnostic(
                INTERNAL_ERROR_RULE,
                f"rule family {name} failed on this module ({type(error).__name__}: {error}); "
                "its other rules were not checked",
            )
        )
    return found


def _position(diagnostic: Diagnostic) -> tuple[int, int]:
    index = diagnostic.instruction_index
    return (0, 0) if index is None else (1, index)
