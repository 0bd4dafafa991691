"""Location rules over the interface tables: missing Locations, overlaps, device limits.

Limits follow the Vulkan "Shader Input and Output Locations" table: a component limit allows
limit / 4 locations, the vertex input and fragment output limits count locations directly. A
limit that is not known (absent from ``limits``) is not checked.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpuav.spirv.grammar import ExecutionModel, StorageClass
from gpuav.validate.diagnostics import Diagnostic, Severity
from gpuav.validate.interface import EntryPointInterface, InterfaceVariable

LOCATION_LIMIT_RULE = "VUID-RuntimeSpirv-Location-06272"
# A variable whose slots cannot be counted statically (a specialization-constant array length).
UNCOUNTED_RULE = "GPUAV-Interface-uncounted"

# (execution model, storage class, patch) -> (limit name, counts components)
STAGE_LIMITS: dict[tuple[int, int, bool], tuple[str, bool]] = {
    (ExecutionModel.Vertex, StorageClass.Input, False): ("maxVertexInputAttributes", False),
    (ExecutionModel.Vertex, StorageClass.Output, False): ("maxVertexOutputComponents", True),
    (ExecutionModel.TessellationControl, StorageClass.Input, False): (
        "maxTessellationControlPerVertexInputComponents",
        True,
    ),
    (ExecutionModel.TessellationControl, StorageClass.Output, False): (
        "maxTessellationControlPerVertexOutputComponents",
        True,
    ),
    (ExecutionModel.TessellationControl, StorageClass.Output, True): (
        "maxTessellationControlPerPatchOutputComponents",
        True,
    ),
    (ExecutionModel.TessellationEvaluation, StorageClass.Input, False): (
        "maxTessellationEvaluationInputComponents",
        True,
    ),
    # The limits table has no row of its own for patch inputs: they are what the control
    # stage's patch outputs wrote, so that limit bounds them.
    (ExecutionModel.TessellationEvaluation, StorageClass.Input, True): (
        "maxTessellationControlPerPatchOutputComponents",
        True,
    ),
    (ExecutionModel.TessellationEvaluation, StorageClass.Output, False): (
        "maxTessellationEvaluationOutputComponents",
        True,
    ),
    (ExecutionModel.Geometry, StorageClass.Input, False): ("maxGeometryInputComponents", True),
    (ExecutionModel.Geometry, StorageClass.Output, False): ("maxGeometryOutputComponents", True),
    (ExecutionModel.Fragment, StorageClass.Input, False): ("maxFragmentInputComponents", True),
    (ExecutionModel.Fragment, StorageClass.Output, False): ("maxFragmentOutputAttachments", False),
}

# The minimums every Vulkan implementation supports (Vulkan "Required Limits"), used only
# when the caller asks for them.
VULKAN_MINIMUM_LIMITS: dict[str, int] = {
    "maxVertexInputAttributes": 16,
    "maxVertexOutputComponents": 64,
    "maxTessellationControlPerVertexInputComponents": 64,
    "maxTessellationControlPerVertexOutputComponents": 64,
    "maxTessellationControlPerPatchOutputComponents": 120,
    "maxTessellationEvaluationInputComponents": 64,
    "maxTessellationEvaluationOutputComponents": 64,
    "maxGeometryInputComponents": 64,
    "maxGeometryOutputComponents": 64,
    "maxFragmentInputComponents": 64,
    "maxFragmentOutputAttachments": 4,
    # VK_EXT_transform_feedback
    "maxTransformFeedbackStreams": 1,
    "maxTransformFeedbackBuffers": 1,
    "maxTransformFeedbackBufferDataSize": 512,
    "maxTransformFeedbackStreamDataSize": 512,
    "maxTransformFeedbackBufferDataStride": 512,
}


def _storage_name(storage_class: int) -> str:
    return "input" if storage_class == StorageClass.Input else "output"


def _label(variable: InterfaceVariable) -> str:
    return f"'{variable.name}'" if variable.name else f"%{variable.variable}"


def location_diagnostics(
    entry: EntryPointInterface, limits: Mapping[str, int]
) -> Iterator[Diagnostic]:
    for variable in entry.variables:
        yield from _decoration_rules(entry, variable)
    for storage_class, rule in (
        (StorageClass.Input, "VUID-StandaloneSpirv-OpEntryPoint-08721"),
        (StorageClass.Output, "VUID-StandaloneSpirv-OpEntryPoint-08722"),
    ):
        yield from _overlaps(entry, storage_class, rule)
    yield from _limits(entry, limits)


def _decoration_rules(
    entry: EntryPointInterface, variable: InterfaceVariable
) -> Iterator[Diagnostic]:
    where = f"{_storage_name(variable.storage_class)} {_label(variable)} of '{entry.name}'"
    index = variable.instruction_index
    if variable.builtin:
        return
    if variable.members_without_location:
        members = ", ".join(str(member) for member in variable.members_without_location)
        yield Diagnostic(
            "VUID-StandaloneSpirv-Location-04919",
            f"{where} has no Location and block members {members} have none either",
            index,
        )
    elif variable.missing_location:
        yield Diagnostic(
            "VUID-StandaloneSpirv-Location-04916",
            f"{where} is a user-defined interface variable without a Location decoration",
            index,
        )
    if variable.uncounted is not None:
        yield Diagnostic(
            UNCOUNTED_RULE,
            f"{where}: locations not counted ({variable.uncounted})",
            index,
            Severity.WARNING,
        )
    if variable.members_with_location:
        yield Diagnostic(
            "VUID-StandaloneSpirv-Location-04918",
            f"{where} has a Location, so its members must not have one "
            f"(members {', '.join(map(str, variable.members_with_location))} do)",
            index,
        )
    if variable.component is not None and variable.component > 3:
        yield Diagnostic(
            "VUID-StandaloneSpirv-Component-04920",
            f"{where} has Component {variable.component}, more than 3",
            index,
        )
    elif variable.component_rule is not None:
        yield Diagnostic(
            variable.component_rule,
            f"{where}: Component {variable.component} does not fit its type in one location",
            index,
        )


def _space(variable: InterfaceVariable) -> tuple[bool, int]:
    return variable.patch, variable.index


def _overlaps(entry: EntryPointInterface, storage_class: int, rule: str) -> Iterator[Diagnostic]:
    owners: dict[tuple[tuple[bool, int], int, int], InterfaceVariable] = {}
    reported: set[tuple[int, int]] = set()
    for variable in entry.user(storage_class):
        for location, component in variable.slots:
            key = (_space(variable), location, component)
            other = owners.setdefault(key, variable)
            if other is variable or (other.variable, variable.variable) in reported:
                continue
            reported.add((other.variable, variable.variable))
            yield Diagnostic(
                rule,
                f"{_storage_name(storage_class)}s {_label(other)} and {_label(variable)} of "
                f"'{entry.name}' both use Location {location} Component {component}",
                variable.instruction_index,
            )


def _limits(entry: EntryPointInterface, limits: Mapping[str, int]) -> Iterator[Diagnostic]:
    for (model, storage_class, patch), (limit_name, components) in STAGE_LIMITS.items():
        if model != entry.execution_model or limit_name not in limits:
            continue
        limit = limits[limit_name]
        allowed = limit // 4 if components else limit
        variables = [v for v in entry.user(storage_class) if v.patch == patch]
        for variable in variables:
            if not variable.slots:
                continue
            end = max(location for location, _ in variable.slots) + 1
            if end > allowed:
                used = sum(v.components_used for v in variables)
                yield Diagnostic(
                    LOCATION_LIMIT_RULE,
                    f"{_storage_name(storage_class)} {_label(variable)} of '{entry.name}' "
                    f"({entry.model_name}) reaches location {end - 1}, but {limit_name} = "
                    f"{limit} allows locations 0..{allowed - 1}; the "
                    f"{'patch ' if patch else ''}{_storage_name(storage_class)}s use "
                    f"{used} components in all",
                    variable.instruction_index,
                )
