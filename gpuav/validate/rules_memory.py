"""Scopes and memory semantics: the memory-model rules of the Vulkan environment for SPIR-V.

Which operand of an instruction is a scope or a semantics comes from the grammar (operand kinds
``IdScope`` and ``IdMemorySemantics``); whether a scope is an execution or a memory scope
follows the instruction class: barriers name both, atomics name memory scopes, group
operations an execution scope. Only constant operands are checked; a specialization constant's
value is not known before pipeline creation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import Enum

from gpuav.spirv.grammar import INSTRUCTIONS, Capability, MemoryModel, Op, Scope
from gpuav.spirv.grammar import ExecutionModel as Model
from gpuav.spirv.grammar import MemorySemantics as Semantics
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic, Severity
from gpuav.validate.reach import (
    RAY_TRACING_MODELS,
    WORKGROUP_MEMORY_MODELS,
    instructions_with_function,
    reach,
)
from gpuav.validate.shader_facts import constant_u32, enabled, enum_name

EXECUTION_SCOPE = "VUID-StandaloneSpirv-None-04636"
EXECUTION_SCOPE_WORKGROUP_STAGE = "VUID-StandaloneSpirv-None-04637"
CONTROL_BARRIER_STAGE = "VUID-StandaloneSpirv-OpControlBarrier-04682"
GROUP_OPERATION_SCOPE = "VUID-StandaloneSpirv-None-04642"
MEMORY_SCOPE = "VUID-StandaloneSpirv-None-04638"
MEMORY_SCOPE_WORKGROUP_TESC_GLSL = "VUID-StandaloneSpirv-ExecutionModel-07320"
MEMORY_SCOPE_WORKGROUP_STAGE = "VUID-StandaloneSpirv-None-07321"
MEMORY_SCOPE_SHADER_CALL = "VUID-StandaloneSpirv-None-04640"
MEMORY_SCOPE_INVOCATION = "VUID-StandaloneSpirv-None-04641"
MEMORY_SCOPE_SUBGROUP_CAPABILITY = "VUID-StandaloneSpirv-SubgroupVoteKHR-07951"
DEVICE_SCOPE_FEATURE = "VUID-RuntimeSpirv-vulkanMemoryModel-06265"
QUEUE_FAMILY_SCOPE_FEATURE = "VUID-RuntimeSpirv-vulkanMemoryModel-06266"
READ_CLOCK_SCOPE = "VUID-StandaloneSpirv-OpReadClockKHR-04652"
SUBGROUP_CLOCK_FEATURE = "VUID-RuntimeSpirv-shaderSubgroupClock-06267"
DEVICE_CLOCK_FEATURE = "VUID-RuntimeSpirv-shaderDeviceClock-06268"
ONE_ORDER = "VUID-StandaloneSpirv-MemorySemantics-10865"
SEQUENTIALLY_CONSISTENT = "VUID-StandaloneSpirv-MemorySemantics-10866"
ATOMIC_STORE_ORDER = "VUID-StandaloneSpirv-MemorySemantics-10867"
ATOMIC_LOAD_ORDER = "VUID-StandaloneSpirv-MemorySemantics-10868"
MEMORY_BARRIER_RELAXED = "VUID-StandaloneSpirv-MemorySemantics-10869"
ORDER_NEEDS_STORAGE = "VUID-StandaloneSpirv-MemorySemantics-10870"
STORAGE_NEEDS_ORDER = "VUID-StandaloneSpirv-MemorySemantics-10871"
MAKE_AVAILABLE_ORDER = "VUID-StandaloneSpirv-MemorySemantics-10872"
MAKE_VISIBLE_ORDER = "VUID-StandaloneSpirv-MemorySemantics-10873"
BARRIER_VOLATILE = "VUID-StandaloneSpirv-MemorySemantics-10874"
UNEQUAL_RELEASE = "VUID-StandaloneSpirv-UnequalMemorySemantics-10875"
UNEQUAL_STRONGER = "VUID-StandaloneSpirv-UnequalMemorySemantics-10876"
UNEQUAL_STORAGE = "VUID-StandaloneSpirv-UnequalMemorySemantics-10877"
UNEQUAL_MAKE_VISIBLE = "VUID-StandaloneSpirv-UnequalMemorySemantics-10878"
UNEQUAL_VOLATILE = "VUID-StandaloneSpirv-UnequalMemorySemantics-10879"


class Role(Enum):
    EXECUTION = "execution scope"
    MEMORY = "memory scope"
    GROUP = "group execution scope"
    CLOCK = "clock scope"
    SEMANTICS = "semantics"
    UNEQUAL = "unequal semantics"


def _roles() -> dict[int, tuple[tuple[int, Role], ...]]:
    """opcode -> (operand position, role) of its scope and semantics operands."""
    table: dict[int, tuple[tuple[int, Role], ...]] = {}
    for opcode, (name, klass, operands, *_rest) in INSTRUCTIONS.items():
        kinds = [kind for kind, _quantifier in operands]
        if "IdScope" not in kinds and "IdMemorySemantics" not in kinds:
            continue
        scopes = [at for at, kind in enumerate(kinds) if kind == "IdScope"]
        semantics = [at for at, kind in enumerate(kinds) if kind == "IdMemorySemantics"]
        roles: list[tuple[int, Role]] = []
        if opcode == Op.ControlBarrier:
            roles += [(scopes[0], Role.EXECUTION), (scopes[1], Role.MEMORY)]
        elif opcode == Op.MemoryBarrier or klass == "Atomic":
            roles += [(at, Role.MEMORY) for at in scopes]
        elif klass in ("Non-Uniform", "Group") and scopes:
            roles.append((scopes[0], Role.GROUP))
        elif name == "OpReadClockKHR":
            roles.append((scopes[0], Role.CLOCK))
        if opcode in (Op.ControlBarrier, Op.MemoryBarrier) or klass == "Atomic":
            roles += [(at, Role.SEMANTICS) for at in semantics[:1]]
            roles += [(at, Role.UNEQUAL) for at in semantics[1:2]]
        if roles:
            table[opcode] = tuple(roles)
    return table


ROLES = _roles()

_ORDERS = Semantics.Acquire | Semantics.Release | Semantics.AcquireRelease
_STORAGE = (
    Semantics.UniformMemory
    | Semantics.WorkgroupMemory
    | Semantics.ImageMemory
    | Semantics.OutputMemory
)
_MEMORY_SCOPES = frozenset(
    {
        Scope.Device,
        Scope.QueueFamily,
        Scope.Workgroup,
        Scope.ShaderCallKHR,
        Scope.Subgroup,
        Scope.Invocation,
    }
)
# Where a Workgroup memory scope means something: workgroup memory, or a control patch.
_WORKGROUP_MODELS = WORKGROUP_MEMORY_MODELS | {Model.TessellationControl}
_SUBGROUP_BARRIER_MODELS = (RAY_TRACING_MODELS - {Model.CallableKHR}) | {
    Model.Fragment,
    Model.Vertex,
    Model.TessellationEvaluation,
    Model.Geometry,
}
_SUBGROUP_CAPABILITIES = frozenset(
    {Capability.SubgroupVoteKHR, Capability.GroupNonUniform, Capability.SubgroupBallotKHR}
)


def check(context: ValidationContext) -> Iterable[Diagnostic]:
    graph = reach(context)
    capabilities = {c.operands[0] for c in context.module.capabilities if c.operands}
    vulkan_model = Capability.VulkanMemoryModel in capabilities or any(
        len(m.operands) > 1 and m.operands[1] == MemoryModel.Vulkan
        for m in context.module.memory_model
    )
    glsl_model = any(
        len(m.operands) > 1 and m.operands[1] == MemoryModel.GLSL450
        for m in context.module.memory_model
    )
    subgroup_capable = bool(capabilities & _SUBGROUP_CAPABILITIES)
    for function, instruction in instructions_with_function(context):
        roles = ROLES.get(instruction.opcode)
        if roles is None:
            continue
        models = graph.models_of(function)
        values: dict[Role, int] = {}
        for position, role in roles:
            if position < len(instruction.operands):
                value = constant_u32(context, instruction.operands[position])
                if value is not None:
                    values[role] = value
        if Role.EXECUTION in values:
            yield from _execution_scope(instruction, values[Role.EXECUTION], models)
        if Role.GROUP in values and values[Role.GROUP] != Scope.Subgroup:
            yield _at(
                instruction,
                GROUP_OPERATION_SCOPE,
                "the scope of a group operation must be "
                f"Subgroup, not {enum_name(Scope, values[Role.GROUP])}",
            )
        if Role.CLOCK in values:
            yield from _clock_scope(context, instruction, values[Role.CLOCK])
        if Role.MEMORY in values:
            yield from _memory_scope(
                context, instruction, values, models, glsl_model, subgroup_capable
            )
        if Role.SEMANTICS in values:
            yield from _semantics(instruction, values[Role.SEMANTICS], vulkan_model)
        if Role.SEMANTICS in values and Role.UNEQUAL in values:
            yield from _unequal(instruction, values[Role.SEMANTICS], values[Role.UNEQUAL])


def _at(instruction: Instruction, rule: str, message: str) -> Diagnostic:
    return Diagnostic(rule, f"{instruction.name}: {message}", instruction.origin)


def _stages(models: Iterable[int]) -> str:
    return ", ".join(sorted(enum_name(Model, model) for model in models))


def _execution_scope(
    instruction: Instruction, scope: int, models: frozenset[int]
) -> Iterator[Diagnostic]:
    name = enum_name(Scope, scope)
    if scope not in (Scope.Workgroup, Scope.Subgroup):
        yield _at(
            instruction, EXECUTION_SCOPE, f"execution scope {name} is not Workgroup or Subgroup"
        )
    stages = models & _SUBGROUP_BARRIER_MODELS
    barrier = instruction.opcode == Op.ControlBarrier
    # 04682 is the more specific rule for a barrier in those stages: say it once.
    outside = models - _WORKGROUP_MODELS - (stages if barrier else frozenset())
    if scope == Scope.Workgroup and outside:
        yield _at(
            instruction,
            EXECUTION_SCOPE_WORKGROUP_STAGE,
            f"Workgroup execution scope used in {_stages(outside)}",
        )
    if barrier and scope != Scope.Subgroup and stages:
        yield _at(
            instruction,
            CONTROL_BARRIER_STAGE,
            f"execution scope must be Subgroup in {_stages(stages)}, not {name}",
        )


def _clock_scope(
    context: ValidationContext, instruction: Instruction, scope: int
) -> Iterator[Diagnostic]:
    if scope == Scope.Subgroup:
        if not enabled(context, "shaderSubgroupClock"):
            yield _at(
                instruction, SUBGROUP_CLOCK_FEATURE, "Subgroup clock needs shaderSubgroupClock"
            )
    elif scope == Scope.Device:
        if not enabled(context, "shaderDeviceClock"):
            yield _at(instruction, DEVICE_CLOCK_FEATURE, "Device clock needs shaderDeviceClock")
    else:
        yield _at(
            instruction,
            READ_CLOCK_SCOPE,
            f"clock scope must be Subgroup or Device, not {enum_name(Scope, scope)}",
        )


def _memory_scope(
    context: ValidationContext,
    instruction: Instruction,
    values: dict[Role, int],
    models: frozenset[int],
    glsl_model: bool,
    subgroup_capable: bool,
) -> Iterator[Diagnostic]:
    scope = values[Role.MEMORY]
    name = enum_name(Scope, scope)
    if scope not in _MEMORY_SCOPES:
        yield _at(instruction, MEMORY_SCOPE, f"memory scope {name} is not allowed in Vulkan")
    elif scope == Scope.Workgroup:
        if models - _WORKGROUP_MODELS:
            yield _at(
                instruction,
                MEMORY_SCOPE_WORKGROUP_STAGE,
                f"Workgroup memory scope used in {_stages(models - _WORKGROUP_MODELS)}",
            )
        if glsl_model and Model.TessellationControl in models:
            yield _at(
                instruction,
                MEMORY_SCOPE_WORKGROUP_TESC_GLSL,
                "Workgroup memory scope in a tessellation control shader needs the Vulkan "
                "memory model",
            )
    elif scope == Scope.ShaderCallKHR and models - RAY_TRACING_MODELS:
        yield _at(
            instruction,
            MEMORY_SCOPE_SHADER_CALL,
            f"ShaderCallKHR memory scope used in {_stages(models - RAY_TRACING_MODELS)}",
        )
    elif scope == Scope.Invocation:
        for role in (Role.SEMANTICS, Role.UNEQUAL):
            if values.get(role, 0) & (_ORDERS | Semantics.SequentiallyConsistent):
                yield _at(
                    instruction,
                    MEMORY_SCOPE_INVOCATION,
                    "Invocation memory scope needs Relaxed memory semantics",
                )
    elif scope == Scope.Subgroup and not subgroup_capable:
        yield _at(
            instruction,
            MEMORY_SCOPE_SUBGROUP_CAPABILITY,
            "Subgroup memory scope needs the GroupNonUniform, SubgroupVoteKHR or "
            "SubgroupBallotKHR capability",
        )
    elif scope == Scope.Device:
        if enabled(context, "vulkanMemoryModel") and not enabled(
            context, "vulkanMemoryModelDeviceScope"
        ):
            yield _at(
                instruction,
                DEVICE_SCOPE_FEATURE,
                "Device memory scope with vulkanMemoryModel needs vulkanMemoryModelDeviceScope",
            )
    elif scope == Scope.QueueFamily and not enabled(context, "vulkanMemoryModel"):
        yield _at(
            instruction,
            QUEUE_FAMILY_SCOPE_FEATURE,
            "QueueFamily memory scope needs the vulkanMemoryModel feature",
        )


def _semantics(
    instruction: Instruction, semantics: int, vulkan_model: bool
) -> Iterator[Diagnostic]:
    order = semantics & _ORDERS
    barrier = instruction.opcode in (Op.ControlBarrier, Op.MemoryBarrier)
    if bin(order).count("1") > 1:
        yield _at(instruction, ONE_ORDER, "at most one of Acquire, Release and AcquireRelease")
    if semantics & Semantics.SequentiallyConsistent:
        # The 1.1 appendix (seed 004) says "should not" and treats it as AcquireRelease; the
        # current spec forbids it, and with the Vulkan memory model SPIR-V itself does.
        yield Diagnostic(
            SEQUENTIALLY_CONSISTENT,
            f"{instruction.name}: SequentiallyConsistent semantics are not supported by Vulkan",
            instruction.origin,
            Severity.ERROR if vulkan_model else Severity.WARNING,
        )
        order |= Semantics.AcquireRelease
    if instruction.opcode == Op.AtomicStore and order & (
        Semantics.Acquire | Semantics.AcquireRelease
    ):
        yield _at(instruction, ATOMIC_STORE_ORDER, "an atomic store cannot have Acquire semantics")
    if instruction.opcode == Op.AtomicLoad and order & (
        Semantics.Release | Semantics.AcquireRelease
    ):
        yield _at(instruction, ATOMIC_LOAD_ORDER, "an atomic load cannot have Release semantics")
    if instruction.opcode == Op.MemoryBarrier and not order:
        yield _at(
            instruction,
            MEMORY_BARRIER_RELAXED,
            "a memory barrier needs Acquire, Release or AcquireRelease semantics",
        )
    if order and not semantics & _STORAGE:
        yield _at(
            instruction,
            ORDER_NEEDS_STORAGE,
            "semantics with a memory order need at least "
            "one of UniformMemory, WorkgroupMemory, ImageMemory, OutputMemory",
        )
    if semantics & _STORAGE and not order:
        yield _at(
            instruction,
            STORAGE_NEEDS_ORDER,
            "storage-class semantics need Acquire, Release or AcquireRelease",
        )
    if semantics & Semantics.MakeAvailable and not order & (
        Semantics.Release | Semantics.AcquireRelease
    ):
        yield _at(
            instruction, MAKE_AVAILABLE_ORDER, "MakeAvailable needs Release or AcquireRelease"
        )
    if semantics & Semantics.MakeVisible and not order & (
        Semantics.Acquire | Semantics.AcquireRelease
    ):
        yield _at(instruction, MAKE_VISIBLE_ORDER, "MakeVisible needs Acquire or AcquireRelease")
    if barrier and semantics & Semantics.Volatile:
        yield _at(instruction, BARRIER_VOLATILE, "Volatile semantics on a barrier")


def _strength(semantics: int) -> int:
    """Relaxed 0, Acquire or Release 1, AcquireRelease (or SequentiallyConsistent) 2."""
    if semantics & (Semantics.AcquireRelease | Semantics.SequentiallyConsistent):
        return 2
    return 1 if semantics & (Semantics.Acquire | Semantics.Release) else 0


def _unequal(instruction: Instruction, equal: int, unequal: int) -> Iterator[Diagnostic]:
    if unequal & (Semantics.Release | Semantics.AcquireRelease):
        yield _at(instruction, UNEQUAL_RELEASE, "Unequal semantics cannot have Release order")
    stronger = _strength(unequal) > _strength(equal) or (
        unequal & Semantics.Acquire and equal & _ORDERS == Semantics.Release
    )
    if stronger:
        yield _at(instruction, UNEQUAL_STRONGER, "Unequal semantics stronger than Equal")
    if unequal & _STORAGE & ~equal:
        yield _at(
            instruction, UNEQUAL_STORAGE, "Unequal semantics name a storage class Equal does not"
        )
    if unequal & Semantics.MakeVisible and not equal & Semantics.MakeVisible:
        yield _at(instruction, UNEQUAL_MAKE_VISIBLE, "Unequal semantics MakeVisible without Equal")
    if bool(unequal & Semantics.Volatile) != bool(equal & Semantics.Volatile):
        yield _at(
            instruction,
            UNEQUAL_VOLATILE,
            "Volatile must be set in both or neither of Equal and Unequal semantics",
        )
