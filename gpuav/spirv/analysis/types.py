"""Questions about types and constants, answered from their defining instructions."""

from __future__ import annotations

from collections.abc import Mapping

from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction

_ARRAY_OPS = (Op.TypeArray, Op.TypeRuntimeArray)


class Types:
    """Works over any id -> defining instruction map (DefUse.defs, or a globals index)."""

    def __init__(self, defs: Mapping[int, Instruction]) -> None:
        self.defs = defs

    def definition(self, id_: int) -> Instruction:
        return self.defs[id_]

    def opcode(self, type_id: int) -> int:
        return self.defs[type_id].opcode

    def type_of(self, value: int) -> int | None:
        instruction = self.defs.get(value)
        return None if instruction is None else instruction.type_id

    # Pointers
    def is_pointer(self, type_id: int) -> bool:
        return self.opcode(type_id) in (Op.TypePointer, Op.TypeUntypedPointerKHR)

    def storage_class(self, pointer_type: int) -> int:
        return self.defs[pointer_type].operands[1]

    def pointee(self, pointer_type: int) -> int:
        return self.defs[pointer_type].operands[2]

    # Aggregates
    def is_array(self, type_id: int) -> bool:
        return self.opcode(type_id) in _ARRAY_OPS

    def is_runtime_array(self, type_id: int) -> bool:
        return self.opcode(type_id) == Op.TypeRuntimeArray

    def element(self, array_type: int) -> int:
        """Element type of an array, runtime array, vector or matrix."""
        return self.defs[array_type].operands[1]

    def array_length(self, array_type: int) -> int | None:
        """The constant length of an OpTypeArray (None when it is a specialization constant)."""
        instruction = self.defs[array_type]
        if instruction.opcode != Op.TypeArray:
            return None
        return self.constant_value(instruction.operands[2])

    def member_types(self, struct_type: int) -> list[int]:
        return self.defs[struct_type].operands[1:]

    def strip_arrays(self, type_id: int) -> tuple[int, list[int]]:
        """(innermost non-array type, array type ids from the outside in). An invalid module
        may nest a type in itself: the walk stops where it would come round again."""
        arrays: list[int] = []
        while self.is_array(type_id) and type_id not in arrays:
            arrays.append(type_id)
            type_id = self.element(type_id)
        return type_id, arrays

    def component_count(self, type_id: int) -> int:
        instruction = self.defs[type_id]
        if instruction.opcode in (Op.TypeVector, Op.TypeMatrix):
            return instruction.operands[2]
        return 1

    # Scalars
    def width(self, scalar_type: int) -> int:
        instruction = self.defs[scalar_type]
        if instruction.opcode in (Op.TypeInt, Op.TypeFloat):
            return instruction.operands[1]
        if instruction.opcode == Op.TypeBool:
            return 32
        raise ValueError(f"{instruction.name} has no width")

    def is_signed(self, int_type: int) -> bool:
        instruction = self.defs[int_type]
        return instruction.opcode == Op.TypeInt and instruction.operands[2] == 1

    def scalar(self, type_id: int) -> int:
        """The scalar type at the bottom of vectors and matrices (bounded, as above)."""
        seen: set[int] = set()
        while self.opcode(type_id) in (Op.TypeVector, Op.TypeMatrix) and type_id not in seen:
            seen.add(type_id)
            type_id = self.element(type_id)
        return type_id

    # Constants
    def constant_value(self, id_: int) -> int | None:
        """The value of an integer OpConstant (sign-extended for signed types), else None."""
        instruction = self.defs.get(id_)
        if instruction is None or instruction.opcode != Op.Constant:
            return None
        type_instruction = self.defs.get(instruction.operands[0])
        if type_instruction is None or type_instruction.opcode != Op.TypeInt:
            return None
        width = type_instruction.operands[1]
        words = instruction.operands[2:]
        value = words[0] | (words[1] << 32 if len(words) > 1 else 0)
        value &= (1 << width) - 1
        if type_instruction.operands[2] == 1 and value >> (width - 1):
            value -= 1 << width
        return value

    def is_constant(self, id_: int) -> bool:
        instruction = self.defs.get(id_)
        return instruction is not None and instruction.opcode in (
            Op.Constant,
            Op.ConstantTrue,
            Op.ConstantFalse,
            Op.ConstantNull,
            Op.ConstantComposite,
        )
