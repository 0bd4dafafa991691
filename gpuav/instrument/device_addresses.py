"""Buffer device address checks: every load, store, atomic and memory copy through a
``PhysicalStorageBuffer`` pointer runs only when its bytes lie inside one live buffer and its
address has the alignment its ``Aligned`` memory operand promises.

Find: the pointer's value is the address, so nothing is traced; the bytes are the pointee's
size in its explicit layout (``Offset``, ``ArrayStride``, ``MatrixStride``, as buffer blocks
are sized by ``buffer_spans``), the alignment the instruction's memory operand. Rewrite:

    address = OpBitcast %v2uint %pointer                  (SPIR-V 1.5 and later)
            | OpConvertPtrToU %ulong %pointer, split      (before: needs Int64)
    ok      = gpuav_check_address(instruction, operand, low, high, size, alignment)
    if ok:    the access;  %result = OpPhi ... %null

A failing load gives zero, a failing store or atomic does nothing. Before SPIR-V 1.5 a
pointer can be read only as a 64-bit integer: where the module may not use Int64 (the device
has shaderInt64 off), its device-address accesses stay unchecked, and the findings say why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpuav.instrument.buffer_ranges import RangeGuarder
from gpuav.instrument.buffer_spans import SpanFinder
from gpuav.instrument.consumers import POINTER_OPERANDS
from gpuav.instrument.local_arrays import CHAINS
from gpuav.instrument.loop_bounds import EmitBound, EmitValue, LoopBounds
from gpuav.instrument.loop_versions import Proof
from gpuav.instrument.pass_findings import PassFindings
from gpuav.instrument.record import NO_INSTRUCTION_INDEX
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import Capability, Decoration, MemoryAccess, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Module, version_word

_NOT_ACCESSES = (Op.ArrayLength, Op.AtomicFlagClear, Op.AtomicFlagTestAndSet)
_CHAINS = (Op.AccessChain, Op.InBoundsAccessChain, Op.PtrAccessChain)
# Where the first memory-operand mask is, per instruction.
_MEMORY_OPERANDS = {Op.Load: 3, Op.Store: 2, Op.CopyMemory: 2, Op.CopyMemorySized: 3}
# Mask bits followed by one operand word, in the order the operands follow the mask.
_MASK_OPERANDS = (MemoryAccess.Aligned, MemoryAccess.MakePointerAvailable,
                  MemoryAccess.MakePointerVisible)  # fmt: skip
UNCHECKABLE = "a device address that cannot be read without Int64 before SPIR-V 1.5"


@dataclass(frozen=True)
class AddressSpan:
    """The ``size`` bytes at ``pointer``, which operand ``operand`` of the access is."""

    pointer: int
    operand: int  # 0; 1 for the source of a memory copy
    size: int
    alignment: int  # from the Aligned memory operand; 0: none


@dataclass(frozen=True)
class AddressAccess:
    consumer: Instruction
    spans: tuple[AddressSpan, ...]


AddressFindings = PassFindings[AddressAccess]


def find_address_accesses(
    module: Module, types: Types, decorations: Decorations
) -> AddressFindings:
    sizes = SpanFinder(types, decorations)
    findings = AddressFindings()
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                positions = POINTER_OPERANDS.get(instruction.opcode)
                if positions is None or instruction.opcode in _NOT_ACCESSES:
                    continue
                alignments = _alignments(instruction)
                spans = []
                for operand, at in enumerate(positions):
                    pointer = instruction.operands[at]
                    pointer_type = types.type_of(pointer)
                    if pointer_type is None or not types.is_pointer(pointer_type):
                        continue
                    if types.storage_class(pointer_type) != StorageClass.PhysicalStorageBuffer:
                        continue
                    size = _size(sizes, types, decorations, instruction, pointer)
                    if size is None:
                        findings.unchecked.append(
                            (instruction.origin, "a device-address access of unknown size")
                        )
                        continue
                    spans.append(AddressSpan(pointer, operand, size, alignments[operand]))
                if spans:
                    findings.accesses.append(AddressAccess(instruction, tuple(spans)))
    return findings


def _size(
    sizes: SpanFinder,
    types: Types,
    decorations: Decorations,
    instruction: Instruction,
    pointer: int,
) -> int | None:
    if instruction.opcode == Op.CopyMemorySized:
        return types.constant_value(instruction.operands[2])
    pointee = types.pointee(types.type_of(pointer) or 0)
    matrix = None
    if types.opcode(pointee) == Op.TypeMatrix:
        matrix = _matrix_layout(types, decorations, pointer)
    return sizes.size(pointee, matrix, False)


def _matrix_layout(types: Types, decorations: Decorations, pointer: int) -> tuple[int, bool] | None:
    """A matrix pointer's (MatrixStride, row-major), from the struct member the access chain
    that made it selects last; None where the pointer does not show it."""
    definition = types.defs.get(pointer)
    if definition is None or definition.opcode not in _CHAINS:
        return None
    first = 4 if definition.opcode == Op.PtrAccessChain else 3
    current = types.pointee(types.type_of(definition.operands[2]) or 0)
    layout: tuple[int, bool] | None = None
    for index in definition.operands[first:]:
        opcode = types.opcode(current)
        if opcode == Op.TypeStruct:
            member = types.constant_value(index)
            if member is None:
                return None
            stride = decorations.member_value(current, member, Decoration.MatrixStride)
            row_major = decorations.member_has(current, member, Decoration.RowMajor)
            layout = None if stride is None else (stride, row_major)
            current = types.member_types(current)[member]
        elif opcode in (Op.TypeArray, Op.TypeRuntimeArray, Op.TypeMatrix, Op.TypeVector):
            current = types.element(current)
        else:
            return None
    return layout


def _alignments(instruction: Instruction) -> tuple[int, int]:
    """The Aligned values for the target and source pointers (0 where absent)."""
    at = _MEMORY_OPERANDS.get(instruction.opcode)
    operands = instruction.operands
    if at is None or at >= len(operands):
        return 0, 0
    first, after = _aligned(operands, at)
    if instruction.opcode in (Op.CopyMemory, Op.CopyMemorySized) and after < len(operands):
        return first, _aligned(operands, after)[0]
    return first, first


def _aligned(operands: list[int], at: int) -> tuple[int, int]:
    """(the Aligned value of the mask at ``at``, the position after its operands)."""
    mask = operands[at]
    position = at + 1
    alignment = 0
    for bit in _MASK_OPERANDS:
        if mask & bit:
            if bit == MemoryAccess.Aligned and position < len(operands):
                alignment = operands[position]
            position += 1
    return alignment, position


@dataclass
class AddressGuarder:
    """Guards device-address accesses with ``gpuav_check_address``."""

    guarder: RangeGuarder
    check: int  # gpuav_check_address
    int64: bool  # the module may declare Int64 (for pointers before SPIR-V 1.5)
    # gpuav_address_inside and the layouts, for tests made once before a loop
    inside: int | None = None
    spans: SpanFinder | None = None
    called_inside: bool = False

    def __post_init__(self) -> None:
        builder = self.guarder.builder
        module = builder.module
        self.uint = builder.type_int(32, False)
        self.as_vector = module.version >= version_word(1, 5)
        declared = any(c.operands[0] == Capability.Int64 for c in module.capabilities)
        self.readable = self.as_vector or declared or self.int64

    def guard(self, access: AddressAccess) -> bool:
        """Guard ``access``; False when its pointers cannot be read or its result has no
        null value."""
        if not self.readable:
            return False
        builder = self.guarder.builder
        consumer = access.consumer
        index = consumer.origin if consumer.origin is not None else NO_INSTRUCTION_INDEX

        def condition() -> int:
            ok: int | None = None
            for span in access.spans:
                low, high = self._words(span.pointer)
                passed = builder.op(
                    Op.FunctionCall,
                    builder.type_bool(),
                    self.check,
                    builder.constant_uint(index),
                    builder.constant_uint(span.operand),
                    low,
                    high,
                    builder.constant_uint(span.size & 0xFFFF_FFFF),
                    builder.constant_uint(span.alignment),
                )
                ok = (
                    passed
                    if ok is None
                    else builder.op(Op.LogicalAnd, builder.type_bool(), ok, passed)
                )
            assert ok is not None
            return ok

        return self.guarder.guard_with(consumer, condition)

    def loop_proof(self, access: AddressAccess, bounds: LoopBounds, block: Block) -> Proof | None:
        """How to test, before the loop of ``bounds``, that every span of the access at
        ``consumer`` lies in one live buffer in all the loop's iterations: from the pointer
        the access chains start at (the same in every iteration), the bound of the span's
        end, searched once; and the start's alignment where every step keeps it. None where
        the start changes, an index has no bound or the layout does not tell."""
        if not self.readable or self.inside is None or self.spans is None:
            return None
        parts: list[tuple[EmitValue, EmitBound, int]] = []
        for span in access.spans:
            walked = self._walk(span.pointer, access.consumer)
            if walked is None:
                return None
            root, constant, terms = walked
            start = bounds.invariant(root, block)
            end = bounds.span_end(constant + span.size, terms, block)
            alignment = span.alignment
            if start is None or end is None:
                return None
            if alignment and any(part % alignment for part in (constant, *(s for _, s in terms))):
                return None
            parts.append((start, end, alignment))
        builder = self.guarder.builder
        inside = self.inside

        def emit(to_test: Callable[[], None]) -> list[int]:
            to_test()
            self.called_inside = True
            bool_, uint = builder.type_bool(), self.uint
            conditions = []
            for start, end, alignment in parts:
                low, high = self._words(start(builder))
                length, valid = end(builder)
                conditions += valid
                conditions.append(builder.op(Op.FunctionCall, bool_, inside, low, high, length))
                if alignment:
                    stray = builder.op(
                        Op.BitwiseAnd, uint, low, builder.constant_uint(alignment - 1)
                    )
                    conditions.append(builder.op(Op.IEqual, bool_, stray, builder.constant_uint(0)))
            return conditions

        return Proof(emit)

    def _walk(
        self, pointer: int, consumer: Instruction
    ) -> tuple[int, int, list[tuple[int, int]]] | None:
        """(the pointer the access chains start at, constant bytes, (index, stride) terms)."""
        types = self.guarder.types
        assert self.spans is not None
        steps: list[tuple[int, int | None]] = []
        while True:
            definition = types.defs.get(pointer)
            if definition is None:
                return None
            if definition.opcode in CHAINS:
                steps[:0] = [(index, None) for index in definition.operands[3:]]
            elif definition.opcode == Op.PtrAccessChain:
                base_type = types.type_of(definition.operands[2]) or 0
                stride = self.spans.decorations.value(base_type, Decoration.ArrayStride)
                if stride is None:
                    return None
                steps[:0] = [
                    (definition.operands[3], stride),
                    *((index, None) for index in definition.operands[4:]),
                ]
            elif definition.opcode != Op.CopyObject:
                break
            pointer = definition.operands[2]
        pointer_type = types.type_of(pointer)
        if pointer_type is None or not types.is_pointer(pointer_type):
            return None
        offsets = self.spans.offsets(types.pointee(pointer_type), steps, consumer)
        if offsets is None:
            return None
        constant, terms, _ = offsets
        return pointer, constant, [(term.index, term.stride) for term in terms]

    def _words(self, pointer: int) -> tuple[int, int]:
        """The pointer's address as (low, high) 32-bit words, emitted in place."""
        builder = self.guarder.builder
        uint = self.uint
        if self.as_vector:
            pair = builder.op(Op.Bitcast, builder.type_vector(uint, 2), pointer)
            return (
                builder.op(Op.CompositeExtract, uint, pair, 0),
                builder.op(Op.CompositeExtract, uint, pair, 1),
            )
        builder.capability(Capability.Int64)
        wide = builder.type_int(64, False)
        address = builder.op(Op.ConvertPtrToU, wide, pointer)
        shifted = builder.op(
            Op.ShiftRightLogical, wide, address, builder.constant_uint(32, width=64)
        )
        return builder.op(Op.UConvert, uint, address), builder.op(Op.UConvert, uint, shifted)
