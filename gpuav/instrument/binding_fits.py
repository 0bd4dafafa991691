"""``bool gpuav_binding_fits(uvec4 table, uint forbidden, uint end)``: whether every
descriptor of a binding leaves an access nothing to report, read once before a loop whose
descriptor index is not known (``loop_versions``).

True where the state does not know the binding (its checks pass too). Otherwise the binding
must hold between 1 and ``MAX_DESCRIPTORS`` descriptors, and each must be written, alive,
free of the ``forbidden`` bits (``gpuav_table_word_fits``) and, for a buffer, bound to at
least ``end`` bytes (``gpuav_range_in_table``; a word with no range passes). A larger
binding fails: reading every word of a bindless array before each loop would cost more than
the checks in the loop. No record is written.

The binding's summary answers first, without visiting its descriptors, where it can stand for
all of them (``state_reader``): not 0, none of the ``forbidden`` bits and, where a range is
asked for, a binding of one descriptor whose range holds ``end`` bytes. Only where it cannot
does the test walk the descriptors, each walk step a word read from the state.
"""

from __future__ import annotations

from gpuav.instrument.state_reader import (
    TABLE_COMPONENTS,
    TABLE_LENGTH,
    TABLE_STATED,
    TABLE_SUMMARY,
    summary_answers,
)
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op

MAX_DESCRIPTORS = 64


def define_binding_fits(builder: Builder, table_word_fits: int, range_in_table: int) -> int:
    uint, bool_ = builder.type_int(32, False), builder.type_bool()
    table_type = builder.type_vector(uint, TABLE_COMPONENTS)
    function, (table, forbidden, end) = builder.new_function(bool_, [table_type, uint, uint])
    builder.name(function.id, "gpuav_binding_fits")
    length = builder.op(Op.CompositeExtract, uint, table, TABLE_LENGTH)
    stated = builder.op(
        Op.INotEqual,
        bool_,
        builder.op(Op.CompositeExtract, uint, table, TABLE_STATED),
        builder.constant_uint(0),
    )
    zero = builder.constant_uint(0)
    summary = builder.op(Op.CompositeExtract, uint, table, TABLE_SUMMARY)
    summary_fits = summary_answers(builder, summary, forbidden)
    no_range = builder.op(Op.IEqual, bool_, end, zero)
    ranged_one = builder.op(
        Op.LogicalAnd,
        bool_,
        builder.op(Op.LogicalNot, bool_, no_range),
        builder.op(Op.IEqual, bool_, length, builder.constant_uint(1)),
    )
    # range_in_table answers from the summary, without reading, for a binding of one; for
    # others it would read a word, so it is not called
    with builder.if_then(ranged_one) as asked:
        one_range = builder.op(Op.FunctionCall, uint, range_in_table, table, zero)
        wide = builder.op(Op.UGreaterThanEqual, bool_, one_range, end)
    range_fits = builder.phi(bool_, (wide, asked.exit_label), (no_range, asked.head_label))
    answered = builder.op(Op.LogicalAnd, bool_, summary_fits, range_fits)
    small = builder.op(
        Op.LogicalAnd,
        bool_,
        builder.op(Op.LogicalNot, bool_, answered),
        builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.UGreaterThanEqual, bool_, length, builder.constant_uint(1)),
            builder.op(Op.ULessThanEqual, bool_, length, builder.constant_uint(MAX_DESCRIPTORS)),
        ),
    )

    def keep_going(values: list[int]) -> int:
        index, fits = values
        return builder.op(
            Op.LogicalAnd, bool_, fits, builder.op(Op.ULessThan, bool_, index, length)
        )

    def step(values: list[int]) -> list[int]:
        index, _ = values
        usable = builder.op(Op.FunctionCall, bool_, table_word_fits, table, index, forbidden)
        bound = builder.op(Op.FunctionCall, uint, range_in_table, table, index)
        wide = builder.op(Op.UGreaterThanEqual, bool_, bound, end)
        following = builder.op(Op.IAdd, uint, index, builder.constant_uint(1))
        return [following, builder.op(Op.LogicalAnd, bool_, usable, wide)]

    _, fits_id = builder.while_loop(
        [(uint, builder.constant_uint(0)), (bool_, small)], keep_going, step
    )
    unstated = builder.op(Op.LogicalNot, bool_, stated)
    passes = builder.op(Op.LogicalOr, bool_, answered, fits_id)
    builder.op_void(Op.ReturnValue, builder.op(Op.LogicalOr, bool_, unstated, passes))
    return function.id
