"""Which modules may be instrumented (issue 13): only those gpuav can vouch for.

Drivers assume valid SPIR-V. An invalid module that a driver happens to survive may stop
surviving once the pass has rewritten it, so before instrumenting, a module must read, must
be free of errors in gpuav's own validator against the device's environment, and must keep
its id bound within SPIR-V's universal limit after the pass added its ids. Any other module
goes to the driver exactly as the app gave it, with one notice saying why.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuav.errors import GpuavError
from gpuav.layer import shader_validation
from gpuav.layer.state import DeviceState
from gpuav.spirv.reader import read
from gpuav.validate.diagnostics import Severity

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


def refusal_before(
    device: int, words: Sequence[int], driver_features: frozenset[str] = frozenset()
) -> str | None:
    """Why the module must not be instrumented, or None when it may be. ``driver_features``
    are features the layer enabled for itself: the app did not, but the driver has them, so
    a module that needs them is valid where it runs (it is validated again with them only
    when it has errors without)."""
    if len(words) < HEADER_WORDS:
        return "it is shorter than a SPIR-V header"
    bound = header_bound(words)
    if bound > MAX_ID_BOUND:
        return (
            f"its id bound {bound} is above SPIR-V's universal limit of {MAX_ID_BOUND} ids "
            "(SPIR-V 2.17)"
        )
    diagnostics = shader_validation.diagnostics_for(device, words)
    if diagnostics is None:  # no environment recorded for the device: it must read, at least
        try:
            read(words)
        except GpuavError as error:
            return f"it cannot be read as SPIR-V ({error})"
        return None
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors and driver_features:
        with_driver_features = shader_validation.diagnostics_for(device, words, driver_features)
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


def layer_enabled_features(device: DeviceState) -> frozenset[str]:
    """The features ``device_setup`` turned on for the layer's own shaders."""
    names = set()
    if device.facts.fragment_stores_and_atomics:
        names.add("fragmentStoresAndAtomics")
    if device.facts.vertex_pipeline_stores_and_atomics:
        names.add("vertexPipelineStoresAndAtomics")
    if device.context_offset is not None:  # issue 8's device-address path
        names |= {"bufferDeviceAddress", "shaderInt64"}
    return frozenset(names)


def refusal_after(instrumented: Sequence[int]) -> str | None:
    """Why the instrumented words must not be used, or None (the writer's byte order)."""
    bound = int(instrumented[3])
    if bound > MAX_ID_BOUND:
        return (
            f"with the ids instrumentation adds, its id bound would be {bound}, above SPIR-V's "
            f"universal limit of {MAX_ID_BOUND} ids (SPIR-V 2.17)"
        )
    return None
