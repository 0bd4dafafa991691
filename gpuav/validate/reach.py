"""Which entry points (and so which stages) reach each function, and the stage groups the
rules name.

Many environment rules depend on the stage an instruction runs in ("OpControlBarrier in a
fragment shader", "Workgroup memory only in compute"); an instruction runs in every execution
model whose entry point statically calls its function. The call graph is built once per
validation and kept on the context.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from gpuav.spirv.grammar import ExecutionModel as Model
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Function
from gpuav.validate.context import ValidationContext

_CACHE_KEY = "_gpuav_reach"

# Stage groups that several environment rules name.
TASK_MESH_MODELS = frozenset({Model.TaskNV, Model.MeshNV, Model.TaskEXT, Model.MeshEXT})
# The stages that have workgroup memory: compute, task and mesh shaders.
WORKGROUP_MEMORY_MODELS = TASK_MESH_MODELS | {Model.GLCompute}
RAY_TRACING_MODELS = frozenset(
    {
        Model.RayGenerationKHR,
        Model.IntersectionKHR,
        Model.AnyHitKHR,
        Model.ClosestHitKHR,
        Model.MissKHR,
        Model.CallableKHR,
    }
)


@dataclass
class Reach:
    """``callees``: function id -> ids it calls (in call order, repeats kept once);
    ``models``: function id -> execution models of the entry points reaching it;
    ``entry_functions``: function id -> the entry-point functions reaching it;
    ``functions``: function id -> its definition (functions the module defines)."""

    callees: dict[int, list[int]] = field(default_factory=dict)
    models: dict[int, frozenset[int]] = field(default_factory=dict)
    entry_functions: dict[int, frozenset[int]] = field(default_factory=dict)
    functions: dict[int, Function] = field(default_factory=dict)

    def models_of(self, function: Function) -> frozenset[int]:
        return self.models.get(function.id, frozenset())


def reach(context: ValidationContext) -> Reach:
    """The call graph and per-function execution models of ``context.module`` (cached)."""
    cached = vars(context).get(_CACHE_KEY)
    if isinstance(cached, Reach):
        return cached
    result = _build(context)
    vars(context)[_CACHE_KEY] = result
    return result


def _build(context: ValidationContext) -> Reach:
    result = Reach()
    for function in context.module.functions:
        result.functions[function.id] = function
        called: dict[int, None] = {}
        for block in function.blocks:
            for instruction in block.instructions:
                if instruction.opcode == Op.FunctionCall and len(instruction.operands) > 2:
                    called[instruction.operands[2]] = None
        result.callees[function.id] = list(called)
    models: dict[int, set[int]] = {}
    entry_functions: dict[int, set[int]] = {}
    for entry in context.module.entry_points:
        if len(entry.operands) < 2:
            continue
        model, root = entry.operands[0], entry.operands[1]
        stack, seen = [root], {root}
        while stack:
            current = stack.pop()
            models.setdefault(current, set()).add(model)
            entry_functions.setdefault(current, set()).add(root)
            for callee in result.callees.get(current, ()):
                if callee not in seen:
                    seen.add(callee)
                    stack.append(callee)
    result.models = {function: frozenset(found) for function, found in models.items()}
    result.entry_functions = {
        function: frozenset(found) for function, found in entry_functions.items()
    }
    return result


def models_of_users(context: ValidationContext, id_: int) -> set[int]:
    """Execution models of the entry points reaching a function whose code uses ``id_``."""
    graph = reach(context)
    models: set[int] = set()
    for user in context.def_use.uses(id_):
        place = context.def_use.place(user)
        if place is not None:
            models |= graph.models_of(place[0])
    return models


def instructions_with_function(
    context: ValidationContext,
) -> Iterator[tuple[Function, Instruction]]:
    """Every instruction inside a block, with its function."""
    for function in context.module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                yield function, instruction


def interface_ids(entry: Instruction) -> list[int]:
    """The interface ids of an OpEntryPoint: the operands after its name (a literal string
    ends with the first word whose last byte, the top one in little-endian packing, is 0)."""
    operands = entry.operands
    at = 2
    while at < len(operands) and operands[at] >> 24:
        at += 1
    return operands[at + 1 :]
