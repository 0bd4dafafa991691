"""Alignments and sizes of explicitly laid-out types (spec "Offset and Stride Assignment").

Three alignments are defined per type: *scalar* (the component size), *base* (std430: vectors
of 2 take twice, of 3 or 4 four times the scalar), *extended* (std140: arrays and structs
rounded up to 16). A matrix is an array of its columns, or of its rows when RowMajor. Sizes are
tight: a member ends at its last byte, so an array's is ``stride * (length - 1)`` plus its
element's size. Every function is total on broken modules (unknown ids count as 4 bytes).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import Decoration, Op, StorageClass

_DEPTH_LIMIT = 32  # types nest no deeper in a valid module; a cycle must not recurse forever


class Alignment(Enum):
    SCALAR = "scalar"
    BASE = "base"
    EXTENDED = "extended"


@dataclass(frozen=True)
class Layout:
    """The rules one block is checked under."""

    alignment: Alignment
    relaxed: bool  # vectors need only their scalar alignment, but must not straddle 16 bytes

    @property
    def name(self) -> str:
        if self.alignment is Alignment.SCALAR:
            return "scalar block layout"
        standard = "std140" if self.alignment is Alignment.EXTENDED else "std430"
        return f"{standard}{' (relaxed)' if self.relaxed else ''}"


@dataclass(frozen=True)
class MatrixShape:
    """A matrix as the array the spec defines it as: ``count`` vectors of ``vector`` bytes."""

    count: int
    vector_components: int
    component_bytes: int


class TypeSizes:
    """Alignments and sizes, with a member's strides and majorness taken from decorations."""

    def __init__(self, types: Types, decorations: Decorations) -> None:
        self.types = types
        self.decorations = decorations

    def opcode(self, type_id: int) -> int:
        instruction = self.types.defs.get(type_id)
        return -1 if instruction is None else instruction.opcode

    def operands(self, type_id: int) -> list[int]:
        instruction = self.types.defs.get(type_id)
        return [] if instruction is None else instruction.operands

    # Scalars and vectors
    def scalar_bytes(self, type_id: int) -> int:
        opcode, operands = self.opcode(type_id), self.operands(type_id)
        if opcode in (Op.TypeInt, Op.TypeFloat) and len(operands) > 1:
            return max(operands[1] // 8, 1)
        if opcode == Op.TypePointer and len(operands) > 1:
            return 8 if operands[1] == StorageClass.PhysicalStorageBuffer else 4
        return 4

    def vector_parts(self, type_id: int) -> tuple[int, int]:
        """(components, bytes per component) of a vector."""
        operands = self.operands(type_id)
        if len(operands) < 3:
            return 1, 4
        return operands[2], self.scalar_bytes(operands[1])

    def matrix_shape(self, type_id: int, row_major: bool) -> MatrixShape:
        operands = self.operands(type_id)
        columns = operands[2] if len(operands) > 2 else 1
        rows, component = self.vector_parts(operands[1]) if len(operands) > 1 else (1, 4)
        if row_major:
            return MatrixShape(rows, columns, component)
        return MatrixShape(columns, rows, component)

    # Alignments
    def alignment(
        self, type_id: int, kind: Alignment, row_major: bool = False, depth: int = 0
    ) -> int:
        """``kind`` alignment of a type; ``row_major`` for a matrix (or array of matrices)."""
        if depth > _DEPTH_LIMIT:
            return 1
        opcode = self.opcode(type_id)
        if opcode == Op.TypeVector:
            components, component = self.vector_parts(type_id)
            return _vector_alignment(components, component, kind)
        if opcode == Op.TypeMatrix:
            shape = self.matrix_shape(type_id, row_major)
            vector = _vector_alignment(shape.vector_components, shape.component_bytes, kind)
            return _round_up(vector, 16) if kind is Alignment.EXTENDED else vector
        if opcode in (Op.TypeArray, Op.TypeRuntimeArray):
            element = self.operands(type_id)[1] if len(self.operands(type_id)) > 1 else 0
            inner = self.alignment(element, kind, row_major, depth + 1)
            return _round_up(inner, 16) if kind is Alignment.EXTENDED else inner
        if opcode == Op.TypeStruct:
            largest = 1
            for member, member_type in enumerate(self.types.member_types(type_id)):
                member_row_major = self.decorations.member_has(type_id, member, Decoration.RowMajor)
                largest = max(
                    largest, self.alignment(member_type, kind, member_row_major, depth + 1)
                )
            return _round_up(largest, 16) if kind is Alignment.EXTENDED else largest
        return self.scalar_bytes(type_id)

    # Sizes
    def size(
        self,
        type_id: int,
        matrix_stride: int | None = None,
        row_major: bool = False,
        depth: int = 0,
    ) -> int:
        """Bytes from a value's first to its last byte, with the strides the module gives."""
        if depth > _DEPTH_LIMIT:
            return 0
        opcode = self.opcode(type_id)
        if opcode == Op.TypeVector:
            components, component = self.vector_parts(type_id)
            return components * component
        if opcode == Op.TypeMatrix:
            shape = self.matrix_shape(type_id, row_major)
            vector = shape.vector_components * shape.component_bytes
            stride = vector if matrix_stride is None else matrix_stride
            return stride * (shape.count - 1) + vector
        if opcode in (Op.TypeArray, Op.TypeRuntimeArray):
            operands = self.operands(type_id)
            element = operands[1] if len(operands) > 1 else 0
            element_size = self.size(element, matrix_stride, row_major, depth + 1)
            stride = self.decorations.value(type_id, Decoration.ArrayStride) or element_size
            length = self.length(type_id)
            return stride * (length - 1) + element_size
        if opcode == Op.TypeStruct:
            end = 0
            for member, member_type in enumerate(self.types.member_types(type_id)):
                offset = self.decorations.member_value(type_id, member, Decoration.Offset) or 0
                end = max(end, offset + self.member_size(type_id, member, member_type, depth + 1))
            return end
        return self.scalar_bytes(type_id)

    def member_size(self, struct: int, member: int, member_type: int, depth: int = 0) -> int:
        return self.size(
            member_type,
            self.decorations.member_value(struct, member, Decoration.MatrixStride),
            self.decorations.member_has(struct, member, Decoration.RowMajor),
            depth,
        )

    def length(self, array_type: int) -> int:
        """An array's length; 1 for runtime arrays and specialization-constant lengths."""
        if self.opcode(array_type) != Op.TypeArray:
            return 1
        operands = self.operands(array_type)
        value = self.types.constant_value(operands[2]) if len(operands) > 2 else None
        return value if value is not None and value > 0 else 1


def _vector_alignment(components: int, component: int, kind: Alignment) -> int:
    if kind is Alignment.SCALAR:
        return component
    return component * (2 if components == 2 else 4 if components > 2 else 1)


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple
