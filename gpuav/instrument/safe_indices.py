"""Safe descriptor indices for the guarded copies of an access (descriptor_bounds).

The guard's branch alone does not keep a bad index away from the driver. lavapipe runs the
SIMD code of a branch no lane takes, and fetches the descriptor of a dynamically uniform
index from the first active lane, or from lane 0 when none is: with the raw index it read
``tints[2]`` of a two-descriptor array, memory past the descriptor set (stale and non-zero
after the app had freed other objects: the instrumented tessellation shader crashed). So the
guarded copies index with an index that is in bounds in every lane and equal to the original
one wherever the check passed: each dimension modulo its length. Never ``ok ? index : 0``:
a driver may sink that select into the branch and fold it with the branch condition (NIR
did, and the crash stayed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuav.instrument.accesses import DescriptorAccess, DescriptorLookup
from gpuav.instrument.state_reader import TABLE_LENGTH
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction

if TYPE_CHECKING:
    from gpuav.instrument.descriptor_bounds import Guarder


@dataclass
class SafeIndices:
    """Index id -> an index in bounds that equals it wherever the check passed: what the
    guarded copies use (``indices`` of the arrays, ``elements`` of OpPtrAccessChain)."""

    indices: dict[int, int] = field(default_factory=dict)
    elements: dict[int, int] = field(default_factory=dict)

    def use_in(self, link: Instruction, clone: Instruction, levels: int) -> None:
        """Put safe indices where ``clone`` (a copy of ``link``) chooses a descriptor: the
        first ``levels`` indices of an access chain (the arrays its base points to), or an
        OpPtrAccessChain's element (which moves the block, seed 003)."""
        operands = clone.operands
        if link.opcode == Op.PtrAccessChain:
            operands[3] = self.elements.get(operands[3], operands[3])
        elif link.opcode in (Op.AccessChain, Op.InBoundsAccessChain):
            for at in range(3, min(len(operands), 3 + levels)):
                operands[at] = self.indices.get(operands[at], operands[at])


@dataclass
class SafeIndexer:
    """Emits one access's safe indices at the guarder's insert point (before the branch)."""

    guarder: Guarder

    def for_access(self, access: DescriptorAccess, ok: int) -> SafeIndices:
        safe = SafeIndices()
        for lookup in access.lookups:
            # a merged lookup's pointer was chosen before the guard: left as it is
            if isinstance(lookup, DescriptorLookup) and not _constants_inside(lookup):
                self._lookup(lookup, ok, safe)
        return safe

    def array_levels(self, pointer: int) -> int:
        """How many array dimensions an access chain on ``pointer`` indexes first."""
        types = self.guarder.types
        pointer_type = types.type_of(pointer)
        if pointer_type is None or not types.is_pointer(pointer_type):
            return 0
        return len(types.strip_arrays(types.pointee(pointer_type))[1])

    def _lookup(self, lookup: DescriptorLookup, ok: int, safe: SafeIndices) -> None:
        """Each dimension modulo its length; a seed-003 element becomes
        ``(base + element) % total - base`` of the safe base. A runtime array takes the
        descriptor state's length; one of more dimensions falls back to ``ok ? index : 0``."""
        guarder = self.guarder
        builder, uint, as_uint = guarder.builder, guarder.uint, guarder.as_uint
        lengths = [as_uint(length) for length in lookup.lengths if length is not None]
        if lookup.runtime_sized:
            state_length = self._state_length(lookup)
            if state_length is None:
                self._selected(lookup, ok, safe)
                return
            lengths = [state_length]
        kept = []
        for index, length in zip(lookup.indices, lengths, strict=True):
            if self._constant_inside(index, length):
                kept.append(as_uint(index))
                continue
            # an index shared by two lookups (or dimensions) fits the shorter of them
            wrapped = safe.indices.get(index, as_uint(index))
            safe.indices[index] = builder.op(Op.UMod, uint, wrapped, length)
            kept.append(safe.indices[index])
        if lookup.element is None or lookup.element in safe.elements:
            return
        flat = kept[0] if kept else builder.constant_uint(0)
        total = lengths[0] if lengths else builder.constant_uint(1)
        for index, length in zip(kept[1:], lengths[1:], strict=True):
            flat = builder.op(Op.IAdd, uint, builder.op(Op.IMul, uint, flat, length), index)
            total = builder.op(Op.IMul, uint, total, length)
        moved = builder.op(Op.IAdd, uint, flat, as_uint(lookup.element))
        wrapped = builder.op(Op.UMod, uint, moved, total)
        safe.elements[lookup.element] = builder.op(Op.ISub, uint, wrapped, flat)

    def _selected(self, lookup: DescriptorLookup, ok: int, safe: SafeIndices) -> None:
        builder, types = self.guarder.builder, self.guarder.types
        values = [(index, safe.indices) for index in lookup.indices]
        if lookup.element is not None:
            values.append((lookup.element, safe.elements))
        for value, into in values:
            type_id = types.type_of(value)
            if type_id is not None and value not in into:
                zero = builder.constant_null(type_id)
                into[value] = builder.op(Op.Select, type_id, ok, value, zero)

    def _constant_inside(self, index: int, length: int) -> bool:
        types = self.guarder.types
        value, size = types.constant_value(index), types.constant_value(length)
        return value is not None and size is not None and 0 <= value < size

    def _state_length(self, lookup: DescriptorLookup) -> int | None:
        """A one-dimensional runtime array's length by the descriptor state, at least 1 (a
        divisor), or None."""
        guarder = self.guarder
        # read once per function with its binding's table (descriptor_bounds)
        table = guarder.tables_here.get(id(lookup))
        if table is None or len(lookup.lengths) != 1:
            return None
        builder, uint = guarder.builder, guarder.uint
        length = builder.op(Op.CompositeExtract, uint, table, TABLE_LENGTH)
        empty = builder.op(Op.IEqual, guarder.bool_, length, builder.constant_uint(0))
        return builder.op(Op.Select, uint, empty, builder.constant_uint(1), length)


def _constants_inside(lookup: DescriptorLookup) -> bool:
    """Every index a constant inside a constant-length array: nothing to make safe."""
    return (
        lookup.static_length is not None
        and lookup.static_index is not None
        and not lookup.statically_out_of_bounds
    )
