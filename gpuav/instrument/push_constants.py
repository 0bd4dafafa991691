"""Where an existing push-constant block ends, so that the context address the layer pushes
(issue 8) is added only where it overlaps nothing (explicit layout: Offset, ArrayStride and
MatrixStride decorations)."""

from __future__ import annotations

from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.grammar import Decoration, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module


def block_end(module: Module, struct: int) -> int | None:
    """Bytes from the block's start to the end of its last member; None when unknown."""
    defs: dict[int, Instruction] = {}
    for instruction in module.globals:
        result = instruction.result_id
        if result is not None:
            defs[result] = instruction
    return _struct_end(defs, Decorations(module), struct)


def _struct_end(defs: dict[int, Instruction], decorations: Decorations, struct: int) -> int | None:
    end = 0
    for member, type_id in enumerate(defs[struct].operands[1:]):
        offset = decorations.member_value(struct, member, Decoration.Offset)
        size = _size(defs, decorations, type_id, (struct, member))
        if offset is None or size is None:
            return None
        end = max(end, offset + size)
    return end


def _size(
    defs: dict[int, Instruction],
    decorations: Decorations,
    type_id: int,
    member: tuple[int, int],
) -> int | None:
    instruction = defs.get(type_id)
    if instruction is None:
        return None
    opcode, operands = instruction.opcode, instruction.operands
    if opcode in (Op.TypeInt, Op.TypeFloat):
        return operands[1] // 8
    if opcode == Op.TypeBool:
        return 4
    if opcode == Op.TypeVector:
        component = _size(defs, decorations, operands[1], member)
        return None if component is None else component * operands[2]
    if opcode == Op.TypeMatrix:
        stride = decorations.member_value(*member, Decoration.MatrixStride)
        column = defs.get(operands[1])
        if stride is None or column is None:
            return None
        row_major = decorations.member_has(*member, Decoration.RowMajor)
        return stride * (column.operands[2] if row_major else operands[2])
    if opcode == Op.TypeArray:
        stride = decorations.value(type_id, Decoration.ArrayStride)
        length = defs.get(operands[2])
        if stride is None or length is None or length.opcode != Op.Constant:
            return None
        return stride * length.operands[2]
    if opcode == Op.TypeStruct:
        return _struct_end(defs, decorations, type_id)
    if opcode == Op.TypePointer and operands[1] == StorageClass.PhysicalStorageBuffer:
        return 8  # a device address (ray tracers push their buffers' addresses)
    return None
