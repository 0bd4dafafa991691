"""Non-uniform group operations (Vulkan environment for SPIR-V, Vulkan 1.1 rules of seed 004).

Every ``OpGroupNonUniform*`` instruction: its result a scalar or vector of 32-bit int/float or
bool (double with Float64; 8/16/64-bit types only with shaderSubgroupExtendedTypes), and
OpGroupNonUniformBallotBitCount only reduces or scans a uvec4 ballot. The Subgroup scope rule
(04642) is the memory family's, with the other scope rules; which subgroup operations a device
supports is the capability table's (``GroupNonUniform*`` against ``VK_SUBGROUP_FEATURE_*``).
"""

from __future__ import annotations

from collections.abc import Iterator

from gpuav.spirv.grammar import OPCODE_NAMES, Capability, GroupOperation, Op
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.shader_facts import function_instructions, operand, scalar_info

BALLOT_BIT_COUNT_OPERATION = "VUID-StandaloneSpirv-OpGroupNonUniformBallotBitCount-04685"
EXTENDED_TYPES = "VUID-RuntimeSpirv-None-06275"
RESULT_TYPE = "GPUAV-GroupNonUniform-ResultType"
BALLOT_BIT_COUNT_VALUE = "GPUAV-GroupNonUniformBallotBitCount-Value"

GROUP_NON_UNIFORM = frozenset(
    opcode for opcode, name in OPCODE_NAMES.items() if name.startswith("OpGroupNonUniform")
)
_SCAN_OPERATIONS = (
    GroupOperation.Reduce,
    GroupOperation.InclusiveScan,
    GroupOperation.ExclusiveScan,
)


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    float64 = any(
        capability.operands[:1] == [Capability.Float64]
        for capability in context.module.capabilities
    )
    extended = "shaderSubgroupExtendedTypes" in context.features
    for instruction in function_instructions(context):
        if instruction.opcode not in GROUP_NON_UNIFORM:
            continue
        yield from _result_type(context, instruction, float64, extended)
        if instruction.opcode == Op.GroupNonUniformBallotBitCount:
            yield from _ballot_bit_count(context, instruction)


def _result_type(
    context: ValidationContext, instruction: Instruction, float64: bool, extended: bool
) -> Iterator[Diagnostic]:
    scalar = scalar_info(context.def_use.defs, operand(instruction, 0))
    name = instruction.name
    if scalar is None:
        yield Diagnostic(
            RESULT_TYPE,
            f"{name}'s Result Type must be a scalar or vector of int, float or bool",
            instruction.origin,
        )
        return
    if scalar.kind == "bool" or scalar.width == 32:
        return
    if scalar.kind == "float" and scalar.width == 64 and float64:
        return
    if scalar.width in (8, 16, 64) and (scalar.kind == "int" or scalar.width == 16):
        if not extended:
            yield Diagnostic(
                EXTENDED_TYPES,
                f"{name} on {scalar.width}-bit {scalar.kind} values needs "
                "shaderSubgroupExtendedTypes",
                instruction.origin,
            )
        return
    yield Diagnostic(
        RESULT_TYPE,
        f"{name}'s Result Type must be 32-bit int/float, bool, or double with Float64 "
        f"(it is {scalar.width}-bit {scalar.kind})",
        instruction.origin,
    )


def _ballot_bit_count(context: ValidationContext, instruction: Instruction) -> Iterator[Diagnostic]:
    operation = operand(instruction, 3)
    if operation is not None and operation not in _SCAN_OPERATIONS:
        yield Diagnostic(
            BALLOT_BIT_COUNT_OPERATION,
            "OpGroupNonUniformBallotBitCount must use Reduce, InclusiveScan or ExclusiveScan",
            instruction.origin,
        )
    value = operand(instruction, 4)
    value_instruction = context.def_use.defs.get(value) if value is not None else None
    value_type = None if value_instruction is None else value_instruction.type_id
    scalar = scalar_info(context.def_use.defs, value_type)
    if scalar is None or (scalar.kind, scalar.width, scalar.signed, scalar.components) != (
        "int",
        32,
        False,
        4,
    ):
        yield Diagnostic(
            BALLOT_BIT_COUNT_VALUE,
            "OpGroupNonUniformBallotBitCount's Value must be a vector of four 32-bit unsigned "
            "integers (a ballot)",
            instruction.origin,
        )
