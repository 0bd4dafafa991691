"""The find phase of the buffer-range checks: which bytes of a uniform or storage buffer each
memory access touches, as an expression of its indices.

Every load, store, atomic and memory copy whose pointer comes from a buffer descriptor
variable through access chains is traced back to the variable. Walking the chain's indices
through the block's explicit layout (``Offset``, ``ArrayStride``, ``MatrixStride``,
``RowMajor``) gives the first byte as a constant plus ``index * stride`` terms, and the
accessed type gives the span's size. Indices that select the descriptor in an array of
blocks are kept apart: they choose which bound range the span is compared with. Nothing here
changes the module.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuav.instrument.consumers import POINTER_OPERANDS
from gpuav.instrument.pass_findings import PassFindings
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import Decoration, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module

_CHAINS = (Op.AccessChain, Op.InBoundsAccessChain)
_NOT_ACCESSES = (Op.ArrayLength, Op.AtomicFlagClear, Op.AtomicFlagTestAndSet)
_BUFFER_CLASSES = (StorageClass.Uniform, StorageClass.StorageBuffer)
_POINTER_BYTES = 8  # a PhysicalStorageBuffer pointer stored in a buffer


@dataclass(frozen=True)
class ByteTerm:
    """``index * stride`` bytes; ``index`` is an integer id of any width and signedness."""

    index: int
    stride: int


@dataclass(frozen=True)
class BufferSpan:
    """One pointer's bytes ``[constant + sum(terms), ... + size)`` in one descriptor's range."""

    variable: int
    descriptor_set: int
    binding: int
    storage: bool  # a storage buffer (else a uniform buffer)
    descriptor_indices: tuple[int, ...]  # ids, outermost array first
    descriptor_lengths: tuple[int | None, ...]  # ids of the array lengths; None: runtime
    constant: int
    terms: tuple[ByteTerm, ...]
    size: int


@dataclass(frozen=True)
class BufferAccess:
    consumer: Instruction
    spans: tuple[BufferSpan, ...]


BufferFindings = PassFindings[BufferAccess]


class _Unknown(Exception):
    """A pointer into a buffer whose bytes cannot be told (the reason is the message)."""


def find_buffer_accesses(module: Module, types: Types, decorations: Decorations) -> BufferFindings:
    finder = SpanFinder(types, decorations)
    findings = BufferFindings()
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                positions = POINTER_OPERANDS.get(instruction.opcode)
                if positions is None or instruction.opcode in _NOT_ACCESSES:
                    continue
                spans: list[BufferSpan] = []
                for at in positions:
                    try:
                        span = finder.span(instruction, instruction.operands[at])
                    except _Unknown as reason:
                        findings.unchecked.append((instruction.origin, str(reason)))
                        span = None
                    if span is not None:
                        spans.append(span)
                if spans:
                    findings.accesses.append(BufferAccess(instruction, tuple(spans)))
    return findings


class SpanFinder:
    """Byte spans in explicit layouts: of a descriptor access (``span``), of a type (``size``,
    which the device-address checks use too)."""

    def __init__(self, types: Types, decorations: Decorations) -> None:
        self.types = types
        self.decorations = decorations

    def span(self, consumer: Instruction, pointer: int) -> BufferSpan | None:
        """The bytes ``pointer`` reaches, None when it is not into a buffer descriptor."""
        types = self.types
        pointer_type = types.type_of(pointer)
        if pointer_type is None or not types.is_pointer(pointer_type):
            return None
        if types.storage_class(pointer_type) not in _BUFFER_CLASSES:
            return None
        variable, steps = self._trace(pointer)
        if variable is None:
            return None
        block, arrays = types.strip_arrays(types.pointee(variable.operands[0]))
        if types.opcode(block) != Op.TypeStruct:
            return None
        storage = variable.operands[2] == StorageClass.StorageBuffer or (
            self.decorations.is_buffer_block(block)
        )
        if not storage and not self.decorations.is_block(block):
            return None
        descriptor_set = self.decorations.descriptor_set(variable.operands[1])
        binding = self.decorations.binding(variable.operands[1])
        if descriptor_set is None or binding is None:
            return None
        selecting = steps[: len(arrays)]
        if len(selecting) < len(arrays) or any(stride is not None for _, stride in selecting):
            raise _Unknown("a pointer to a whole descriptor array or a moved block pointer")
        indices = tuple(index for index, _ in selecting)
        lengths = tuple(
            None if types.is_runtime_array(array) else types.definition(array).operands[2]
            for array in arrays
        )
        constant, terms, size = self._layout(block, steps[len(arrays) :], consumer)
        return BufferSpan(
            variable.operands[1],
            descriptor_set,
            binding,
            storage,
            indices,
            lengths,
            constant,
            tuple(terms),
            size,
        )

    def _trace(self, pointer: int) -> tuple[Instruction | None, list[tuple[int, int | None]]]:
        """The variable under ``pointer`` and the chain's steps from it: (index, None) for an
        access-chain index, (element, stride) for an OpPtrAccessChain element."""
        steps: list[tuple[int, int | None]] = []
        seen: set[int] = set()
        while pointer not in seen:
            seen.add(pointer)
            definition = self.types.defs.get(pointer)
            if definition is None:
                return None, []
            opcode = definition.opcode
            if opcode == Op.Variable:
                return definition, steps
            if opcode in _CHAINS:
                steps[:0] = [(index, None) for index in definition.operands[3:]]
            elif opcode == Op.PtrAccessChain:
                base_type = self.types.type_of(definition.operands[2]) or 0
                if self._is_block(self.types.pointee(base_type)):
                    raise _Unknown("OpPtrAccessChain moving a block pointer to another descriptor")
                stride = self.decorations.value(base_type, Decoration.ArrayStride)
                if stride is None:
                    raise _Unknown("OpPtrAccessChain on a pointer without ArrayStride")
                steps[:0] = [
                    (definition.operands[3], stride),
                    *((index, None) for index in definition.operands[4:]),
                ]
            elif opcode != Op.CopyObject:
                raise _Unknown(f"a buffer pointer made by {definition.name}")
            pointer = definition.operands[2]
        return None, []

    def offsets(
        self, pointee: int, steps: list[tuple[int, int | None]], consumer: Instruction
    ) -> tuple[int, list[ByteTerm], int] | None:
        """(constant bytes, index terms, size) of the chain ``steps`` walks from a pointer to
        ``pointee`` (steps as ``_trace`` gives them); None where the layout does not tell."""
        try:
            return self._layout(pointee, steps, consumer)
        except _Unknown:
            return None

    def _is_block(self, type_id: int) -> bool:
        return self.types.opcode(type_id) == Op.TypeStruct and (
            self.decorations.is_block(type_id) or self.decorations.is_buffer_block(type_id)
        )

    def _layout(
        self, block: int, steps: list[tuple[int, int | None]], consumer: Instruction
    ) -> tuple[int, list[ByteTerm], int]:
        types = self.types
        constant = 0
        terms: list[ByteTerm] = []
        current = block
        # The layout of the matrix being walked: (MatrixStride, row-major), from its member.
        matrix: tuple[int, bool] | None = None
        in_row = False  # a column of a row-major matrix: components MatrixStride apart

        def add(index: int, stride: int) -> None:
            nonlocal constant
            value = types.constant_value(index)
            if value is not None and value >= 0:
                constant += value * stride
            else:
                terms.append(ByteTerm(index, stride))

        for index, element_stride in steps:
            if element_stride is not None:
                add(index, element_stride)
                continue
            opcode = types.opcode(current)
            if opcode == Op.TypeStruct:
                member = types.constant_value(index)
                members = types.member_types(current)
                if member is None or not 0 <= member < len(members):
                    raise _Unknown("a struct member chosen by a non-constant index")
                offset = self.decorations.member_value(current, member, Decoration.Offset)
                if offset is None:
                    raise _Unknown("a block member without an Offset")
                constant += offset
                matrix = self._matrix_layout(current, member)
                current = members[member]
            elif opcode in (Op.TypeArray, Op.TypeRuntimeArray):
                stride = self.decorations.value(current, Decoration.ArrayStride)
                if stride is None:
                    raise _Unknown("an array without an ArrayStride")
                add(index, stride)
                current = types.element(current)
            elif opcode == Op.TypeMatrix:
                if matrix is None:
                    raise _Unknown("a matrix without a MatrixStride")
                stride, row_major = matrix
                column = types.element(current)
                add(index, self._scalar_bytes(column) if row_major else stride)
                in_row = row_major
                current = column
            elif opcode == Op.TypeVector:
                component = self._scalar_bytes(current)
                add(index, matrix[0] if in_row and matrix is not None else component)
                current = types.element(current)
                in_row = False
            else:
                raise _Unknown(f"an access chain into a {types.definition(current).name}")
        size = self.size(current, matrix, in_row)
        if size is None:
            raise _Unknown(f"{consumer.name} of a type without a fixed size")
        return constant, terms, size

    def _matrix_layout(self, struct: int, member: int) -> tuple[int, bool] | None:
        stride = self.decorations.member_value(struct, member, Decoration.MatrixStride)
        if stride is None:
            return None
        return stride, self.decorations.member_has(struct, member, Decoration.RowMajor)

    def _scalar_bytes(self, type_id: int) -> int:
        return self.types.width(self.types.scalar(type_id)) // 8

    def size(self, type_id: int, matrix: tuple[int, bool] | None, in_row: bool) -> int | None:
        """Bytes from the first to one past the last byte a value of ``type_id`` occupies."""
        types = self.types
        opcode = types.opcode(type_id)
        if opcode in (Op.TypeInt, Op.TypeFloat, Op.TypeBool):
            return types.width(type_id) // 8
        if opcode == Op.TypePointer:
            return _POINTER_BYTES
        if opcode == Op.TypeVector:
            count = types.component_count(type_id)
            component = self._scalar_bytes(type_id)
            if in_row and matrix is not None:
                return (count - 1) * matrix[0] + component
            return count * component
        if opcode == Op.TypeMatrix:
            if matrix is None:
                return None
            stride, row_major = matrix
            columns = types.component_count(type_id)
            rows = types.component_count(types.element(type_id))
            component = self._scalar_bytes(type_id)
            if row_major:
                return (rows - 1) * stride + columns * component
            return (columns - 1) * stride + rows * component
        if opcode == Op.TypeArray:
            length = types.array_length(type_id)
            array_stride = self.decorations.value(type_id, Decoration.ArrayStride)
            element = self.size(types.element(type_id), matrix, False)
            if length is None or array_stride is None or element is None or length < 1:
                return None
            return (length - 1) * array_stride + element
        if opcode == Op.TypeStruct:
            end = 0
            for member, member_type in enumerate(types.member_types(type_id)):
                offset = self.decorations.member_value(type_id, member, Decoration.Offset)
                size = self.size(member_type, self._matrix_layout(type_id, member), False)
                if offset is None or size is None:
                    return None
                end = max(end, offset + size)
            return end
        return None
