"""Texel-buffer checks: every fetch, read, write and texel pointer of a uniform or storage
texel buffer runs only when its texel coordinate is below the view's texel count.

The count is the descriptor's state word (``range_word(texels)``, read by
``gpuav_buffer_range``); where the layer does not know it the check passes. A fetch or read
that fails gives zero, a write does nothing, an atomic through a failing texel pointer does
nothing (its result is zero).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuav.instrument import record
from gpuav.instrument.buffer_ranges import RangeGuarder
from gpuav.instrument.consumers import POINTER_OPERANDS
from gpuav.instrument.descriptor_state import RANGE_UNKNOWN
from gpuav.instrument.record import NO_INSTRUCTION_INDEX, ErrorCode
from gpuav.instrument.record_writer import RecordWriter
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Dim, Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module

_CHAINS = (Op.AccessChain, Op.InBoundsAccessChain)
# Texel instructions: (operand position of the image, of the coordinate).
_TEXEL_OPERANDS = {
    Op.ImageFetch: (2, 3),
    Op.ImageRead: (2, 3),
    Op.ImageSparseFetch: (2, 3),
    Op.ImageSparseRead: (2, 3),
    Op.ImageWrite: (0, 1),
    Op.ImageTexelPointer: (2, 3),
}


@dataclass(frozen=True)
class TexelAccess:
    """An access to texel ``coordinate`` of a texel buffer descriptor; ``consumers`` are the
    instructions guarded (the texel pointer's atomics, or the instruction itself)."""

    instruction: Instruction
    consumers: tuple[Instruction, ...]
    coordinate: int
    descriptor_set: int
    binding: int
    storage: bool  # a storage texel buffer (else a uniform texel buffer)
    descriptor_indices: tuple[int, ...]
    descriptor_lengths: tuple[int | None, ...]


@dataclass
class TexelFindings:
    accesses: list[TexelAccess] = field(default_factory=list)


def find_texel_accesses(module: Module, types: Types, decorations: Decorations) -> TexelFindings:
    findings = TexelFindings()
    users: dict[int, list[Instruction]] = {}
    texel_pointers: list[Instruction] = []
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                if instruction.opcode == Op.ImageTexelPointer:
                    texel_pointers.append(instruction)
                elif instruction.opcode in POINTER_OPERANDS:
                    for at in POINTER_OPERANDS[instruction.opcode]:
                        users.setdefault(instruction.operands[at], []).append(instruction)
                elif instruction.opcode in _TEXEL_OPERANDS:
                    access = _access(instruction, (instruction,), types, decorations)
                    if access is not None:
                        findings.accesses.append(access)
    for pointer in texel_pointers:
        atomics = tuple(users.get(pointer.operands[1], ()))
        access = _access(pointer, atomics, types, decorations) if atomics else None
        if access is not None:
            findings.accesses.append(access)
    return findings


def _access(
    instruction: Instruction,
    consumers: tuple[Instruction, ...],
    types: Types,
    decorations: Decorations,
) -> TexelAccess | None:
    image_at, coordinate_at = _TEXEL_OPERANDS[instruction.opcode]
    traced = _trace(instruction.operands[image_at], types)
    if traced is None:
        return None
    variable, indices = traced
    image_type, arrays = types.strip_arrays(types.pointee(variable.operands[0]))
    if types.opcode(image_type) == Op.TypeSampledImage:
        image_type = types.definition(image_type).operands[1]
    definition = types.definition(image_type)
    if definition.opcode != Op.TypeImage or definition.operands[2] != Dim.Buffer:
        return None
    descriptor_set = decorations.descriptor_set(variable.operands[1])
    binding = decorations.binding(variable.operands[1])
    coordinate = instruction.operands[coordinate_at]
    coordinate_type = types.type_of(coordinate)
    if (
        descriptor_set is None
        or binding is None
        or len(indices) != len(arrays)
        or coordinate_type is None
        or types.opcode(coordinate_type) != Op.TypeInt
    ):
        return None
    lengths = tuple(
        None if types.is_runtime_array(array) else types.definition(array).operands[2]
        for array in arrays
    )
    storage = definition.operands[6] == 2  # Sampled 2: a storage image
    return TexelAccess(
        instruction, consumers, coordinate, descriptor_set, binding, storage, indices, lengths
    )


def _trace(value: int, types: Types) -> tuple[Instruction, tuple[int, ...]] | None:
    """The variable an image value (or image pointer) comes from, and the array indices."""
    indices: list[int] = []
    seen: set[int] = set()
    while value not in seen:
        seen.add(value)
        definition = types.defs.get(value)
        if definition is None:
            return None
        opcode = definition.opcode
        if opcode == Op.Variable:
            return definition, tuple(indices)
        if opcode in _CHAINS:
            indices[:0] = definition.operands[3:]
        elif opcode not in (Op.Load, Op.Image, Op.CopyObject):
            return None
        value = definition.operands[2]
    return None


def define_texel_check(builder: Builder, writer: RecordWriter) -> tuple[int, int]:
    """``bool gpuav_check_texel(uint instruction_index, uint descriptor_index, uint
    set_binding, uint coordinate, uint texels)``: whether the coordinate is inside (or the
    count unknown), writing the texel record when not. Returns its id and the writer's."""
    bool_ = builder.type_bool()

    def passes(parameters: list[int]) -> int:
        _, _, _, coordinate, texels = parameters
        unknown = builder.op(Op.IEqual, bool_, texels, builder.constant_uint(RANGE_UNKNOWN))
        inside = builder.op(Op.ULessThan, bool_, coordinate, texels)
        return builder.op(Op.LogicalOr, bool_, unknown, inside)

    return writer.define_check(
        ErrorCode.TEXEL_OUT_OF_BOUNDS, "gpuav_check_texel", "gpuav_write_texel_record", passes
    )


def guard_texel_access(guarder: RangeGuarder, check: int, access: TexelAccess) -> bool:
    """Guard each consumer of ``access`` with the coordinate check; False when one has a
    result without a null value (left unchecked)."""
    builder = guarder.builder
    index = access.instruction.origin
    index = NO_INSTRUCTION_INDEX if index is None else index
    set_binding = access.descriptor_set << record.SET_SHIFT | access.binding
    if access.storage:
        set_binding |= record.STORAGE_BIT
    descriptor = (
        access.descriptor_set,
        access.binding,
        access.descriptor_indices,
        access.descriptor_lengths,
    )
    if not all(guarder.nullable(consumer) for consumer in access.consumers):
        return False  # before anything is emitted
    guarded = True
    for consumer in access.consumers:
        function = guarder.function_of(consumer)
        hoisted = guarder.hoisted_range(function, *descriptor)
        table = None if hoisted is not None else guarder.hoisted_table(function, *descriptor[:2])

        def condition(hoisted: int | None = hoisted, table: int | None = table) -> int:
            texels = hoisted if hoisted is not None else guarder.range_here(*descriptor, table)
            return builder.op(
                Op.FunctionCall,
                builder.type_bool(),
                check,
                builder.constant_uint(index),
                guarder.flat_index(access.descriptor_indices, access.descriptor_lengths),
                builder.constant_uint(set_binding),
                guarder.as_uint(access.coordinate),
                texels,
            )

        guarded = guarder.guard_with(consumer, condition) and guarded
    return guarded
