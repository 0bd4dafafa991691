"""Entry points, the call graph, the addressing model and execution modes (Vulkan environment
for SPIR-V, "Validation Rules within a Module").

Rules: entry points take no arguments and return void; no static recursion; the Logical (or
PhysicalStorageBuffer64) addressing model; fragment origin and pixel-centre modes; a compute
workgroup size from LocalSize, LocalSizeId or a WorkgroupSize constant; derivative groups that
fit that size.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gpuav.spirv.grammar import AddressingModel, BuiltIn, Decoration, ExecutionMode, Op
from gpuav.spirv.grammar import ExecutionModel as Model
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.reach import WORKGROUP_MEMORY_MODELS, Reach, models_of_users, reach
from gpuav.validate.shader_facts import constant_u32, enabled, enum_name, scalar_info

ENTRY_POINT_SIGNATURE = "VUID-StandaloneSpirv-None-04633"
RECURSION = "VUID-StandaloneSpirv-None-04634"
ADDRESSING_MODEL = "VUID-StandaloneSpirv-None-04635"
ORIGIN_LOWER_LEFT = "VUID-StandaloneSpirv-OriginLowerLeft-04653"
PIXEL_CENTER_INTEGER = "VUID-StandaloneSpirv-PixelCenterInteger-04654"
COMPUTE_LOCAL_SIZE = "VUID-StandaloneSpirv-None-10685"
WORKGROUP_SIZE_STAGE = "VUID-WorkgroupSize-WorkgroupSize-04425"
WORKGROUP_SIZE_CONSTANT = "VUID-WorkgroupSize-WorkgroupSize-04426"
WORKGROUP_SIZE_TYPE = "VUID-WorkgroupSize-WorkgroupSize-04427"
DERIVATIVE_QUADS = "VUID-StandaloneSpirv-DerivativeGroupQuadsKHR-10151"
DERIVATIVE_LINEAR = "VUID-StandaloneSpirv-DerivativeGroupLinearKHR-10152"
WORKGROUP_SIZE_LIMITS = (
    "VUID-RuntimeSpirv-x-06429",
    "VUID-RuntimeSpirv-y-06430",
    "VUID-RuntimeSpirv-z-06431",
)
WORKGROUP_INVOCATIONS_LIMIT = "VUID-RuntimeSpirv-x-06432"
LOCAL_SIZE_ID_FEATURE = "VUID-RuntimeSpirv-LocalSizeId-06434"

_ALLOWED_ADDRESSING = (AddressingModel.Logical, AddressingModel.PhysicalStorageBuffer64)
_CONSTANTS = (Op.Constant, Op.SpecConstant)
_COMPOSITES = (Op.ConstantComposite, Op.SpecConstantComposite)


def check(context: ValidationContext) -> Iterable[Diagnostic]:
    graph = reach(context)
    yield from _entry_point_signatures(context, graph)
    yield from _recursion(context, graph)
    yield from _addressing_model(context)
    yield from _execution_modes(context)


def _entry_point_signatures(context: ValidationContext, graph: Reach) -> Iterator[Diagnostic]:
    for entry in context.module.entry_points:
        function = graph.functions.get(entry.operands[1]) if len(entry.operands) > 1 else None
        if function is None:
            continue
        return_type = context.def_use.defs.get(function.result_type_id)
        if function.parameters or return_type is None or return_type.opcode != Op.TypeVoid:
            yield Diagnostic(
                ENTRY_POINT_SIGNATURE,
                f"entry point {entry.string(2)!r} must return void and take no arguments "
                f"(it takes {len(function.parameters)})",
                entry.origin,
            )


def _recursion(context: ValidationContext, graph: Reach) -> Iterator[Diagnostic]:
    """Depth-first search from each entry point; a call to a function still on the path
    closes a cycle. Each function that starts a cycle is reported once."""
    reported: set[int] = set()
    for entry in context.module.entry_points:
        if len(entry.operands) < 2:
            continue
        root = entry.operands[1]
        on_path, done = {root}, set[int]()
        stack = [(root, iter(graph.callees.get(root, ())))]
        while stack:
            current, callees = stack[-1]
            callee = next(callees, None)
            if callee is None:
                stack.pop()
                on_path.discard(current)
                done.add(current)
            elif callee in on_path:
                if callee not in reported:
                    reported.add(callee)
                    function = graph.functions[callee]
                    yield Diagnostic(
                        RECURSION,
                        f"function %{callee} is part of a static call cycle reachable from "
                        f"entry point {entry.string(2)!r} (recursion is not allowed)",
                        function.definition.origin,
                    )
            elif callee not in done and callee in graph.functions:
                on_path.add(callee)
                stack.append((callee, iter(graph.callees.get(callee, ()))))


def _addressing_model(context: ValidationContext) -> Iterator[Diagnostic]:
    for instruction in context.module.memory_model:
        if instruction.operands and instruction.operands[0] not in _ALLOWED_ADDRESSING:
            name = enum_name(AddressingModel, instruction.operands[0])
            yield Diagnostic(
                ADDRESSING_MODEL,
                f"addressing model {name} is not allowed: Vulkan needs Logical or "
                "PhysicalStorageBuffer64",
                instruction.origin,
            )


def _execution_modes(context: ValidationContext) -> Iterator[Diagnostic]:
    modes: dict[int, dict[int, list[int]]] = {}
    mode_origins: dict[tuple[int, int], int | None] = {}
    for instruction in context.module.execution_modes:
        if len(instruction.operands) < 2:
            continue
        target, mode = instruction.operands[0], instruction.operands[1]
        modes.setdefault(target, {})[mode] = instruction.operands[2:]
        mode_origins[target, mode] = instruction.origin
        if mode == ExecutionMode.OriginLowerLeft:
            yield Diagnostic(
                ORIGIN_LOWER_LEFT,
                "the OriginLowerLeft execution mode must not be used",
                instruction.origin,
            )
        elif mode == ExecutionMode.LocalSizeId and not enabled(context, "maintenance4"):
            yield Diagnostic(
                LOCAL_SIZE_ID_FEATURE,
                "the LocalSizeId execution mode needs the maintenance4 feature",
                instruction.origin,
            )
        elif mode == ExecutionMode.PixelCenterInteger:
            yield Diagnostic(
                PIXEL_CENTER_INTEGER,
                "the PixelCenterInteger execution mode must not be used (pixel centres are at "
                "half-integer coordinates)",
                instruction.origin,
            )
    has_builtin, workgroup_size, size_diagnostics = _workgroup_size_builtin(context)
    yield from size_diagnostics
    for entry in context.module.entry_points:
        if len(entry.operands) < 2:
            continue
        model, function = entry.operands[0], entry.operands[1]
        declared = modes.get(function, {})
        if model == Model.Fragment and ExecutionMode.OriginUpperLeft not in declared:
            yield Diagnostic(
                ORIGIN_LOWER_LEFT,
                f"fragment entry point {entry.string(2)!r} must declare OriginUpperLeft",
                entry.origin,
            )
        if model not in WORKGROUP_MEMORY_MODELS:
            continue
        size = workgroup_size or _local_size(context, declared)
        if model == Model.GLCompute and not has_builtin and not _has_size_mode(declared):
            yield Diagnostic(
                COMPUTE_LOCAL_SIZE,
                f"compute entry point {entry.string(2)!r} declares no LocalSize or LocalSizeId "
                "execution mode and the module has no WorkgroupSize built-in",
                entry.origin,
            )
        if size is not None:
            yield from _derivative_groups(entry.string(2), declared, size, function, mode_origins)
        if size is not None and model == Model.GLCompute:
            yield from _size_limits(context, entry.string(2), size, entry.origin)


def _has_size_mode(declared: dict[int, list[int]]) -> bool:
    return ExecutionMode.LocalSize in declared or ExecutionMode.LocalSizeId in declared


def _local_size(
    context: ValidationContext, declared: dict[int, list[int]]
) -> tuple[int, int, int] | None:
    literal = declared.get(ExecutionMode.LocalSize)
    if literal is not None and len(literal) >= 3:
        return literal[0], literal[1], literal[2]
    ids = declared.get(ExecutionMode.LocalSizeId)
    if ids is not None and len(ids) >= 3:
        values = [constant_u32(context, id_) for id_ in ids[:3]]
        if all(value is not None for value in values):
            x, y, z = (value or 0 for value in values)
            return x, y, z
    return None


def _workgroup_size_builtin(
    context: ValidationContext,
) -> tuple[bool, tuple[int, int, int] | None, list[Diagnostic]]:
    """Whether an object is decorated WorkgroupSize, the size it gives when known (it
    overrides LocalSize), and the diagnostics of a decorated object that is not a
    3 x 32-bit integer constant."""
    diagnostics: list[Diagnostic] = []
    size: tuple[int, int, int] | None = None
    present = False
    for annotation in context.module.annotations:
        operands = annotation.operands
        if not (
            annotation.opcode == Op.Decorate
            and len(operands) >= 3
            and operands[1] == Decoration.BuiltIn
            and operands[2] == BuiltIn.WorkgroupSize
        ):
            continue
        target = context.def_use.defs.get(operands[0])
        if target is None or target.opcode not in _COMPOSITES + _CONSTANTS + (Op.Variable,):
            continue
        present = True
        stages = _non_workgroup_users(context, operands[0])
        if stages:
            diagnostics.append(
                Diagnostic(
                    WORKGROUP_SIZE_STAGE,
                    f"%{operands[0]} decorated WorkgroupSize is used in {stages}; only compute, "
                    "task and mesh shaders have a workgroup size",
                    annotation.origin,
                )
            )
        if target.opcode not in _COMPOSITES:
            diagnostics.append(
                Diagnostic(
                    WORKGROUP_SIZE_CONSTANT,
                    f"%{operands[0]} decorated WorkgroupSize must be a constant or "
                    "specialization-constant composite",
                    annotation.origin,
                )
            )
            continue
        if not _is_uvec3(context, target.operands[0]):
            diagnostics.append(
                Diagnostic(
                    WORKGROUP_SIZE_TYPE,
                    f"%{operands[0]} decorated WorkgroupSize must be a 3-component vector of "
                    "32-bit integers",
                    annotation.origin,
                )
            )
            continue
        if target.opcode == Op.ConstantComposite:
            values = [constant_u32(context, id_) for id_ in target.operands[2:5]]
            if len(values) == 3 and all(value is not None for value in values):
                x, y, z = (value or 0 for value in values)
                size = (x, y, z)
        # A specialization-constant size is only known at pipeline creation.
    return present, size, diagnostics


def _non_workgroup_users(context: ValidationContext, id_: int) -> str:
    """The execution models outside compute, task and mesh whose functions use ``id_``."""
    models = models_of_users(context, id_) - WORKGROUP_MEMORY_MODELS
    return ", ".join(enum_name(Model, model) for model in sorted(models))


def _is_uvec3(context: ValidationContext, type_id: int) -> bool:
    scalar = scalar_info(context.def_use.defs, type_id)
    return scalar is not None and (scalar.kind, scalar.width, scalar.components) == ("int", 32, 3)


def _derivative_groups(
    name: str,
    declared: dict[int, list[int]],
    size: tuple[int, int, int],
    function: int,
    mode_origins: dict[tuple[int, int], int | None],
) -> Iterator[Diagnostic]:
    x, y, z = size
    if ExecutionMode.DerivativeGroupQuadsKHR in declared and (x % 2 or y % 2):
        yield Diagnostic(
            DERIVATIVE_QUADS,
            f"entry point {name!r} uses DerivativeGroupQuadsKHR but its workgroup size "
            f"{x}x{y}x{z} is not a multiple of two in x and y",
            mode_origins[function, ExecutionMode.DerivativeGroupQuadsKHR],
        )
    if ExecutionMode.DerivativeGroupLinearKHR in declared and (x * y * z) % 4:
        yield Diagnostic(
            DERIVATIVE_LINEAR,
            f"entry point {name!r} uses DerivativeGroupLinearKHR but its workgroup size "
            f"{x}x{y}x{z} has {x * y * z} invocations, not a multiple of four",
            mode_origins[function, ExecutionMode.DerivativeGroupLinearKHR],
        )


def _size_limits(
    context: ValidationContext, name: str, size: tuple[int, int, int], origin: int | None
) -> Iterator[Diagnostic]:
    """LocalSize against the device limits, where they are known (``limits`` holds
    ``maxComputeWorkGroupInvocations`` and, per dimension, ``maxComputeWorkGroupSize[i]``)."""
    for axis, (extent, rule) in enumerate(zip(size, WORKGROUP_SIZE_LIMITS, strict=True)):
        limit = context.limits.get(f"maxComputeWorkGroupSize[{axis}]")
        if limit is not None and extent > limit:
            yield Diagnostic(
                rule,
                f"compute entry point {name!r}: workgroup size {'xyz'[axis]} = {extent} exceeds "
                f"maxComputeWorkGroupSize[{axis}] = {limit}",
                origin,
            )
    invocations = size[0] * size[1] * size[2]
    limit = context.limits.get("maxComputeWorkGroupInvocations")
    if limit is not None and invocations > limit:
        yield Diagnostic(
            WORKGROUP_INVOCATIONS_LIMIT,
            f"compute entry point {name!r}: {invocations} invocations per workgroup exceed "
            f"maxComputeWorkGroupInvocations = {limit}",
            origin,
        )
