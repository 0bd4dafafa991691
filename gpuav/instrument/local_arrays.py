"""The find phase of the local-array checks: which indices of Function, Private, Workgroup and
task-payload memory an access uses, and the lengths they must stay below.

An index past the end of an array, vector or matrix in the invocation's own memory is
undefined behaviour that no robustness feature covers, and no other tool checks it. Every load,
store, atomic and memory copy whose pointer comes from an access chain into such memory is
traced back to the chain's root (a variable, a function parameter, a merged pointer) through
chains and copies; walking the indices through the root's type gives, for each array, vector
and matrix level, the index and its length (a constant, a specialization constant, or the
component count). Levels whose constant index is known to be in range need no check; a constant
index out of range is checked too (it is reported when reached). OpVectorExtractDynamic and
OpVectorInsertDynamic are checked against their vector's size. Nothing here changes the module;
the report walks the original module with the same ``trace_local_pointer`` to name what was
indexed.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuav.instrument.consumers import POINTER_OPERANDS
from gpuav.instrument.pass_findings import PassFindings
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module

LOCAL_CLASSES = frozenset(
    {
        StorageClass.Function,
        StorageClass.Private,
        StorageClass.Workgroup,
        StorageClass.TaskPayloadWorkgroupEXT,
        # A ray-tracing invocation's payloads, hit attributes and callable data.
        StorageClass.RayPayloadKHR,
        StorageClass.IncomingRayPayloadKHR,
        StorageClass.HitAttributeKHR,
        StorageClass.CallableDataKHR,
        StorageClass.IncomingCallableDataKHR,
    }
)
CHAINS = frozenset({Op.AccessChain, Op.InBoundsAccessChain})
PTR_CHAINS = frozenset({Op.PtrAccessChain, Op.InBoundsPtrAccessChain})
DYNAMIC_VECTOR_OPS = frozenset({Op.VectorExtractDynamic, Op.VectorInsertDynamic})
_NOT_ACCESSES = (Op.ArrayLength, Op.AtomicFlagClear, Op.AtomicFlagTestAndSet)
# Operand positions (after result type and id) of the vector and the index.
VECTOR_OPERAND = 2
VECTOR_INDEX_OPERAND = {Op.VectorExtractDynamic: 3, Op.VectorInsertDynamic: 4}


@dataclass(frozen=True)
class LocalPath:
    """A pointer into local memory as its root and the chain's indices from it."""

    root: int  # the OpVariable, OpFunctionParameter, or merged pointer the chains start from
    storage_class: int
    root_type: int  # the type the root points to
    indices: tuple[int, ...]  # ids, outermost first
    containers: tuple[int, ...]  # the type each index selects in


@dataclass(frozen=True)
class IndexCheck:
    """One index that must stay below its length: ``index < length`` (unsigned)."""

    pointer: int  # which pointer of the access: 0, or 1 for the source of a memory copy
    level: int  # the index's position in the chain from the root (or 0 for a vector op)
    index: int  # an integer id of any width and signedness
    length: int | None  # the length as a known value
    length_id: int | None  # or as an id (a specialization constant), when not known


@dataclass(frozen=True)
class LocalAccess:
    consumer: Instruction
    checks: tuple[IndexCheck, ...]


LocalFindings = PassFindings[LocalAccess]


class UnknownLocalPointer(Exception):
    """A pointer into local memory whose indices cannot be told (the reason is the message)."""


def local_pointer_types(module: Module) -> frozenset[int]:
    """Ids of the pointer types into local memory."""
    return frozenset(
        instruction.operands[0]
        for instruction in module.globals
        if instruction.opcode == Op.TypePointer and instruction.operands[1] in LOCAL_CLASSES
    )


def may_index_locals(module: Module) -> bool:
    """Cheap test before any analysis: a chain that yields a local pointer, or a dynamic
    vector instruction."""
    pointer_types = local_pointer_types(module)
    chains = CHAINS | PTR_CHAINS
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                opcode = instruction.opcode
                if opcode in DYNAMIC_VECTOR_OPS:
                    return True
                if opcode in chains and instruction.operands[0] in pointer_types:
                    return True
    return False


