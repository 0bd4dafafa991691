"""Which modules may be instrumented (issue 13): only those gpuav can vouch for.

Drivers assume valid SPIR-V. An invalid module that a driver happens to survive may stop
surviving once the pass has rewritten it, so before instrumenting, a module must read, must
be free of errors in gpuav's own validator against the device's environment, must have no
loop that can never be left, and must keep its id bound within SPIR-V's universal limit after
the pass added its ids. Any other module
goes to the driver exactly as the app gave it, with one notice saying why. A module let in
is the one read for validation (``shader_code``): the words are read once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuav.errors import GpuavError
from gpuav.layer import shader_validation
from gpuav.layer.shader_code import ShaderCode
from gpuav.validate.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from gpuav.spirv.module import Module

# SPIR-V specification, 2.17 "Universal Limits": the largest id bound a module may declare
# (spirv-val: "The id bound is larger than the max id bound 4194303").
MAX_ID_BOUND = 4_194_303
MAGIC_NUMBER = 0x07230203
HEADER_WORDS = 5
_NAMED_RULES = 3


def header_bound(words: Sequence[int]) -> int:
    """The id bound of the header, in either byte order (the reader takes both)."""
    if words[0] == MAGIC_NUMBER:
        return int(words[3])
    return int.from_bytes(int(words[3]).to_bytes(4, "little"), "big")


@dataclass(frozen=True)
class Refused:
    """Why a module must not be instrumented (the notice's reason)."""

    reason: str


def admit(
    device: int, words: Sequence[int] | ShaderCode, driver_features: frozenset[str] = frozenset()
) -> Module | Refused:
    """The module read from ``words``, for the pass to change, or why it must not be
    instrumented. ``driver_features`` are features the layer enabled for itself: the app did
    not, but the driver has them, so a module that needs them is valid where it runs (it is
    validated again with them only when it has errors without)."""
    code = ShaderCode.of(words)
    words = code.words
    if len(words) < HEADER_WORDS:
        return Refused("it is shorter than a SPIR-V header")
    bound = header_bound(words)
    if bound > MAX_ID_BOUND:
        return Refused(
            f"its id bound {bound} is above SPIR-V's universal limit of {MAX_ID_BOUND} ids "
            "(SPIR-V 2.17)"
        )
    # No environment recorded for the device: not judged, but it must read, at least.
    diagnostics = shader_validation.diagnostics_for(device, code)
    if diagnostics is not None:
        refusal = _refusal_for(device, code, diagnostics, driver_features)
        if refusal is not None:
            return Refused(refusal)
    try:
        module = code.take_module()
    except GpuavError as error:
        return Refused(f"it cannot be read as SPIR-V ({error})")
    from gpuav.spirv.analysis.endless_loops import endless_loops  # not needed at start-up

    endless = endless_loops(module)
    if endless:
        return Refused(
            f"the loop at block %{endless[0]} can never be left; a driver may drop such a loop, "
            "but the checks gpuav puts in it would make it run forever"
        )
    return module


def refusal_before(
    device: int, words: Sequence[int] | ShaderCode, driver_features: frozenset[str] = frozenset()
) -> str | None:
    """Why the module must not be instrumented, or None when it may be (``admit``)."""
    admitted = admit(device, words, driver_features)
    return admitted.reason if isinstance(admitted, Refused) else None


def _refusal_for(
    device: int,
    code: ShaderCode,
    diagnostics: Sequence[Diagnostic],
    driver_features: frozenset[str],
) -> str | None:
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors and driver_features:
        with_driver_features = shader_validation.diagnostics_for(device, code, driver_features)
        errors = [d for d in with_driver_features or () if d.severity is Severity.ERROR]
    unreadable = [d for d in errors if d.rule == shader_validation.INVALID_SPIRV_RULE]
    if unreadable:
        return f"it cannot be read as SPIR-V ({unreadable[0].message})"
    if errors:
        rules = sorted({d.rule for d in errors})
        named = ", ".join(rules[:_NAMED_RULES]) + (", ..." if len(rules) > _NAMED_RULES else "")
        return (
            f"gpuav's validator finds {len(errors)} error{'s' if len(errors) > 1 else ''} "
            f"in it for this device ({named})"
        )
    return None


def refusal_after(instrumented: Sequence[int]) -> str | None:
    """Why the instrumented words must not be used, or None (the writer's byte order)."""
    bound = int(instrumented[3])
    if bound > MAX_ID_BOUND:
        return (
            f"with the ids instrumentation adds, its id bound would be {bound}, above SPIR-V's "
            f"universal limit of {MAX_ID_BOUND} ids (SPIR-V 2.17)"
        )
    return None
