"""The rewrite phase of the local-array checks: each access found by ``local_arrays`` runs only
when every index it uses is below its length.

    ok = index_0 < length_0 && ...            (unsigned, 32-bit; a 64-bit index must also
                                               fit in 32 bits)
    if ok:   the access
    else:    gpuav_report_local_index(instruction, where, index, length, fits)  per index
    %result = OpPhi %type %access_result %ok_block %null_or_old_vector %else_block

The compare is inline, so the common path costs a compare and a branch; the helper that
writes the record runs only when something is out of range. A load that fails gives zero, a
store or atomic does nothing, OpVectorInsertDynamic keeps the old vector; a correct program
computes what it did before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpuav.instrument import host_terms, record
from gpuav.instrument.consumers import NULLABLE_RESULTS
from gpuav.instrument.local_arrays import VECTOR_OPERAND, IndexCheck, LocalAccess
from gpuav.instrument.loop_bounds import LoopBounds, described
from gpuav.instrument.loop_versions import Proof
from gpuav.instrument.record import NO_INSTRUCTION_INDEX, ErrorCode
from gpuav.instrument.record_writer import RecordWriter
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import RESULT_INDEX, Op
from gpuav.spirv.module import Block


def define_local_report(builder: Builder, writer: RecordWriter) -> tuple[int, int]:
    """``void gpuav_report_local_index(uint instruction_index, uint where, uint index, uint
    length, bool fits)``: writes the local-array record when the index is not below the
    length or does not fit in 32 bits. Returns its id and that of the record writer."""
    write = writer.define_writer(ErrorCode.LOCAL_INDEX_OUT_OF_BOUNDS, "gpuav_write_local_record")
    uint = builder.type_int(32, False)
    bool_ = builder.type_bool()
    function, (instruction_index, where, index, length, fits) = builder.new_function(
        builder.type_void(), [uint, uint, uint, uint, bool_]
    )
    builder.name(function.id, "gpuav_report_local_index")
    below = builder.op(Op.ULessThan, bool_, index, length)
    ok = builder.op(Op.LogicalAnd, bool_, fits, below)
    with builder.if_then(builder.op(Op.LogicalNot, bool_, ok)):
        wide = builder.op(
            Op.Select,
            uint,
            fits,
            builder.constant_uint(0),
            builder.constant_uint(record.LOCAL_WIDE),
        )
        flagged = builder.op(Op.BitwiseOr, uint, where, wide)
        builder.op(
            Op.FunctionCall, builder.type_void(), write, instruction_index, flagged, index, length
        )
    builder.op_void(Op.Return)
    return function.id, write


@dataclass
class LocalGuarder:
    """Guards one access at a time; accesses of one block must come last first."""

    builder: Builder
    def_use: DefUse
    types: Types
    report: int  # gpuav_report_local_index

    def __post_init__(self) -> None:
        self.uint = self.builder.type_int(32, False)
        self.bool_ = self.builder.type_bool()

    def guard(self, access: LocalAccess) -> bool:
        """Guard ``access``; False when its result has no null value to stand in for it."""
        consumer = access.consumer
        result_type = consumer.type_id
        result = consumer.result_id
        keep: int | None = None
        if consumer.opcode == Op.VectorInsertDynamic:
            keep = consumer.operands[VECTOR_OPERAND]
        elif result_type is not None and self.types.opcode(result_type) not in NULLABLE_RESULTS:
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
        compared = [self._compare(check) for check in access.checks]
        ok = compared[0][0]
        for passed, *_ in compared[1:]:
            ok = builder.op(Op.LogicalAnd, self.bool_, ok, passed)
        instruction = consumer.origin if consumer.origin is not None else NO_INSTRUCTION_INDEX
        renamed = builder.module.new_id() if result is not None else None
        with builder.if_else(ok) as (valid, invalid):
            with valid:
                if result is not None and renamed is not None:
                    consumer.operands[RESULT_INDEX[consumer.opcode]] = renamed
                    builder.copy_decorations(result, renamed)
                builder.emit(consumer)
            with invalid:
                for check, (_, index, length, fits, where) in zip(
                    access.checks, compared, strict=True
                ):
                    builder.op(
                        Op.FunctionCall,
                        builder.type_void(),
                        self.report,
                        builder.constant_uint(instruction),
                        builder.constant_uint(where | self._where(check)),
                        index,
                        length,
                        fits,
                    )
        if result is not None and renamed is not None and result_type is not None:
            stand_in = keep if keep is not None else builder.constant_null(result_type)
            builder.phi(
                result_type,
                (renamed, valid.exit_label),
                (stand_in, invalid.exit_label),
                result=result,
            )
        return True

    @staticmethod
    def _where(check: IndexCheck) -> int:
        where = check.level & record.LOCAL_LEVEL_MASK
        if check.pointer:
            where |= record.LOCAL_SOURCE_POINTER
        return where

    def _compare(self, check: IndexCheck) -> tuple[int, int, int, int, int]:
        """(index < length, the index as a 32-bit uint, the length, whether the index fits
        in 32 bits, the LOCAL_SIGNED flag), emitted in place."""
        builder = self.builder
        index, fits, signed = self._as_uint(check.index)
        if check.length is not None:
            length = builder.constant_uint(check.length & 0xFFFF_FFFF)
        elif check.length_id is not None:
            length = self._as_uint(check.length_id)[0]
        else:
            raise RuntimeError("an index check without a length")
        passed = builder.op(Op.ULessThan, self.bool_, index, length)
        if fits is None:
            fits = builder.constant_bool(True)
        else:
            passed = builder.op(Op.LogicalAnd, self.bool_, fits, passed)
        return passed, index, length, fits, record.LOCAL_SIGNED if signed else 0

    def _as_uint(self, value: int) -> tuple[int, int | None, bool]:
        """(``value`` as a 32-bit uint, whether it fits in 32 bits or None when it must,
        whether its type is signed). A narrow signed value is sign-extended, so that a
        negative index becomes a huge one."""
        builder = self.builder
        types = self.types
        type_id = types.type_of(value)
        if type_id is None or types.opcode(type_id) != Op.TypeInt:
            raise RuntimeError(f"%{value} is not an integer")
        signed = types.is_signed(type_id)
        constant = types.constant_value(value)
        if constant is not None:
            lowest, highest = (-(1 << 31), 1 << 31) if signed else (0, 1 << 32)
            return (
                builder.constant_uint(constant & 0xFFFF_FFFF),
                None if lowest <= constant < highest else builder.constant_bool(False),
                signed,
            )
        width = types.width(type_id)
        if width == 64:
            low = builder.op(Op.UConvert, self.uint, value)
            top = builder.op(
                Op.UConvert,
                self.uint,
                builder.op(
                    Op.ShiftRightLogical,
                    builder.type_int(64, False),
                    value,
                    builder.constant_uint(32, width=64),
                ),
            )
            # Fits when the high word extends the low one: zeros, or (signed) the sign bit.
            extension = builder.constant_uint(0)
            if signed:
                sign = builder.op(
                    Op.ShiftRightArithmetic,
                    builder.type_int(32, True),
                    builder.op(Op.Bitcast, builder.type_int(32, True), low),
                    builder.constant_uint(31),
                )
                extension = builder.op(Op.Bitcast, self.uint, sign)
            fits = builder.op(Op.IEqual, self.bool_, top, extension)
            return low, fits, signed
        if width < 32:
            converted = builder.op(
                Op.SConvert if signed else Op.UConvert, builder.type_int(32, signed), value
            )
            as_uint = builder.op(Op.Bitcast, self.uint, converted) if signed else converted
            return as_uint, None, signed
        as_uint = value if type_id == self.uint else builder.op(Op.Bitcast, self.uint, value)
        return as_uint, None, signed


def local_loop_proof(
    builder: Builder, access: LocalAccess, bounds: LoopBounds, block: Block
) -> Proof | None:
    """The test before a loop for a local-array access: each index's bound below its length
    (a length only a specialization constant gives has no test)."""
    parts = []
    host: list[host_terms.Term] | None = []
    for check in access.checks:
        bound = bounds.upper(check.index, block)
        if bound is None or check.length is None:
            return None
        parts.append((bound, check.length))
        index_bound = described(bound)
        if host is None or index_bound is None:
            host = None
        elif check.length <= 0xFFFF_FFFF:
            host.append(host_terms.Less(index_bound, check.length))

    def test(to_test: Callable[[], None]) -> list[int]:
        to_test()
        conditions = []
        for bound, length in parts:
            value, valid = bound(builder)
            conditions += valid
            if length <= 0xFFFF_FFFF:  # a longer array holds every 32-bit index
                below = builder.op(
                    Op.ULessThan, builder.type_bool(), value, builder.constant_uint(length)
                )
                conditions.append(below)
        return conditions

    return Proof(test, host=None if host is None else tuple(host))
