"""Rule family: explicit layout of buffer, push-constant and explicit-workgroup blocks
(spec "Offset and Stride Assignment", VUID-StandaloneSpirv-None-10684).

Each Block/BufferBlock struct of a Uniform, StorageBuffer, PushConstant or
ShaderRecordBufferKHR variable, each type a PhysicalStorageBuffer pointer points to, and each
Block of a Workgroup variable is checked, with the structs and arrays nested in it, under the
first layout that applies: scalar (``scalarBlockLayout``; for Workgroup
``workgroupMemoryExplicitLayoutScalarBlockLayout``), std140 for a Uniform Block unless
``uniformBufferStandardLayout``, std430 otherwise; relaxed (vectors aligned to their
component, but not straddling 16 bytes) from Vulkan 1.1 or with VK_KHR_relaxed_block_layout.
A member needs an Offset, an array an ArrayStride and a matrix a MatrixStride, each a multiple
of the alignment; members must not overlap, nor (outside scalar layout) sit in the padding
after a struct, array or matrix up to its alignment.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from gpuav.spirv.grammar import Capability, Decoration, Op, StorageClass
from gpuav.validate.block_layout import Alignment, Layout, TypeSizes
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.interface import member_names
from gpuav.validate.shader_facts import enabled, global_variables, variable_storage, variable_type

RULE = "VUID-StandaloneSpirv-None-10684"
_BUFFER_CLASSES = frozenset(
    {
        StorageClass.Uniform,
        StorageClass.StorageBuffer,
        StorageClass.PushConstant,
        StorageClass.ShaderRecordBufferKHR,
        StorageClass.PhysicalStorageBuffer,
    }
)
_DEPTH_LIMIT = 32


@dataclass(frozen=True)
class _Member:
    index: int
    type_id: int
    offset: int
    size: int
    alignment: int
    aggregate: bool  # a struct, array or matrix: its padding is reserved


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    checker = _Checker(context)
    for root, layout in _roots(context):
        checker.type_(root, layout, 0, 0)
    yield from checker.found


def _roots(context: ValidationContext) -> Iterator[tuple[int, Layout]]:
    """Every explicitly laid-out type a variable or a device address reaches, with its layout."""
    defs, decorations = context.def_use.defs, context.decorations
    for variable in global_variables(context):
        storage = variable_storage(variable)
        pointee = variable_type(defs, variable)
        if pointee is None:
            continue
        struct, _arrays = context.types.strip_arrays(pointee)
        block = decorations.is_block(struct)
        if storage == StorageClass.Workgroup:
            if block and _explicit_workgroup(context):
                yield struct, _layout(context, storage, buffer_block=False)
        elif storage in _BUFFER_CLASSES and (block or decorations.is_buffer_block(struct)):
            yield struct, _layout(context, storage, buffer_block=not block)
    for instruction in context.module.globals:
        operands = instruction.operands
        physical = len(operands) > 2 and operands[1] == StorageClass.PhysicalStorageBuffer
        if instruction.opcode == Op.TypePointer and physical:
            yield operands[2], _layout(context, operands[1], buffer_block=False)


def _layout(context: ValidationContext, storage: int, buffer_block: bool) -> Layout:
    vulkan = context.vulkan_version
    relaxed = vulkan >= (1, 1) or "VK_KHR_relaxed_block_layout" in context.extensions
    if storage == StorageClass.Workgroup:
        scalar = enabled(context, "workgroupMemoryExplicitLayoutScalarBlockLayout")
    else:
        scalar = enabled(context, "scalarBlockLayout")
    if scalar:
        return Layout(Alignment.SCALAR, relaxed)
    uniform_block = storage == StorageClass.Uniform and not buffer_block
    if uniform_block and not enabled(context, "uniformBufferStandardLayout"):
        return Layout(Alignment.EXTENDED, relaxed)
    return Layout(Alignment.BASE, relaxed)


def _explicit_workgroup(context: ValidationContext) -> bool:
    return any(
        instruction.operands[:1] == [Capability.WorkgroupMemoryExplicitLayoutKHR]
        for instruction in context.module.capabilities
    )


class _Checker:
    def __init__(self, context: ValidationContext) -> None:
        self.context = context
        self.decorations = context.decorations
        self.sizes = TypeSizes(context.types, context.decorations)
        self.member_names = member_names(context.module)
        self.struct_names = {
            i.operands[0]: i.string(1) for i in context.module.debug_names if i.opcode == Op.Name
        }
        self.found: list[Diagnostic] = []
        self.reported: set[tuple[str, int | None]] = set()
        self.visited: set[tuple[int, Layout, int]] = set()

    def report(self, type_id: int, message: str) -> None:
        instruction = self.context.def_use.defs.get(type_id)
        origin = None if instruction is None else instruction.origin
        if (message, origin) not in self.reported:
            self.reported.add((message, origin))
            self.found.append(Diagnostic(RULE, message, origin))

    def type_(self, type_id: int, layout: Layout, base: int, depth: int) -> None:
        """Check a type placed at byte ``base`` of its block (``base`` matters for straddling)."""
        if depth > _DEPTH_LIMIT:
            return
        opcode = self.sizes.opcode(type_id)
        if opcode in (Op.TypeArray, Op.TypeRuntimeArray):
            self.array(type_id, layout, False, None, base, depth)
        elif opcode == Op.TypeStruct:
            self.struct(type_id, layout, base, depth)

    def struct(self, struct: int, layout: Layout, base: int, depth: int) -> None:
        key = (struct, layout, base % 16)
        if key in self.visited:
            return
        self.visited.add(key)
        members: list[_Member] = []
        for index, member_type in enumerate(self.context.types.member_types(struct)):
            where = self.where(struct, index)
            offset = self.decorations.member_value(struct, index, Decoration.Offset)
            if offset is None:
                self.report(struct, f"{where} has no Offset decoration ({layout.name})")
                continue
            member = self.member(struct, index, member_type, offset, layout)
            members.append(member)
            self.member_rules(struct, member, layout, base, depth)
        self.overlaps(struct, members, layout)

    def member(self, struct: int, index: int, type_id: int, offset: int, layout: Layout) -> _Member:
        sizes = self.sizes
        row_major = self.decorations.member_has(struct, index, Decoration.RowMajor)
        opcode = sizes.opcode(type_id)
        if layout.relaxed and opcode == Op.TypeVector and layout.alignment is not Alignment.SCALAR:
            alignment = sizes.alignment(type_id, Alignment.SCALAR)
        else:
            alignment = sizes.alignment(type_id, layout.alignment, row_major)
        aggregate = opcode in (Op.TypeStruct, Op.TypeArray, Op.TypeRuntimeArray, Op.TypeMatrix)
        size = sizes.member_size(struct, index, type_id)
        return _Member(index, type_id, offset, size, alignment, aggregate)

    def member_rules(
        self, struct: int, member: _Member, layout: Layout, base: int, depth: int
    ) -> None:
        where = self.where(struct, member.index)
        if member.offset % member.alignment:
            self.report(
                struct,
                f"{where} is at Offset {member.offset}, not a multiple of its alignment "
                f"{member.alignment} ({layout.name})",
            )
        opcode = self.sizes.opcode(member.type_id)
        if opcode == Op.TypeVector and layout.relaxed and layout.alignment is not Alignment.SCALAR:
            self.straddle(struct, where, member, base + member.offset)
        row_major = self.decorations.member_has(struct, member.index, Decoration.RowMajor)
        matrix_stride = self.decorations.member_value(struct, member.index, Decoration.MatrixStride)
        if opcode in (Op.TypeArray, Op.TypeRuntimeArray):
            self.array(member.type_id, layout, row_major, (struct, member.index), base, depth)
        elif opcode == Op.TypeMatrix:
            self.matrix(member.type_id, layout, row_major, matrix_stride, struct, where)
        elif opcode == Op.TypeStruct:
            self.struct(member.type_id, layout, base + member.offset, depth + 1)

    def straddle(self, struct: int, where: str, member: _Member, first: int) -> None:
        """Relaxed layout: a vector of up to 16 bytes stays within one 16-byte unit; a larger
        one starts on a 16-byte boundary."""
        last = first + member.size - 1
        if (member.size <= 16 and first // 16 != last // 16) or (member.size > 16 and first % 16):
            self.report(
                struct,
                f"{where} is a vector at Offset {member.offset} that improperly straddles a "
                "16-byte boundary (relaxed block layout)",
            )

    def array(
        self,
        array: int,
        layout: Layout,
        row_major: bool,
        holder: tuple[int, int] | None,
        base: int,
        depth: int,
    ) -> None:
        """An array (of arrays) of a member: every level needs an ArrayStride that is a
        multiple of its alignment and holds its element."""
        sizes = self.sizes
        current = array
        for _ in range(_DEPTH_LIMIT):
            if sizes.opcode(current) not in (Op.TypeArray, Op.TypeRuntimeArray):
                break
            element = sizes.operands(current)[1]
            stride = self.decorations.value(current, Decoration.ArrayStride)
            where = f"array %{current}" + ("" if holder is None else f" ({self.where(*holder)})")
            if stride is None:
                self.report(current, f"{where} has no ArrayStride decoration ({layout.name})")
                return
            alignment = sizes.alignment(current, layout.alignment, row_major)
            if stride % alignment:
                self.report(
                    current,
                    f"{where} has ArrayStride {stride}, not a multiple of its alignment "
                    f"{alignment} ({layout.name})",
                )
            matrix_stride = None
            if holder is not None:
                matrix_stride = self.decorations.member_value(*holder, Decoration.MatrixStride)
            element_size = sizes.size(element, matrix_stride, row_major)
            if stride < element_size:
                self.report(
                    current,
                    f"{where} has ArrayStride {stride}, less than its element's {element_size} "
                    f"bytes: elements overlap ({layout.name})",
                )
            current = element
        opcode = sizes.opcode(current)
        if opcode == Op.TypeStruct:
            self.struct(current, layout, base, depth + 1)
        elif opcode == Op.TypeMatrix and holder is not None:
            matrix_stride = self.decorations.member_value(*holder, Decoration.MatrixStride)
            self.matrix(current, layout, row_major, matrix_stride, holder[0], self.where(*holder))

    def matrix(
        self,
        matrix: int,
        layout: Layout,
        row_major: bool,
        stride: int | None,
        struct: int,
        where: str,
    ) -> None:
        if stride is None:
            self.report(struct, f"{where} is a matrix with no MatrixStride ({layout.name})")
            return
        shape = self.sizes.matrix_shape(matrix, row_major)
        alignment = self.sizes.alignment(matrix, layout.alignment, row_major)
        if stride % alignment:
            self.report(
                struct,
                f"{where} has MatrixStride {stride}, not a multiple of its alignment {alignment} "
                f"({layout.name})",
            )
        vector = shape.vector_components * shape.component_bytes
        if stride < vector:
            self.report(
                struct,
                f"{where} has MatrixStride {stride}, less than its {vector}-byte "
                f"{'rows' if row_major else 'columns'}: they overlap ({layout.name})",
            )

    def overlaps(self, struct: int, members: list[_Member], layout: Layout) -> None:
        """No member starts inside another; outside scalar layout, none starts in the padding
        after a struct, array or matrix up to the next multiple of its alignment."""
        ordered = sorted(members, key=lambda member: (member.offset, member.index))
        for at, member in enumerate(ordered):
            end = member.offset + member.size
            reserved = end
            if member.aggregate and layout.alignment is not Alignment.SCALAR:
                reserved = -(-end // member.alignment) * member.alignment
            for other in ordered[at + 1 :]:
                if other.offset >= reserved:
                    break
                if other.offset < end and member.size and other.size:
                    what = "overlaps"
                elif other.offset >= end:
                    what = "sits in the padding after"
                else:
                    continue
                self.report(
                    struct,
                    f"{self.where(struct, other.index)} at Offset {other.offset} {what} "
                    f"{self.where(struct, member.index)} (bytes {member.offset} to {end - 1}"
                    f"{'' if reserved == end else f', padded to {reserved}'}; {layout.name})",
                )

    def where(self, struct: int, member: int) -> str:
        struct_name = self.struct_names.get(struct) or f"%{struct}"
        member_name = self.member_names.get((struct, member))
        return f"member {member}{f' ({member_name})' if member_name else ''} of {struct_name}"
