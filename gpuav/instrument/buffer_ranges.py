"""The rewrite phase of the buffer-range checks: each access found by ``buffer_spans`` runs
only when every byte it touches lies inside the range bound to its descriptor.

    range  = gpuav_buffer_range(set, binding, descriptor index)
             (once per function, in its first block, when the descriptor index is constant)
    offset = constant + index * stride + ...      32-bit, with flags for a negative index and
                                                  a sum that wrapped (UMulExtended, IAddCarry)
    ok     = gpuav_check_buffer_range(instruction, descriptor index, set << 24 | storage | binding,
                                      offset, size, range, flags)   (writes the record)
    if ok:   the access
    %result = OpPhi %type %access_result %ok_block %null %head_block

A span with at most one index term and a range read once per function first takes a quick
test: ``index < limit``, the number of index values that fit, computed once beside the range
(with no term, whether the span fits); only where it fails does the full check run. Inside a
loop an access then costs one compare and a branch.

A load that fails gives zero, a store or atomic that fails does nothing; a correct program
computes what it did before. Where the layer does not know the range (RANGE_UNKNOWN) the
check passes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from gpuav.instrument import host_terms, record
from gpuav.instrument.binding_tables import BindingTables
from gpuav.instrument.buffer_spans import BufferAccess, BufferSpan
from gpuav.instrument.consumers import NULLABLE_RESULTS
from gpuav.instrument.descriptor_state import RANGE_UNKNOWN
from gpuav.instrument.loop_bounds import EmitBound, LoopBounds, described
from gpuav.instrument.loop_versions import Proof
from gpuav.instrument.record import NO_INSTRUCTION_INDEX, ErrorCode
from gpuav.instrument.record_writer import RecordWriter
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import RESULT_INDEX, Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function


def _descriptor(
    span: BufferSpan,
) -> tuple[int, int, tuple[int, ...], tuple[int | None, ...]]:
    return span.descriptor_set, span.binding, span.descriptor_indices, span.descriptor_lengths


def _nothing_to_test(to_test: Callable[[], None]) -> list[int]:
    to_test()
    return []


def define_range_check(builder: Builder, writer: RecordWriter) -> tuple[int, int]:
    """``bool gpuav_check_buffer_range(uint instruction_index, uint descriptor_index, uint
    set_binding, uint offset, uint size, uint range, uint flags)``: whether the span fits
    (or the range is unknown), writing the buffer-range record when it does not. Returns
    its id and that of the record writer it calls."""
    uint = builder.type_int(32, False)
    bool_ = builder.type_bool()

    def passes(parameters: list[int]) -> int:
        _, _, _, offset, size, bound, flags = parameters
        unknown = builder.op(Op.IEqual, bool_, bound, builder.constant_uint(RANGE_UNKNOWN))
        clean = builder.op(Op.IEqual, bool_, flags, builder.constant_uint(0))
        starts_inside = builder.op(Op.ULessThanEqual, bool_, offset, bound)
        room = builder.op(Op.ISub, uint, bound, offset)
        ends_inside = builder.op(Op.ULessThanEqual, bool_, size, room)
        inside = builder.op(Op.LogicalAnd, bool_, starts_inside, ends_inside)
        fits = builder.op(Op.LogicalAnd, bool_, clean, inside)
        return builder.op(Op.LogicalOr, bool_, unknown, fits)

    return writer.define_check(
        ErrorCode.BUFFER_OUT_OF_BOUNDS,
        "gpuav_check_buffer_range",
        "gpuav_write_range_record",
        passes,
    )


@dataclass
class RangeGuarder:
    """Guards one access at a time; accesses of one block must come last first."""

    builder: Builder
    def_use: DefUse
    types: Types
    buffer_range: int  # gpuav_buffer_range
    check_range: int  # gpuav_check_buffer_range
    # a changing descriptor index reads only its descriptor's word (gpuav_range_in_table),
    # against its binding's table read once per function
    tables: BindingTables | None = None
    range_in_table: int | None = None
    # gpuav_binding_fits: every descriptor of a binding at once, before a loop
    binding_fits: int | None = None
    called_binding_fits: bool = False
    # (function id, set, binding, flat descriptor index) -> the range read in the function's
    # first block
    _hoisted: dict[tuple[int, int, int, int], int] = field(default_factory=dict)
    called_range_in_table: bool = False
    # (function id, range id, constant, size, stride) -> the quick test's hoisted value
    _quick: dict[tuple[int, int, int, int, int], int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.uint = self.builder.type_int(32, False)
        self.bool_ = self.builder.type_bool()
        self._pair: int | None = None

    def guard(self, access: BufferAccess) -> bool:
        """Guard ``access``; False when its result has no null value to stand in for it."""
        consumer = access.consumer
        if not self.nullable(consumer):
            return False  # before anything is emitted: the module stays as it was
        function = self.function_of(consumer)
        hoisted = [self.hoisted_range(function, *_descriptor(span)) for span in access.spans]
        tables = [
            None if bound is not None else self.hoisted_table(function, *_descriptor(span)[:2])
            for span, bound in zip(access.spans, hoisted, strict=True)
        ]
        quick = [
            None if bound is None else self._quick_test(function, span, bound)
            for span, bound in zip(access.spans, hoisted, strict=True)
        ]
        index = consumer.origin if consumer.origin is not None else NO_INSTRUCTION_INDEX

        def condition() -> int:
            ok: int | None = None
            for span, bound, test, table in zip(access.spans, hoisted, quick, tables, strict=True):
                if bound is None:
                    here = self.range_here(*_descriptor(span), table=table)
                    passed = self._check(index, span, here)
                elif test is None:
                    passed = self._check(index, span, bound)
                else:
                    passed = self.builder.or_else(
                        self._quick_pass(span, test), partial(self._check, index, span, bound)
                    )
                ok = (
                    passed if ok is None else self.builder.op(Op.LogicalAnd, self.bool_, ok, passed)
                )
            assert ok is not None
            return ok

        return self.guard_with(consumer, condition)

    # -- a test before a loop, for all its iterations at once ------------------------------

    def loop_proof(self, access: BufferAccess, bounds: LoopBounds, block: Block) -> Proof | None:
        """How to test, before the loop of ``bounds``, that every span of the access at
        ``consumer`` fits in all the loop's iterations: the bound of the span's end against
        its range (read once per function). None where the descriptor index is not constant
        or an index has no bound."""
        if not self.nullable(access.consumer):
            return Proof(_nothing_to_test, host=())  # the guard leaves it unchecked
        function = bounds.loop.function
        ends: list[tuple[BufferSpan, EmitBound]] = []
        host: list[host_terms.Term] | None = []
        for span in access.spans:
            flat = self.constant_flat(*_descriptor(span)[2:])
            if flat is None and (
                len(span.descriptor_indices) != 1 or not self.hoisted_table_available()
            ):
                return None
            if any(self._width(term.index) > 32 for term in span.terms):
                return None
            terms = [(term.index, term.stride) for term in span.terms]
            end = bounds.span_end(span.constant + span.size, terms, block)
            if end is None:
                return None
            ends.append((span, end))
            end_bound = described(end)
            if host is not None and end_bound is not None:
                where = (span.descriptor_set, span.binding)
                host.append(
                    host_terms.Fits(*where, 0, end_bound)
                    if flat is None
                    else host_terms.Within(end_bound, *where, flat)
                )
            else:
                host = None

        def emit(to_test: Callable[[], None]) -> list[int]:
            ranges = [self._range_or_table(function, span) for span, _ in ends]
            to_test()
            conditions = []
            for (bound, table), (_, end) in zip(ranges, ends, strict=True):
                value, valid = end(self.builder)
                conditions += valid
                if table is None:
                    fits = self.builder.op(Op.ULessThanEqual, self.bool_, value, bound)
                else:
                    fits = self._every_range_fits(table, value)
                conditions.append(fits)
            return conditions

        return Proof(emit, host=None if host is None else tuple(host))

    def hoisted_table_available(self) -> bool:
        """Whether a changing descriptor index can be proven for all its descriptors."""
        tables = self.tables
        return tables is not None and tables.available and self.binding_fits is not None

    def _range_or_table(self, function: Function, span: BufferSpan) -> tuple[int, int | None]:
        """(the range read once per function, None) for a constant descriptor index; (0,
        the binding's table) for one that changes, whose reads the descriptor check keeps
        below the binding's length in the loop's copy."""
        bound = self.hoisted_range(function, *_descriptor(span))
        if bound is not None:
            return bound, None
        table = self.hoisted_table(function, span.descriptor_set, span.binding)
        assert table is not None
        return 0, table

    def _every_range_fits(self, table: int, end: int) -> int:
        """Whether every descriptor of the binding is bound to at least ``end`` bytes."""
        assert self.binding_fits is not None
        self.called_binding_fits = True
        builder = self.builder
        zero = builder.constant_uint(0)
        return builder.op(Op.FunctionCall, self.bool_, self.binding_fits, table, zero, end)

    # -- the quick test: one compare per access, against values read once per function ---

    def _quick_test(self, function: Function, span: BufferSpan, bound: int) -> int | None:
        """For a span of at most one 32-bit index term, a value computed once in the
        function's first block: with no term, whether the span fits; with one, how many
        index values fit (``index < limit`` passes). None for other spans."""
        if len(span.terms) > 1:
            return None
        stride = span.terms[0].stride if span.terms else 0
        if span.terms and (stride <= 0 or self._width(span.terms[0].index) > 32):
            return None
        key = (function.id, bound, span.constant, span.size, stride)
        if key in self._quick:
            return self._quick[key]
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        need = span.constant + span.size
        self._position_after(function, bound)
        if need > 0xFFFF_FFFF:
            value = builder.constant_bool(False) if not stride else builder.constant_uint(0)
        else:
            enough = builder.op(Op.UGreaterThanEqual, bool_, bound, builder.constant_uint(need))
            if not stride:
                value = enough
            else:
                room = builder.op(Op.ISub, uint, bound, builder.constant_uint(need))
                count = builder.op(Op.UDiv, uint, room, builder.constant_uint(stride))
                limit = builder.op(Op.IAdd, uint, count, builder.constant_uint(1))
                value = builder.op(Op.Select, uint, enough, limit, builder.constant_uint(0))
        self._quick[key] = value
        return value

    def _quick_pass(self, span: BufferSpan, test: int) -> int:
        if not span.terms:
            return test
        index = self.as_uint(span.terms[0].index)
        return self.builder.op(Op.ULessThan, self.bool_, index, test)

    def _width(self, value: int) -> int:
        type_id = self.types.type_of(value)
        return 32 if type_id is None else self.types.width(type_id)

    def _position_after(self, function: Function, value: int) -> None:
        """The insert point: right after ``value``'s definition in the first block."""
        entry = function.blocks[0]
        at = next(
            k for k, instruction in enumerate(entry.instructions) if instruction.result_id == value
        )
        self.builder.position_at_start(entry, function)
        self.builder.index = at + 1

    def function_of(self, instruction: Instruction) -> Function:
        place = self.def_use.place(instruction)
        if place is None:
            raise RuntimeError(f"{instruction!r} is not in a block")
        return place[0]

    def nullable(self, consumer: Instruction) -> bool:
        """Whether a skipped ``consumer`` can give a null result (or has none)."""
        result_type = consumer.type_id
        if consumer.result_id is None or result_type is None:
            return True
        return self.types.opcode(result_type) in NULLABLE_RESULTS

    def guard_with(self, consumer: Instruction, condition: Callable[[], int]) -> bool:
        """Run ``consumer`` only where ``condition()`` (emitted just before it) holds; its
        result is null elsewhere. False, changing nothing, when the result has no null."""
        result_type = consumer.type_id
        has_value = consumer.result_id is not None and result_type is not None
        if not self.nullable(consumer):
            return False
        place = self.def_use.place(consumer)
        if place is None:
            raise RuntimeError(f"{consumer!r} is not in a block")
        function, block = place
        position = next(k for k, i in enumerate(block.instructions) if i is consumer)
        del block.instructions[position]
        builder = self.builder
        builder.position_at_start(block, function)
        builder.index = position
        ok = condition()
        result = consumer.result_id if has_value else None
        renamed = builder.module.new_id() if result is not None else None
        with builder.if_then(ok) as valid:
            if result is not None and renamed is not None:
                consumer.operands[RESULT_INDEX[consumer.opcode]] = renamed
                builder.copy_decorations(result, renamed)
            builder.emit(consumer)
        if result is not None and renamed is not None and result_type is not None:
            builder.phi(
                result_type,
                (renamed, valid.exit_label),
                (builder.constant_null(result_type), valid.head_label),
                result=result,
            )
        return True

    # -- the range -------------------------------------------------------------------------

    def hoisted_range(
        self,
        function: Function,
        descriptor_set: int,
        binding: int,
        indices: tuple[int, ...],
        lengths: tuple[int | None, ...],
    ) -> int | None:
        """The range read once in the function's first block, for a constant descriptor
        index; None when the index changes (read at the access, ``range_here``). Call it
        before the guard splits anything."""
        flat = self.constant_flat(indices, lengths)
        if flat is None:
            return None
        key = (function.id, descriptor_set, binding, flat)
        if key not in self._hoisted:
            builder = self.builder
            builder.position_after_variables(function)
            self._hoisted[key] = builder.op(
                Op.FunctionCall,
                self.uint,
                self.buffer_range,
                builder.constant_uint(descriptor_set),
                builder.constant_uint(binding),
                builder.constant_uint(flat),
            )
        return self._hoisted[key]

    def hoisted_table(self, function: Function, descriptor_set: int, binding: int) -> int | None:
        """The binding's table read once in the function's first block, for accesses whose
        descriptor index changes; None without the helpers. Call it before the guard splits
        anything."""
        tables = self.tables
        if tables is None or not tables.available or self.range_in_table is None:
            return None
        return tables.table(function, descriptor_set, binding, RANGE_UNKNOWN)

    def constant_flat(
        self, indices: tuple[int, ...], lengths: tuple[int | None, ...]
    ) -> int | None:
        """The flattened descriptor index when every index is a constant, else None."""
        flat = 0
        for index, length in zip(indices, lengths, strict=True):
            value = self.types.constant_value(index)
            size = None if length is None else self.types.constant_value(length)
            if value is None or value < 0 or (size is None and flat):
                return None
            flat = flat * (size or 0) + value
        return flat

    def flat_index(self, indices: tuple[int, ...], lengths: tuple[int | None, ...]) -> int:
        """The flattened descriptor index as a uint id, emitted in place."""
        builder = self.builder
        constant = self.constant_flat(indices, lengths)
        if constant is not None:
            return builder.constant_uint(constant)
        flat = self.as_uint(indices[0])
        for index, length in zip(indices[1:], lengths[1:], strict=True):
            if length is None:
                raise RuntimeError("a runtime array inside a descriptor array")
            scaled = builder.op(Op.IMul, self.uint, flat, self.as_uint(length))
            flat = builder.op(Op.IAdd, self.uint, scaled, self.as_uint(index))
        return flat

    def range_here(
        self,
        descriptor_set: int,
        binding: int,
        indices: tuple[int, ...],
        lengths: tuple[int | None, ...],
        table: int | None = None,
    ) -> int:
        """The range of the descriptor an access's (changing) index names, emitted in place:
        from the binding's ``table`` where one was read (``hoisted_table``)."""
        builder = self.builder
        if table is not None and self.range_in_table is not None:
            self.called_range_in_table = True
            return builder.op(
                Op.FunctionCall,
                self.uint,
                self.range_in_table,
                table,
                self.flat_index(indices, lengths),
            )
        return builder.op(
            Op.FunctionCall,
            self.uint,
            self.buffer_range,
            builder.constant_uint(descriptor_set),
            builder.constant_uint(binding),
            self.flat_index(indices, lengths),
        )

    # -- the span --------------------------------------------------------------------------

    def _check(self, instruction_index: int, span: BufferSpan, bound: int) -> int:
        builder = self.builder
        offset, flags = self._offset(span)
        descriptor = self.flat_index(span.descriptor_indices, span.descriptor_lengths)
        set_binding = span.descriptor_set << record.SET_SHIFT | span.binding
        if span.storage:
            set_binding |= record.STORAGE_BIT
        return builder.op(
            Op.FunctionCall,
            self.bool_,
            self.check_range,
            builder.constant_uint(instruction_index),
            descriptor,
            builder.constant_uint(set_binding & 0xFFFF_FFFF),
            offset,
            builder.constant_uint(span.size & 0xFFFF_FFFF),
            bound,
            flags,
        )

    def _offset(self, span: BufferSpan) -> tuple[int, int]:
        """(the span's first byte, 32-bit wrapped; its flags word), emitted in place."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        offset = builder.constant_uint(span.constant & 0xFFFF_FFFF)
        negative: list[int] = []
        wrapped: list[int] = []
        if span.constant > 0xFFFF_FFFF or span.size > 0xFFFF_FFFF:
            wrapped.append(builder.constant_bool(True))
        for term in span.terms:
            index, is_negative, high_bits = self._as_uint(term.index)
            if is_negative is not None:
                negative.append(is_negative)
            if high_bits is not None:
                wrapped.append(high_bits)
            product = index
            if term.stride != 1:
                pair = builder.op(
                    Op.UMulExtended, self._pair_type(), index, builder.constant_uint(term.stride)
                )
                product = builder.op(Op.CompositeExtract, uint, pair, 0)
                high = builder.op(Op.CompositeExtract, uint, pair, 1)
                wrapped.append(builder.op(Op.INotEqual, bool_, high, builder.constant_uint(0)))
            summed = builder.op(Op.IAddCarry, self._pair_type(), offset, product)
            offset = builder.op(Op.CompositeExtract, uint, summed, 0)
            carry = builder.op(Op.CompositeExtract, uint, summed, 1)
            wrapped.append(builder.op(Op.INotEqual, bool_, carry, builder.constant_uint(0)))
        flags = builder.constant_uint(0)
        for condition, bit in ((negative, record.FLAG_NEGATIVE), (wrapped, record.FLAG_WRAPPED)):
            if not condition:
                continue
            any_ = condition[0]
            for more in condition[1:]:
                any_ = builder.op(Op.LogicalOr, bool_, any_, more)
            set_bit = builder.op(
                Op.Select, uint, any_, builder.constant_uint(bit), builder.constant_uint(0)
            )
            flags = builder.op(Op.BitwiseOr, uint, flags, set_bit)
        return offset, flags

    def _pair_type(self) -> int:
        if self._pair is None:
            self._pair = self.builder.type_struct(self.uint, self.uint)
        return self._pair

    def as_uint(self, value: int) -> int:
        """``value`` as a 32-bit uint (truncated or extended), emitted in place."""
        return self._as_uint(value)[0]

    def _as_uint(self, value: int) -> tuple[int, int | None, int | None]:
        """(``value`` as a 32-bit uint, whether it is negative, whether bits above 32 are
        set): the last two None when they cannot be true."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        constant = self.types.constant_value(value)
        if constant is not None:
            negative = builder.constant_bool(True) if constant < 0 else None
            return builder.constant_uint(constant & 0xFFFF_FFFF), negative, None
        type_id = self.types.type_of(value)
        if type_id is None or self.types.opcode(type_id) != Op.TypeInt:
            raise RuntimeError(f"%{value} is not an integer")
        width = self.types.width(type_id)
        signed = self.types.is_signed(type_id)
        high: int | None = None
        if width == 64:
            wide = builder.type_int(64, False)
            shifted = builder.op(
                Op.ShiftRightLogical, wide, value, builder.constant_uint(32, width=64)
            )
            top = builder.op(Op.UConvert, uint, shifted)
            high = builder.op(Op.INotEqual, bool_, top, builder.constant_uint(0))
            as_uint = builder.op(Op.UConvert, uint, value)
        elif width < 32:
            converted = builder.op(
                Op.SConvert if signed else Op.UConvert, builder.type_int(32, signed), value
            )
            as_uint = converted if not signed else builder.op(Op.Bitcast, uint, converted)
        else:
            as_uint = value if type_id == uint else builder.op(Op.Bitcast, uint, value)
        negative = None
        if signed and width == 64:
            zero = builder.constant(type_id, 0, 0)
            negative = builder.op(Op.SLessThan, bool_, value, zero)
        elif signed:
            as_int = builder.op(Op.Bitcast, builder.type_int(32, True), as_uint)
            negative = builder.op(Op.SLessThan, bool_, as_int, builder.constant_int(0))
        return as_uint, negative, high
