"""Rule family: one push-constant block per entry point (spec "Push Constant Interface").

An entry point may list at most one PushConstant variable in its interface (06673) and may
statically use at most one (06674): a variable is statically used when an instruction of a
function the entry point calls, directly or not, names it. PushConstantBanksNV lifts both.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from gpuav.spirv.grammar import Op, StorageClass
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.reach import interface_ids, reach
from gpuav.validate.shader_facts import global_variables, variable_storage

LISTED_TWICE = "VUID-StandaloneSpirv-OpVariable-06673"
USED_TWICE = "VUID-StandaloneSpirv-OpEntryPoint-06674"
# Capability.PushConstantBanksNV (SPV_NV_push_constant_bank) is newer than our grammar.
PUSH_CONSTANT_BANKS_NV = 5423


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    module = context.module
    if any(
        i.opcode == Op.Capability and i.operands[:1] == [PUSH_CONSTANT_BANKS_NV]
        for i in module.capabilities
    ):
        return
    push_constants = [
        variable.operands[1]
        for variable in global_variables(context)
        if variable_storage(variable) == StorageClass.PushConstant
    ]
    if not push_constants:
        return
    used_by = _static_users(context, push_constants)
    for entry in module.entry_points:
        if entry.opcode != Op.EntryPoint or len(entry.operands) < 3:
            continue
        name = _entry_name(entry)
        listed = [id_ for id_ in interface_ids(entry) if id_ in push_constants]
        if len(listed) > 1:
            yield Diagnostic(
                LISTED_TWICE,
                f"entry point '{name}' lists {len(listed)} PushConstant variables in its "
                f"interface ({_ids(listed)}); at most one is allowed",
                entry.origin,
            )
        used = sorted(used_by.get(entry.operands[1], ()))
        if len(used) > 1:
            yield Diagnostic(
                USED_TWICE,
                f"entry point '{name}' statically uses {len(used)} PushConstant variables "
                f"({_ids(used)}); at most one push-constant block is allowed per entry point",
                entry.origin,
            )


def _static_users(context: ValidationContext, variables: list[int]) -> dict[int, set[int]]:
    """Entry-point function id -> the given variables its call tree names."""
    entry_functions = reach(context).entry_functions
    used_by: defaultdict[int, set[int]] = defaultdict(set)
    for variable in variables:
        for user in context.def_use.uses(variable):
            place = context.def_use.place(user)
            if place is None:
                continue
            for entry_function in entry_functions.get(place[0].id, ()):
                used_by[entry_function].add(variable)
    return used_by


def _entry_name(entry: Instruction) -> str:
    try:
        return decode_string(entry.operands, 2)[0]
    except (ValueError, IndexError, UnicodeDecodeError):
        return "?"


def _ids(ids: list[int]) -> str:
    return ", ".join(f"%{id_}" for id_ in ids)
