"""Built-in variables: execution model, storage class and type of each BuiltIn (seed 004,
"Decorations", and the Vulkan spec's "Built-In Variables" chapter).

The table is data (``builtins.json``). A BuiltIn decorates either a variable or a member of a
block (``gl_PerVertex``); a member takes its storage class from the variables of that block
type. Execution models other than the graphics and compute ones (mesh, ray tracing) are not
judged: the table does not describe them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from gpuav.spirv.grammar import (
    BuiltIn,
    Decoration,
    ExecutionMode,
    ExecutionModel,
    Op,
    StorageClass,
)
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.reach import reach
from gpuav.validate.shader_facts import (
    EntryPoints,
    constant_u32,
    enum_name,
    scalar_info,
    variable_storage,
    variable_type,
    variables_by_struct,
)

NOT_IN_VULKAN = "VUID-StandaloneSpirv-BuiltIn-04668"
DEPTH_REPLACING = "VUID-FragDepth-FragDepth-04216"

_MODEL_NAMES = (
    "Vertex",
    "TessellationControl",
    "TessellationEvaluation",
    "Geometry",
    "Fragment",
    "GLCompute",
)
_JUDGED_MODELS = frozenset(getattr(ExecutionModel, name) for name in _MODEL_NAMES)
# Interfaces that add an array level per vertex: (model, storage class).
_ARRAYED = frozenset(
    {
        (ExecutionModel.TessellationControl, StorageClass.Input),
        (ExecutionModel.TessellationControl, StorageClass.Output),
        (ExecutionModel.TessellationEvaluation, StorageClass.Input),
        (ExecutionModel.Geometry, StorageClass.Input),
    }
)


@dataclass(frozen=True)
class BuiltInRule:
    name: str
    type: str
    per_vertex: bool
    # execution model -> allowed storage classes; None as key: any model
    storage: Mapping[int | None, frozenset[int]]
    vuid_model: str | None
    vuid_storage: Mapping[int | None, str]
    vuid_type: str

    def allowed(self, model: int) -> frozenset[int] | None:
        found = self.storage.get(model)
        return self.storage.get(None) if found is None else found

    def storage_vuid(self, model: int) -> str:
        # Models without their own storage VUID share the "*" one, or else the first listed.
        found = self.vuid_storage.get(model) or self.vuid_storage.get(None)
        return found or next(iter(self.vuid_storage.values()))


def _model(name: str) -> int | None:
    return None if name == "*" else int(getattr(ExecutionModel, name))


@cache
def _table() -> tuple[dict[int, BuiltInRule], frozenset[int]]:
    # Read beside this file: importlib.resources would add ~9 ms to every CLI start.
    text = Path(__file__).with_name("builtins.json").read_text(encoding="utf-8")
    document: dict[str, Any] = json.loads(text)
    rules: dict[int, BuiltInRule] = {}
    for name, entry in document["builtins"].items():
        rules[int(getattr(BuiltIn, name))] = BuiltInRule(
            name=name,
            type=entry["type"],
            per_vertex=bool(entry.get("per_vertex", False)),
            storage={
                _model(model): frozenset(int(getattr(StorageClass, s)) for s in classes)
                for model, classes in entry["models"].items()
            },
            vuid_model=entry["vuid_model"],
            vuid_storage={_model(model): vuid for model, vuid in entry["vuid_storage"].items()},
            vuid_type=entry["vuid_type"],
        )
    forbidden = frozenset(
        int(getattr(BuiltIn, name)) for name in document["not_in_vulkan"] if hasattr(BuiltIn, name)
    )
    return rules, forbidden


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    rules, forbidden = _table()
    defs = context.def_use.defs
    entry_points: EntryPoints | None = None
    by_struct: dict[int, list[Instruction]] | None = None
    for annotation in context.module.annotations:
        operands = annotation.operands
        if (
            annotation.opcode == Op.Decorate
            and len(operands) >= 3
            and operands[1] == Decoration.BuiltIn
        ):
            target, builtin, member_type = operands[0], operands[2], None
        elif (
            annotation.opcode == Op.MemberDecorate
            and len(operands) >= 4
            and operands[2] == Decoration.BuiltIn
        ):
            target, builtin = operands[0], operands[3]
            struct = defs.get(target)
            member = operands[1] + 1
            if struct is None or struct.opcode != Op.TypeStruct or member >= len(struct.operands):
                continue
            member_type = struct.operands[member]
        else:
            continue
        if builtin in forbidden:
            yield Diagnostic(
                NOT_IN_VULKAN,
                "this BuiltIn is not one of Vulkan's built-in variables",
                annotation.origin,
            )
            continue
        rule = rules.get(builtin)
        if rule is None:
            continue
        entry_points = entry_points or EntryPoints(context)
        if member_type is None:
            variable = defs.get(target)
            if variable is None or variable.opcode != Op.Variable or len(variable.operands) < 3:
                continue
            yield from _variable(context, rule, variable, None, entry_points)
            if builtin == BuiltIn.FragDepth:
                yield from _depth_replacing(context, variable, entry_points)
        else:
            if by_struct is None:
                by_struct = variables_by_struct(context)
            for variable in by_struct.get(target, []):
                yield from _variable(context, rule, variable, member_type, entry_points)


def _variable(
    context: ValidationContext,
    rule: BuiltInRule,
    variable: Instruction,
    member_type: int | None,
    entry_points: EntryPoints,
) -> Iterator[Diagnostic]:
    defs = context.def_use.defs
    storage = variable_storage(variable)
    models = entry_points.models_using(variable.operands[1]) & _JUDGED_MODELS
    reported: set[str] = set()
    for model in sorted(models):
        model_name = enum_name(ExecutionModel, model)
        allowed = rule.allowed(model)
        if allowed is None:
            if rule.vuid_model is not None and rule.vuid_model not in reported:
                reported.add(rule.vuid_model)
                yield Diagnostic(
                    rule.vuid_model,
                    f"BuiltIn {rule.name} is not available in the {model_name} execution model",
                    variable.origin,
                )
            continue
        if storage not in allowed:
            vuid = rule.storage_vuid(model)
            if vuid not in reported:
                reported.add(vuid)
                classes = " or ".join(sorted(_storage_name(s) for s in allowed))
                yield Diagnostic(
                    vuid,
                    f"BuiltIn {rule.name} in {model_name} must be declared {classes}",
                    variable.origin,
                )
            continue
        type_id = member_type
        if type_id is None:
            type_id = variable_type(defs, variable)
            if type_id is not None and rule.per_vertex and (model, storage) in _ARRAYED:
                type_id = _element(defs, type_id)
        wrong_type = type_id is not None and not _type_matches(context, type_id, rule.type)
        if wrong_type and rule.vuid_type not in reported:
            reported.add(rule.vuid_type)
            yield Diagnostic(
                rule.vuid_type, f"BuiltIn {rule.name} must be a {rule.type}", variable.origin
            )


def _depth_replacing(
    context: ValidationContext, variable: Instruction, entry_points: EntryPoints
) -> Iterator[Diagnostic]:
    """A fragment shader that writes FragDepth declares DepthReplacing."""
    variable_id = variable.operands[1]
    replacing = {
        mode.operands[0]
        for mode in context.module.execution_modes
        if len(mode.operands) >= 2 and mode.operands[1] == ExecutionMode.DepthReplacing
    }
    for store in context.def_use.uses(variable_id):
        if store.opcode != Op.Store or store.operands[0] != variable_id:
            continue
        place = context.def_use.place(store)
        if place is None:
            continue
        models_of_writer = entry_points.function_models.get(place[0].id, frozenset())
        if ExecutionModel.Fragment not in models_of_writer:
            continue
        for entry in context.module.entry_points:
            if (
                len(entry.operands) >= 2
                and entry.operands[0] == ExecutionModel.Fragment
                and entry.operands[1] in reach(context).entry_functions.get(place[0].id, ())
                and entry.operands[1] not in replacing
            ):
                yield Diagnostic(
                    DEPTH_REPLACING,
                    "a fragment shader that writes FragDepth must declare DepthReplacing",
                    store.origin,
                )
                return


def _element(defs: Mapping[int, Instruction], type_id: int) -> int | None:
    instruction = defs.get(type_id)
    if instruction is None or instruction.opcode not in (Op.TypeArray, Op.TypeRuntimeArray):
        return None  # not arrayed: the arrayed-interface rule is not ours
    return instruction.operands[1] if len(instruction.operands) > 1 else None


def _type_matches(context: ValidationContext, type_id: int, wanted: str) -> bool:
    defs = context.def_use.defs
    shape, _, scalar_name = wanted.partition(" ")
    if shape.startswith("array"):
        array = defs.get(type_id)
        if array is None or array.opcode != Op.TypeArray or len(array.operands) < 3:
            return False
        length = shape.removeprefix("array")
        if length and constant_u32(context, array.operands[2]) != int(length):
            return False
        return _type_matches(context, array.operands[1], scalar_name)
    if shape.startswith("vec"):
        scalar, components = scalar_name, int(shape.removeprefix("vec"))
    else:
        scalar, components = shape, 1
    info = scalar_info(defs, type_id)
    if info is None or info.components != components:
        return False
    if scalar == "bool":
        return info.kind == "bool"
    kind = "float" if scalar.startswith("float") else "int"
    return info.kind == kind and info.width == int(scalar.removeprefix(kind))


def _storage_name(storage: int) -> str:
    return "Input" if storage == StorageClass.Input else "Output"
