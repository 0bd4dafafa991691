"""The device-side helper of the device-address checks.

``bool gpuav_check_address(uint instruction_index, uint operand, uint low, uint high, uint
size, uint alignment)``: whether the ``size`` bytes at the 64-bit address ``high:low`` lie
inside one live buffer of the layer's table (``gpuav.instrument.address_table``) and, when
``alignment`` is not 0, whether the address is a multiple of it. It writes the out-of-bounds
record (checked first) or the misaligned one when not. The table is found by binary search
over its entries (a loop of about log2(buffers) steps, each two state words); with no table
published the range check passes. Only 32-bit integers are used, so the helper fits every
module; the address comes in as two words.

Each invocation remembers, in a Private variable, the last two stretches of addresses a
search found inside one buffer (an entry's start up to its reach): a span inside either passes
without a search, so a loop reading one buffer and writing another searches twice.
"""

from __future__ import annotations

from gpuav.instrument import address_table
from gpuav.instrument.record import ErrorCode
from gpuav.instrument.record_writer import RecordWriter
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op, StorageClass

REMEMBERED = 2  # stretches each invocation remembers


def define_address_check(
    builder: Builder, writer: RecordWriter, state_word: int
) -> tuple[int, int, int, int, int]:
    """Define ``gpuav_check_address`` (reading the table through ``gpuav_state_word``) and
    ``bool gpuav_address_inside(uint low, uint high, uint size)``, the same search with no
    record (for a test made once before a loop); returns the check's id, those of the two
    record writers it calls, the Private variable of the remembered stretch (for the entry
    points' interfaces) and the quiet helper's id."""
    out_of_bounds = writer.define_writer(
        ErrorCode.ADDRESS_OUT_OF_BOUNDS, "gpuav_write_address_record"
    )
    misaligned = writer.define_writer(ErrorCode.ADDRESS_MISALIGNED, "gpuav_write_misaligned_record")
    check = _AddressCheck(builder, state_word)
    function, parameters = builder.new_function(check.bool_, [check.uint] * 6)
    instruction_index, operand, low, high, size, alignment = parameters
    builder.name(function.id, "gpuav_check_address")
    inside = check.inside_remembered(low, high, size)
    bool_, uint = check.bool_, check.uint
    zero = builder.constant_uint(0)
    mask = builder.op(Op.ISub, uint, alignment, builder.constant_uint(1))
    stray = builder.op(Op.BitwiseAnd, uint, low, mask)
    misplaced = builder.op(
        Op.LogicalAnd,
        bool_,
        builder.op(Op.INotEqual, bool_, alignment, zero),
        builder.op(Op.INotEqual, bool_, stray, zero),
    )
    words = (instruction_index, operand, low, high, size, alignment)
    with builder.if_else(inside) as (fits, outside):
        with fits, builder.if_then(misplaced):
            builder.op(Op.FunctionCall, builder.type_void(), misaligned, *words)
        with outside:
            builder.op(Op.FunctionCall, builder.type_void(), out_of_bounds, *words)
    ok = builder.op(Op.LogicalAnd, bool_, inside, builder.op(Op.LogicalNot, bool_, misplaced))
    builder.op_void(Op.ReturnValue, ok)
    quiet, (low, high, size) = builder.new_function(check.bool_, [check.uint] * 3)
    builder.name(quiet.id, "gpuav_address_inside")
    # A search of its own, not reading the remembered stretches: the tests before a loop
    # then do not wait on one another, and accesses after the loop still find the stretch.
    builder.op_void(Op.ReturnValue, check.inside_table(low, high, size))
    return function.id, out_of_bounds, misaligned, check.remembered, quiet.id


