"""Pointer rules: access-chain results, OpPtrAccessChain bases and physical storage buffer
pointers (Vulkan environment for SPIR-V, and the SPIR-V rules on pointers it relies on).

Rules: an access chain's Result Type is a pointer in its Base's storage class (a mutated module
with a function type there fails cleanly in lavapipe, but crashed it once instrumented); an
OpPtrAccessChain base lives in Workgroup, StorageBuffer or PhysicalStorageBuffer,
with the variable-pointer capability those need; with the PhysicalStorageBuffer64 addressing
model, loads and stores through a physical pointer carry an Aligned operand that is a multiple
of the largest scalar they touch, pointer/integer conversions use 64-bit integers, forward
pointers are physical, and a variable or parameter holding a physical pointer is decorated
AliasedPointer or RestrictPointer (exactly one).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gpuav.spirv.grammar import AddressingModel, Capability, Decoration, MemoryAccess, Op
from gpuav.spirv.grammar import StorageClass as Class
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.shader_facts import enum_name

PTR_ACCESS_CHAIN_CLASS = "VUID-StandaloneSpirv-Base-07650"
PTR_ACCESS_CHAIN_WORKGROUP = "VUID-StandaloneSpirv-Base-07651"
PTR_ACCESS_CHAIN_STORAGE_BUFFER = "VUID-StandaloneSpirv-Base-07652"
PHYSICAL_ALIGNED = "VUID-StandaloneSpirv-PhysicalStorageBuffer64-04708"
PHYSICAL_CONVERT_WIDTH = "VUID-StandaloneSpirv-PhysicalStorageBuffer64-04710"
PHYSICAL_ALIGNMENT_SIZE = "VUID-StandaloneSpirv-PhysicalStorageBuffer64-06314"
FORWARD_POINTER_CLASS = "VUID-StandaloneSpirv-OpTypeForwardPointer-04711"
# SPIR-V 2.16.2 (validation rules for PhysicalStorageBuffer pointers): no Vulkan VUID.
ALIASED_OR_RESTRICT = "GPUAV-PhysicalStorageBuffer-AliasedOrRestrictPointer"
# SPIR-V, Memory Instructions, OpAccessChain and its InBounds and Ptr forms: "Result Type must
# be an OpTypePointer. Its Storage Class operand must be the same as the Storage Class of Base."
ACCESS_CHAIN_RESULT = "GPUAV-AccessChain-ResultType"

_PTR_CHAINS = (Op.PtrAccessChain, Op.InBoundsPtrAccessChain)
_ACCESS_CHAINS = (Op.AccessChain, Op.InBoundsAccessChain, *_PTR_CHAINS)
_POINTER_DECORATIONS = (Decoration.AliasedPointer, Decoration.RestrictPointer)


def check(context: ValidationContext) -> Iterable[Diagnostic]:
    capabilities = {c.operands[0] for c in context.module.capabilities if c.operands}
    physical = any(
        m.operands and m.operands[0] == AddressingModel.PhysicalStorageBuffer64
        for m in context.module.memory_model
    )
    for instruction in context.module.globals:
        if instruction.opcode == Op.TypeForwardPointer and len(instruction.operands) > 1:
            if instruction.operands[1] != Class.PhysicalStorageBuffer:
                yield Diagnostic(
                    FORWARD_POINTER_CLASS,
                    "OpTypeForwardPointer must use PhysicalStorageBuffer, not "
                    f"{enum_name(Class, instruction.operands[1])}",
                    instruction.origin,
                )
        elif instruction.opcode == Op.Variable:
            yield from _aliasing(context, instruction)
    for function in context.module.functions:
        for parameter in function.parameters:
            yield from _aliasing(context, parameter)
        for block in function.blocks:
            for instruction in block.instructions:
                opcode = instruction.opcode
                if opcode in _ACCESS_CHAINS:
                    yield from _access_chain_result(context, instruction)
                if opcode in _PTR_CHAINS:
                    yield from _ptr_access_chain(context, instruction, capabilities)
                elif opcode == Op.Variable:
                    yield from _aliasing(context, instruction)
                elif physical and opcode in (Op.Load, Op.Store, Op.CopyMemory, Op.CopyMemorySized):
                    yield from _aligned(context, instruction)
                elif physical and opcode in (Op.ConvertUToPtr, Op.ConvertPtrToU):
                    yield from _convert_width(context, instruction)


def _pointer_class(context: ValidationContext, value: int) -> int | None:
    defs = context.def_use.defs
    definition = defs.get(value)
    pointer = defs.get(definition.type_id) if definition and definition.type_id else None
    if pointer is None or pointer.opcode != Op.TypePointer or len(pointer.operands) < 3:
        return None
    return pointer.operands[1]


def _access_chain_result(
    context: ValidationContext, instruction: Instruction
) -> Iterator[Diagnostic]:
    if len(instruction.operands) < 3:
        return
    result_type = context.def_use.defs.get(instruction.operands[0])
    if result_type is None or result_type.opcode != Op.TypePointer or len(result_type.operands) < 3:
        yield Diagnostic(
            ACCESS_CHAIN_RESULT,
            f"{instruction.name}'s Result Type must be an OpTypePointer",
            instruction.origin,
        )
        return
    base_class = _pointer_class(context, instruction.operands[2])
    if base_class is not None and base_class != result_type.operands[1]:
        yield Diagnostic(
            ACCESS_CHAIN_RESULT,
            f"{instruction.name}'s Result Type points into "
            f"{enum_name(Class, result_type.operands[1])}, but its Base is in "
            f"{enum_name(Class, base_class)}",
            instruction.origin,
        )


def _ptr_access_chain(
    context: ValidationContext, instruction: Instruction, capabilities: set[int]
) -> Iterator[Diagnostic]:
    if len(instruction.operands) < 3:
        return
    storage = _pointer_class(context, instruction.operands[2])
    if storage is None:
        return
    name = instruction.name
    if storage not in (Class.Workgroup, Class.StorageBuffer, Class.PhysicalStorageBuffer):
        yield Diagnostic(
            PTR_ACCESS_CHAIN_CLASS,
            f"{name} base is in {enum_name(Class, storage)}; it must be in Workgroup, "
            "StorageBuffer or PhysicalStorageBuffer",
            instruction.origin,
        )
    elif storage == Class.Workgroup and Capability.VariablePointers not in capabilities:
        yield Diagnostic(
            PTR_ACCESS_CHAIN_WORKGROUP,
            f"{name} on a Workgroup pointer needs the VariablePointers capability",
            instruction.origin,
        )
    elif storage == Class.StorageBuffer and not capabilities & {
        Capability.VariablePointers,
        Capability.VariablePointersStorageBuffer,
    }:
        yield Diagnostic(
            PTR_ACCESS_CHAIN_STORAGE_BUFFER,
            f"{name} on a StorageBuffer pointer needs the VariablePointers or "
            "VariablePointersStorageBuffer capability",
            instruction.origin,
        )


def _aliasing(context: ValidationContext, instruction: Instruction) -> Iterator[Diagnostic]:
    """A variable (or parameter) whose type is, or points to, a physical pointer."""
    defs = context.def_use.defs
    pointer = defs.get(instruction.operands[0]) if instruction.operands else None
    if pointer is None or pointer.opcode != Op.TypePointer or len(pointer.operands) < 3:
        return
    held = pointer if instruction.opcode == Op.FunctionParameter else defs.get(pointer.operands[2])
    if held is None or held.opcode != Op.TypePointer or len(held.operands) < 2:
        return
    if held.operands[1] != Class.PhysicalStorageBuffer:
        return
    target = instruction.operands[1]
    found = [d for d in _POINTER_DECORATIONS if context.decorations.has(target, d)]
    if len(found) != 1:
        yield Diagnostic(
            ALIASED_OR_RESTRICT,
            f"%{target} holds a PhysicalStorageBuffer pointer and must be decorated with "
            f"exactly one of AliasedPointer and RestrictPointer ({len(found)} found)",
            instruction.origin,
        )


def _memory_operands(operands: list[int], start: int) -> list[tuple[int, int | None]]:
    """(mask, Aligned literal or None) for each Memory Operands group from ``start``. A
    mask's parameters follow it in bit order: Aligned's literal, then the ids of
    MakePointerAvailable and MakePointerVisible."""
    groups: list[tuple[int, int | None]] = []
    at = start
    while at < len(operands) and len(groups) < 2:
        mask = operands[at]
        alignment = (
            operands[at + 1] if mask & MemoryAccess.Aligned and at + 1 < len(operands) else None
        )
        at += 1 + sum(
            1
            for bit in (
                MemoryAccess.Aligned,
                MemoryAccess.MakePointerAvailable,
                MemoryAccess.MakePointerVisible,
            )
            if mask & bit
        )
        groups.append((mask, alignment))
    return groups


def _accesses(instruction: Instruction) -> list[tuple[int, tuple[int, int | None]]]:
    """(pointer id, its memory operands) for each pointer a load, store or copy accesses."""
    operands = instruction.operands
    none: tuple[int, int | None] = (0, None)
    if instruction.opcode == Op.Load and len(operands) > 2:
        groups = _memory_operands(operands, 3)
        return [(operands[2], groups[0] if groups else none)]
    if instruction.opcode == Op.Store and len(operands) > 1:
        groups = _memory_operands(operands, 2)
        return [(operands[0], groups[0] if groups else none)]
    if instruction.opcode in (Op.CopyMemory, Op.CopyMemorySized) and len(operands) > 1:
        # One group applies to both pointers; two are the target's, then the source's.
        groups = _memory_operands(operands, 2 if instruction.opcode == Op.CopyMemory else 3)
        target = groups[0] if groups else none
        return [(operands[0], target), (operands[1], groups[1] if len(groups) > 1 else target)]
    return []


def _aligned(context: ValidationContext, instruction: Instruction) -> Iterator[Diagnostic]:
    for pointer, (mask, alignment) in _accesses(instruction):
        if _pointer_class(context, pointer) != Class.PhysicalStorageBuffer:
            continue
        if not mask & MemoryAccess.Aligned:
            yield Diagnostic(
                PHYSICAL_ALIGNED,
                f"{instruction.name} through a PhysicalStorageBuffer pointer needs the Aligned "
                "memory operand",
                instruction.origin,
            )
            continue
        pointer_type = context.def_use.defs[context.def_use.defs[pointer].type_id or 0]
        largest = _largest_scalar(context, pointer_type.operands[2], set())
        if alignment is not None and largest and alignment % largest:
            yield Diagnostic(
                PHYSICAL_ALIGNMENT_SIZE,
                f"{instruction.name}: Aligned {alignment} is not a multiple of {largest}, the "
                "size of the largest scalar accessed",
                instruction.origin,
            )


def _largest_scalar(context: ValidationContext, type_id: int, seen: set[int]) -> int:
    """Bytes of the largest scalar in a type. A pointer is no scalar (SPIR-V 2.2.2), so a
    pointer member counts for nothing: glslang loads 64-bit references with the referenced
    block's alignment, and spirv-val accepts that."""
    if type_id in seen:
        return 0
    seen.add(type_id)
    definition = context.def_use.defs.get(type_id)
    if definition is None or len(definition.operands) < 2:
        return 0
    opcode = definition.opcode
    if opcode in (Op.TypeInt, Op.TypeFloat):
        return int(definition.operands[1] // 8)
    if opcode in (Op.TypeVector, Op.TypeMatrix, Op.TypeArray, Op.TypeRuntimeArray):
        return _largest_scalar(context, definition.operands[1], seen)
    if opcode == Op.TypeStruct:
        return max((_largest_scalar(context, m, seen) for m in definition.operands[1:]), default=0)
    return 0


def _convert_width(context: ValidationContext, instruction: Instruction) -> Iterator[Diagnostic]:
    operands = instruction.operands
    if instruction.opcode == Op.ConvertPtrToU:
        integer_type = operands[0] if operands else None
        pointer = operands[2] if len(operands) > 2 else None
    else:
        integer_type = context.types.type_of(operands[2]) if len(operands) > 2 else None
        pointer = operands[1] if len(operands) > 1 else None
    if pointer is None or integer_type is None:
        return
    physical = (
        _pointer_class(context, pointer) == Class.PhysicalStorageBuffer
        if instruction.opcode == Op.ConvertPtrToU
        else _result_class(context, instruction) == Class.PhysicalStorageBuffer
    )
    definition = context.def_use.defs.get(integer_type)
    if (
        physical
        and definition is not None
        and definition.opcode == Op.TypeInt
        and definition.operands[1] != 64
    ):
        yield Diagnostic(
            PHYSICAL_CONVERT_WIDTH,
            f"{instruction.name} with a {definition.operands[1]}-bit integer; physical "
            "pointers convert to and from 64-bit integers",
            instruction.origin,
        )


def _result_class(context: ValidationContext, instruction: Instruction) -> int | None:
    pointer = context.def_use.defs.get(instruction.operands[0])
    if pointer is None or pointer.opcode != Op.TypePointer or len(pointer.operands) < 2:
        return None
    return pointer.operands[1]