def find_local_accesses(module: Module, types: Types) -> LocalFindings:
    findings = LocalFindings()
    pointer_types = local_pointer_types(module)
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                try:
                    checks = _checks_of(instruction, types, pointer_types)
                except UnknownLocalPointer as reason:
                    findings.unchecked.append((instruction.origin, str(reason)))
                    continue
                if checks:
                    findings.accesses.append(LocalAccess(instruction, tuple(checks)))
    return findings


def _checks_of(
    instruction: Instruction, types: Types, pointer_types: frozenset[int]
) -> list[IndexCheck]:
    opcode = instruction.opcode
    if opcode in DYNAMIC_VECTOR_OPS:
        vector_type = types.type_of(instruction.operands[VECTOR_OPERAND])
        if vector_type is None:
            return []
        index = instruction.operands[VECTOR_INDEX_OPERAND[opcode]]
        count = types.component_count(vector_type)
        return [] if _in_range(types, index, count) else [IndexCheck(0, 0, index, count, None)]
    positions = POINTER_OPERANDS.get(opcode)
    if positions is None or opcode in _NOT_ACCESSES:
        return []
    checks: list[IndexCheck] = []
    for which, at in enumerate(positions):
        pointer = instruction.operands[at]
        if types.type_of(pointer) not in pointer_types:
            continue
        path = trace_local_pointer(types, pointer)
        for level, (index, container) in enumerate(zip(path.indices, path.containers, strict=True)):
            check = _level_check(types, which, level, index, container)
            if check is not None:
                checks.append(check)
    return checks


def trace_local_pointer(types: Types, pointer: int) -> LocalPath:
    """The root under ``pointer`` (a pointer into local memory) and the types its indices
    select in. Raises UnknownLocalPointer where the indices cannot be told."""
    indices: list[int] = []
    seen: set[int] = set()
    root = pointer
    while root not in seen:
        seen.add(root)
        definition = types.defs.get(root)
        if definition is None:
            break
        opcode = definition.opcode
        if opcode in CHAINS:
            indices[:0] = definition.operands[3:]
        elif opcode in PTR_CHAINS:
            if types.constant_value(definition.operands[3]) != 0:
                raise UnknownLocalPointer("OpPtrAccessChain moving a pointer to local memory")
            indices[:0] = definition.operands[4:]
        elif opcode != Op.CopyObject:
            break
        root = definition.operands[2]
    root_pointer = types.type_of(root)
    if root_pointer is None or not types.is_pointer(root_pointer):
        raise UnknownLocalPointer("a local pointer whose root has no pointer type")
    current = types.pointee(root_pointer)
    containers = []
    for index in indices:
        containers.append(current)
        current = _element(types, current, index)
    return LocalPath(
        root,
        types.storage_class(root_pointer),
        types.pointee(root_pointer),
        tuple(indices),
        tuple(containers),
    )


def _element(types: Types, container: int, index: int) -> int:
    opcode = types.opcode(container)
    if opcode in (Op.TypeArray, Op.TypeVector, Op.TypeMatrix):
        return types.element(container)
    if opcode == Op.TypeStruct:
        member = types.constant_value(index)
        members = types.member_types(container)
        if member is None or not 0 <= member < len(members):
            raise UnknownLocalPointer("a struct member chosen by a non-constant index")
        return members[member]
    raise UnknownLocalPointer(f"an access chain into a {types.definition(container).name}")


def _level_check(
    types: Types, pointer: int, level: int, index: int, container: int
) -> IndexCheck | None:
    """The check one index needs, or None when it cannot leave its container."""
    opcode = types.opcode(container)
    if opcode in (Op.TypeVector, Op.TypeMatrix):
        count = types.component_count(container)
        return (
            None
            if _in_range(types, index, count)
            else IndexCheck(pointer, level, index, count, None)
        )
    if opcode != Op.TypeArray:
        return None  # a struct member: constant, and validated as such
    length_id = types.definition(container).operands[2]
    length = types.constant_value(length_id)
    if length is not None:
        return (
            None
            if _in_range(types, index, length)
            else IndexCheck(pointer, level, index, length, None)
        )
    return IndexCheck(pointer, level, index, None, length_id)


def _in_range(types: Types, index: int, length: int) -> bool:
    value = types.constant_value(index)
    return value is not None and 0 <= value < length