class _AddressCheck:
    def __init__(self, builder: Builder, state_word: int) -> None:
        self.builder = builder
        self.state_word = state_word
        self.uint = builder.type_int(32, False)
        self.bool_ = builder.type_bool()
        uvec4 = builder.type_vector(self.uint, 4)
        # Two stretches (start low, start high, reach low, reach high), then the slot the
        # next search fills in word 0 of the third; all zero: nothing remembered.
        slots = builder.shared_declaration(
            Op.TypeArray, uvec4, builder.constant_uint(REMEMBERED + 1)
        )
        self.remembered = builder.declare(
            Op.Variable,
            builder.type_pointer(StorageClass.Private, slots),
            StorageClass.Private,
            builder.constant_null(slots),
        )
        builder.name(self.remembered, "gpuav_address_stretches")

    def _slot(self, index: int) -> int:
        """A pointer to remembered slot ``index`` (an id)."""
        builder = self.builder
        pointer = builder.type_pointer(StorageClass.Private, builder.type_vector(self.uint, 4))
        return builder.op(Op.AccessChain, pointer, self.remembered, index)

    def _end(self, low: int, high: int, size: int) -> tuple[int, int, int]:
        """(end low, end high, wrapped past 2^64) of the span at ``high:low``."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        zero = builder.constant_uint(0)
        summed = builder.op(Op.IAddCarry, builder.type_struct(uint, uint), low, size)
        end_low = builder.op(Op.CompositeExtract, uint, summed, 0)
        carry = builder.op(Op.CompositeExtract, uint, summed, 1)
        end_high = builder.op(Op.IAdd, uint, high, carry)
        wrapped = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.INotEqual, bool_, carry, zero),
            builder.op(Op.IEqual, bool_, end_high, zero),
        )
        return end_low, end_high, wrapped

    def inside_remembered(self, low: int, high: int, size: int) -> int:
        """Whether the span lies in a remembered stretch, else the search's answer (which
        remembers the stretch it found)."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        end_low, end_high, wrapped = self._end(low, high, size)
        hit = builder.constant_bool(False)
        for slot in range(REMEMBERED):
            stretch = builder.op(
                Op.Load, builder.type_vector(uint, 4), self._slot(builder.constant_uint(slot))
            )
            start_low, start_high, reach_low, reach_high = (
                builder.op(Op.CompositeExtract, uint, stretch, k) for k in range(4)
            )
            inside = builder.op(
                Op.LogicalAnd,
                bool_,
                self._at_most(start_low, start_high, low, high),
                self._at_most(end_low, end_high, reach_low, reach_high),
            )
            hit = builder.op(Op.LogicalOr, bool_, hit, inside)
        hit = builder.op(Op.LogicalAnd, bool_, hit, builder.op(Op.LogicalNot, bool_, wrapped))
        with builder.if_then(builder.op(Op.LogicalNot, bool_, hit)) as miss:
            searched = self.inside_table(low, high, size)
        return builder.phi(
            bool_, (searched, miss.exit_label), (builder.constant_bool(True), miss.head_label)
        )

    def _remember(self, stretch: int) -> None:
        """Store ``stretch`` in the slot whose turn it is, and pass the turn on."""
        builder = self.builder
        uint = self.uint
        turn_slot = self._slot(builder.constant_uint(REMEMBERED))
        turns = builder.op(Op.Load, builder.type_vector(uint, 4), turn_slot)
        turn = builder.op(Op.CompositeExtract, uint, turns, 0)
        slot = builder.op(Op.UMod, uint, turn, builder.constant_uint(REMEMBERED))
        builder.op_void(Op.Store, self._slot(slot), stretch)
        following = builder.op(Op.IAdd, uint, slot, builder.constant_uint(1))
        builder.op_void(
            Op.Store,
            turn_slot,
            builder.op(Op.CompositeInsert, builder.type_vector(uint, 4), following, turns, 0),
        )

    def _word(self, at: int, plus: int = 0) -> int:
        builder = self.builder
        if plus:
            at = builder.op(Op.IAdd, self.uint, at, builder.constant_uint(plus))
        return builder.op(Op.FunctionCall, self.uint, self.state_word, at)

    def _at_most(self, low: int, high: int, than_low: int, than_high: int) -> int:
        """``high:low <= than_high:than_low``, unsigned 64-bit, from 32-bit words."""
        builder = self.builder
        bool_ = self.bool_
        below = builder.op(Op.ULessThan, bool_, high, than_high)
        same = builder.op(Op.IEqual, bool_, high, than_high)
        low_at_most = builder.op(Op.ULessThanEqual, bool_, low, than_low)
        return builder.op(
            Op.LogicalOr, bool_, below, builder.op(Op.LogicalAnd, bool_, same, low_at_most)
        )

    def _entry(self, table: int, index: int) -> int:
        """Word offset of entry ``index`` of the table at ``table``."""
        builder = self.builder
        scaled = builder.op(
            Op.IMul, self.uint, index, builder.constant_uint(address_table.ENTRY_WORDS)
        )
        first = builder.op(
            Op.IAdd, self.uint, table, builder.constant_uint(address_table.FIRST_ENTRY_WORD)
        )
        return builder.op(Op.IAdd, self.uint, first, scaled)

    def inside_table(self, low: int, high: int, size: int, remember: bool = True) -> int:
        """Emit the search; the result is true when the span lies in one buffer or no table
        is published. ``remember``: keep the stretch found for the next accesses."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        zero = builder.constant_uint(0)
        table = self._word(builder.constant_uint(address_table.TABLE_OFFSET_WORD))
        published = builder.op(Op.INotEqual, bool_, table, zero)
        count = self._word(table, address_table.COUNT_WORD)
        below = self._search(table, count, low, high)
        # The last entry starting at or below the address, when there is one.
        found = builder.op(Op.UGreaterThan, bool_, below, zero)
        last = builder.op(
            Op.Select,
            uint,
            found,
            builder.op(Op.ISub, uint, below, builder.constant_uint(1)),
            zero,
        )
        entry = self._entry(table, last)
        reach_low = self._word(entry, address_table.REACH_LOW)
        reach_high = self._word(entry, address_table.REACH_HIGH)
        end_low, end_high, wrapped = self._end(low, high, size)
        reached = self._at_most(end_low, end_high, reach_low, reach_high)
        fits = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.LogicalAnd, bool_, found, reached),
            builder.op(Op.LogicalNot, bool_, wrapped),
        )
        if remember:
            # Every address from the entry's start up to its reach lies in one buffer (the
            # reach is that of a buffer starting at or before the entry).
            with builder.if_then(builder.op(Op.LogicalAnd, bool_, published, fits)):
                start_low = self._word(entry, address_table.START_LOW)
                start_high = self._word(entry, address_table.START_HIGH)
                stretch = builder.op(
                    Op.CompositeConstruct,
                    builder.type_vector(uint, 4),
                    start_low,
                    start_high,
                    reach_low,
                    reach_high,
                )
                self._remember(stretch)
        return builder.op(Op.LogicalOr, bool_, builder.op(Op.LogicalNot, bool_, published), fits)

    def _search(self, table: int, count: int, low: int, high: int) -> int:
        """The number of entries starting at or below ``high:low`` (a structured loop)."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_

        def keep_going(values: list[int]) -> int:
            first, last = values
            return builder.op(Op.ULessThan, bool_, first, last)

        def step(values: list[int]) -> list[int]:
            first, last = values
            middle = builder.op(
                Op.ShiftRightLogical,
                uint,
                builder.op(Op.IAdd, uint, first, last),
                builder.constant_uint(1),
            )
            at = self._entry(table, middle)
            start_low = self._word(at, address_table.START_LOW)
            start_high = self._word(at, address_table.START_HIGH)
            starts_below = self._at_most(start_low, start_high, low, high)
            after_middle = builder.op(Op.IAdd, uint, middle, builder.constant_uint(1))
            return [
                builder.op(Op.Select, uint, starts_below, after_middle, first),
                builder.op(Op.Select, uint, starts_below, last, middle),
            ]

        first, _ = builder.while_loop(
            [(uint, builder.constant_uint(0)), (uint, count)], keep_going, step
        )
        return first
