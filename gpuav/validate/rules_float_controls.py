"""Float-controls execution modes against the device's float-controls support
(VK_KHR_shader_float_controls, Vulkan 1.2).

Each DenormPreserve, DenormFlushToZero, SignedZeroInfNanPreserve, RoundingModeRTE and
RoundingModeRTZ mode names a float width; the device says per width whether it supports it
(``shaderDenormPreserveFloat16`` ...). Those are VkPhysicalDeviceFloatControlsProperties
members, so they are read from ``features`` or from nonzero ``limits``. When neither names
any of them the device's float-controls support is unknown (a feature list from device
creation carries no properties) and the per-width rules are not checked rather than reported
for every shader. The independence properties (``denormBehaviorIndependence``,
``roundingModeIndependence``) are enums read from ``limits``; when absent they are not checked.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gpuav.spirv.grammar import ExecutionMode as Mode
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.shader_facts import enabled

# mode -> (feature prefix, {width: VUID})
_FEATURES: dict[int, tuple[str, dict[int, str]]] = {
    Mode.SignedZeroInfNanPreserve: (
        "shaderSignedZeroInfNanPreserveFloat",
        {
            16: "VUID-RuntimeSpirv-shaderSignedZeroInfNanPreserveFloat16-06293",
            32: "VUID-RuntimeSpirv-shaderSignedZeroInfNanPreserveFloat32-06294",
            64: "VUID-RuntimeSpirv-shaderSignedZeroInfNanPreserveFloat64-06295",
        },
    ),
    Mode.DenormPreserve: (
        "shaderDenormPreserveFloat",
        {
            16: "VUID-RuntimeSpirv-shaderDenormPreserveFloat16-06296",
            32: "VUID-RuntimeSpirv-shaderDenormPreserveFloat32-06297",
            64: "VUID-RuntimeSpirv-shaderDenormPreserveFloat64-06298",
        },
    ),
    Mode.DenormFlushToZero: (
        "shaderDenormFlushToZeroFloat",
        {
            16: "VUID-RuntimeSpirv-shaderDenormFlushToZeroFloat16-06299",
            32: "VUID-RuntimeSpirv-shaderDenormFlushToZeroFloat32-06300",
            64: "VUID-RuntimeSpirv-shaderDenormFlushToZeroFloat64-06301",
        },
    ),
    Mode.RoundingModeRTE: (
        "shaderRoundingModeRTEFloat",
        {
            16: "VUID-RuntimeSpirv-shaderRoundingModeRTEFloat16-06302",
            32: "VUID-RuntimeSpirv-shaderRoundingModeRTEFloat32-06303",
            64: "VUID-RuntimeSpirv-shaderRoundingModeRTEFloat64-06304",
        },
    ),
    Mode.RoundingModeRTZ: (
        "shaderRoundingModeRTZFloat",
        {
            16: "VUID-RuntimeSpirv-shaderRoundingModeRTZFloat16-06305",
            32: "VUID-RuntimeSpirv-shaderRoundingModeRTZFloat32-06306",
            64: "VUID-RuntimeSpirv-shaderRoundingModeRTZFloat64-06307",
        },
    ),
}
MODE_NAMES = {
    Mode.SignedZeroInfNanPreserve: "SignedZeroInfNanPreserve",
    Mode.DenormPreserve: "DenormPreserve",
    Mode.DenormFlushToZero: "DenormFlushToZero",
    Mode.RoundingModeRTE: "RoundingModeRTE",
    Mode.RoundingModeRTZ: "RoundingModeRTZ",
}
DENORM_16_64 = "VUID-RuntimeSpirv-denormBehaviorIndependence-06289"
DENORM_ALL = "VUID-RuntimeSpirv-denormBehaviorIndependence-06290"
ROUNDING_16_64 = "VUID-RuntimeSpirv-roundingModeIndependence-06291"
ROUNDING_ALL = "VUID-RuntimeSpirv-roundingModeIndependence-06292"
# VkShaderFloatControlsIndependence
INDEPENDENCE_32_BIT_ONLY = 0
INDEPENDENCE_ALL = 1
INDEPENDENCE_NONE = 2

_DENORM_MODES = (Mode.DenormPreserve, Mode.DenormFlushToZero)
_ROUNDING_MODES = (Mode.RoundingModeRTE, Mode.RoundingModeRTZ)


def feature_name(mode: int, width: int) -> str:
    """The device property that allows ``mode`` for floats of ``width`` bits."""
    return f"{_FEATURES[mode][0]}{width}"


def rule_for(mode: int, width: int) -> str:
    """The VUID broken by ``mode`` for ``width``-bit floats without its property."""
    return _FEATURES[mode][1][width]


ALL_PROPERTIES = frozenset(
    f"{prefix}{width}" for prefix, _rules in _FEATURES.values() for width in (16, 32, 64)
)


def support_known(context: ValidationContext) -> bool:
    """Whether the caller said anything about float-controls support."""
    return any(name in context.features or name in context.limits for name in ALL_PROPERTIES)


def check(context: ValidationContext) -> Iterable[Diagnostic]:
    known = support_known(context)
    # entry function id -> kind ("denorm"/"rounding") -> width -> (mode, instruction)
    chosen: dict[int, dict[str, dict[int, tuple[int, Instruction]]]] = {}
    for instruction in context.module.execution_modes:
        operands = instruction.operands
        if len(operands) < 3 or operands[1] not in _FEATURES:
            continue
        function, mode, width = operands[0], operands[1], operands[2]
        rules = _FEATURES[mode][1]
        if width not in rules:
            continue
        feature = feature_name(mode, width)
        if known and not enabled(context, feature):
            yield Diagnostic(
                rules[width],
                f"{MODE_NAMES[mode]} for {width}-bit floats needs {feature}",
                instruction.origin,
            )
        kind = "denorm" if mode in _DENORM_MODES else "rounding" if mode in _ROUNDING_MODES else ""
        if kind:
            chosen.setdefault(function, {}).setdefault(kind, {})[width] = (mode, instruction)
    for entry in context.module.entry_points:
        if len(entry.operands) < 2:
            continue
        per_kind = chosen.get(entry.operands[1], {})
        yield from _independence(
            context, entry, per_kind.get("denorm", {}), "denormBehaviorIndependence"
        )
        yield from _independence(
            context, entry, per_kind.get("rounding", {}), "roundingModeIndependence"
        )


def _independence(
    context: ValidationContext,
    entry: Instruction,
    modes: dict[int, tuple[int, Instruction]],
    limit: str,
) -> Iterator[Diagnostic]:
    """With 32_BIT_ONLY independence, 16- and 64-bit floats share one mode; with NONE every
    width does. A width without a mode counts as its own (default) choice."""
    independence = context.limits.get(limit)
    if independence is None or not modes:
        return
    denorm = limit == "denormBehaviorIndependence"
    widths: tuple[int, ...]
    if independence == INDEPENDENCE_32_BIT_ONLY:
        widths, rule = (16, 64), DENORM_16_64 if denorm else ROUNDING_16_64
    elif independence == INDEPENDENCE_NONE:
        widths, rule = (16, 32, 64), DENORM_ALL if denorm else ROUNDING_ALL
    else:
        return
    choices = {width: modes[width][0] if width in modes else None for width in widths}
    if len(set(choices.values())) > 1:
        described = ", ".join(
            f"{width}-bit {MODE_NAMES[mode] if mode is not None else 'default'}"
            for width, mode in choices.items()
        )
        kind = "denormal" if denorm else "rounding"
        yield Diagnostic(
            rule,
            f"entry point {entry.string(2)!r} uses different {kind} modes ({described}) but "
            f"{limit} requires them to match",
            entry.origin,
        )
