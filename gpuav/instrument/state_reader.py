"""Helper functions that read the descriptor state the layer keeps (issue 8).

``bool gpuav_check_descriptor(uint instruction_index, uint set, uint binding, uint index,
uint static_length, uint forbidden, bool also)`` looks up the region of the set bound at
``set``; the binding's actual size replaces ``static_length`` there (NO_STATE: the static
length stands, and every descriptor counts as written). It writes the bounds record when
``index`` is outside (or ``also`` is false), the uninitialized record when the descriptor is
unwritten, the mismatch record when its word has a ``forbidden`` bit (``image_facts``), and
returns whether the access may go ahead. Every state word is read through
``gpuav_state_word``, which returns 0 past the buffer's end, so a wrong offset can never make
the check itself read out of bounds. Layout: ``gpuav.instrument.descriptor_state``.

``uint gpuav_descriptor_word(uint set, uint binding, uint index)`` returns the descriptor's word
(0: it may not be accessed; an index outside the binding's actual size counts as 0, and with
no state every descriptor is ACCESSIBLE). A constant index reads it once per function
(descriptor_bounds) and an access tests it, calling ``gpuav_check_descriptor`` (which writes
the record) only where it is 0.

``uint gpuav_buffer_range(uint set, uint binding, uint index)`` returns the bytes bound to a
uniform or storage buffer descriptor (texels of a texel buffer), RANGE_UNKNOWN where the state
does not say (no state, an index outside the binding, a descriptor written with a range the
layer does not know): the buffer-range checks then pass. A descriptor that may not be used
(unwritten, or its resource destroyed: word 0) has range 0, so the range or texel check fails
and its record, with a bound of 0, is reported as VUID-...-None-08114: a constant-index buffer
access needs no check of its own for that.

A changing index reads its binding's table once per function instead (``binding_tables``):
``uvec4 gpuav_binding_table(uint set, uint binding, uint static_length)`` gives where the
binding's descriptor words start, its length (as ``gpuav_check_descriptor`` takes it; the
guarded access of a runtime array takes its index modulo it), whether the state knows the
binding, and its summary; ``gpuav_check_in_table`` and ``gpuav_range_in_table``
are ``gpuav_check_descriptor`` and ``gpuav_buffer_range`` given that table, reading only the
descriptor's own word; ``gpuav_table_word_fits`` says whether one descriptor of the table
leaves an access nothing to report (``binding_verdicts``).

``uint gpuav_action_verdict()`` reads the action's verdict word (``host_terms``): an entry
function with an unchecked copy runs it where its stage's bit is set (``function_versions``).

Each of them reads a descriptor's word from the state only where the binding's summary in the
action's table (``descriptor_state.summary``) cannot stand for it: a summary without the
access's forbidden bits says every descriptor of the binding passes, and of a binding of one
descriptor it is that descriptor's word. The summary is the same for every invocation of an
action, so the branch around the load goes one way for all of them.
"""

from __future__ import annotations

from gpuav.instrument.descriptor_state import (
    ACCESSIBLE,
    ACTION_TABLE_WORD,
    BINDING_COUNT_WORD,
    MAX_TRACKED_SETS,
    NO_STATE,
    RANGE_BASE,
    RANGE_UNKNOWN,
    TABLE_BINDINGS,
    TABLE_ENTRY_WORDS,
    TABLE_SETS,
    VERDICT_WORD,
    binding_size_word,
    binding_table_word,
)
from gpuav.instrument.record import SET_SHIFT, ErrorCode
from gpuav.instrument.record_writer import RecordWriter
from gpuav.instrument.resources import Resources
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op

# binding_table_word(b) = TABLE_BASE + PER_BINDING * b, likewise for the size word: the
# shader computes them for a binding number it receives as a value.
_TABLE_BASE = binding_table_word(0)
_SIZE_BASE = binding_size_word(0)
_PER_BINDING = binding_table_word(1) - binding_table_word(0)
# gpuav_binding_table's uvec4: start, length, whether the state knows the binding, summary.
TABLE_COMPONENTS = 4
TABLE_LENGTH = 1
TABLE_STATED = 2
TABLE_SUMMARY = 3


def summary_answers(builder: Builder, summary: int, forbidden: int) -> int:
    """Whether a binding's ``summary`` stands for each of its descriptors' words, emitted in
    place: it is not 0 and has none of the ``forbidden`` bits."""
    uint, bool_ = builder.type_int(32, False), builder.type_bool()
    zero = builder.constant_uint(0)
    return builder.op(
        Op.LogicalAnd,
        bool_,
        builder.op(Op.INotEqual, bool_, summary, zero),
        builder.op(Op.IEqual, bool_, builder.op(Op.BitwiseAnd, uint, summary, forbidden), zero),
    )


class StateReader:
    def __init__(self, builder: Builder, resources: Resources, writer: RecordWriter) -> None:
        self.builder = builder
        self.resources = resources
        self.writer = writer
        self.uint = builder.type_int(32, False)
        self.bool_ = builder.type_bool()
        self.state_word = self._define_state_word()
        self.write_mismatch = writer.define_writer(
            ErrorCode.DESCRIPTOR_MISMATCH, "gpuav_write_mismatch"
        )
        self.check_descriptor = self._define_check_descriptor()
        self.table_type = builder.type_vector(self.uint, TABLE_COMPONENTS)
        self.binding_table = self._define_binding_table()
        self.check_in_table = self._define_check_in_table()
        self.range_in_table = self._define_range_in_table()
        self.table_word_fits = self._define_table_word_fits()
        self.buffer_range = self._define_buffer_range()
        self.descriptor_word = self._define_descriptor_word()
        self.action_verdict = self._define_action_verdict()

    def _define_state_word(self) -> int:
        builder = self.builder
        function, (index,) = builder.new_function(self.uint, [self.uint])
        builder.name(function.id, "gpuav_state_word")
        self.resources.begin()
        inside = builder.op(Op.ULessThan, self.bool_, index, self.resources.state_length())
        with builder.if_then(inside) as branch:
            value = self.resources.load(self.resources.state_pointer(index))
        result = builder.phi(
            self.uint, (value, branch.exit_label), (builder.constant_uint(0), branch.head_label)
        )
        builder.op_void(Op.ReturnValue, result)
        return function.id

    def _word(self, *terms: int) -> int:
        """state[sum of terms], read safely."""
        builder = self.builder
        at = terms[0]
        for term in terms[1:]:
            at = builder.op(Op.IAdd, self.uint, at, term)
        return builder.op(Op.FunctionCall, self.uint, self.state_word, at)

    def _descriptor_word(self, start: int, index: int, summary: int, forbidden: int) -> int:
        """Descriptor ``index``'s word, emitted in place: the binding's ``summary`` where it
        is not 0 and has none of the ``forbidden`` bits (every descriptor then passes the
        word's tests), else read from the state."""
        answers = summary_answers(self.builder, summary, forbidden)
        return self._word_unless(answers, summary, start, index)

    def _range_word(self, start: int, index: int, length: int, summary: int) -> int:
        """Buffer descriptor ``index``'s word, emitted in place: the binding's ``summary``
        where the binding has one descriptor and a summary (then that descriptor's word), else
        read from the state."""
        builder = self.builder
        bool_ = self.bool_
        answers = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.INotEqual, bool_, summary, builder.constant_uint(0)),
            builder.op(Op.IEqual, bool_, length, builder.constant_uint(1)),
        )
        return self._word_unless(answers, summary, start, index)

    def _word_unless(self, answers: int, summary: int, start: int, index: int) -> int:
        """``summary`` where ``answers``, else state[start + index], read only then."""
        builder = self.builder
        with builder.if_then(builder.op(Op.LogicalNot, self.bool_, answers)) as branch:
            read = self._word(start, index)
        return builder.phi(self.uint, (read, branch.exit_label), (summary, branch.head_label))

    def _binding(
        self, set_index: int, binding: int, static_length: int
    ) -> tuple[int, int, int, int, int]:
        """(start, known, stated, length, summary) of a binding, emitted in place: where its
        descriptor words start in the state, whether the region of the set bound at
        ``set_index`` is known, whether the state knows the binding, its actual size
        (``static_length`` where the region is not known) and its summary (0: none). From the
        action's table entry (three loads from the bound-sets area) where the pair has one,
        else from the region's header. The callers' set and binding are constants, so the
        driver keeps one side."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        in_table = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.ULessThan, bool_, set_index, builder.constant_uint(TABLE_SETS)),
            builder.op(Op.ULessThan, bool_, binding, builder.constant_uint(TABLE_BINDINGS)),
        )
        with builder.if_else(in_table) as (table_side, header_side):
            with table_side:
                from_table = self._from_table(set_index, binding)
            with header_side:
                from_header = self._from_header(set_index, binding)
        start, known, stated, actual, summary = (
            builder.phi(type_id, (ours, table_side.exit_label), (theirs, header_side.exit_label))
            for type_id, ours, theirs in zip(
                (uint, bool_, bool_, uint, uint), from_table, from_header, strict=True
            )
        )
        length = builder.op(Op.Select, uint, known, actual, static_length)
        return start, known, stated, length, summary

    def _from_table(self, set_index: int, binding: int) -> tuple[int, int, int, int, int]:
        """(start, known, stated, actual size, summary) from the action's table entry."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        pair = builder.op(
            Op.IAdd,
            uint,
            builder.op(Op.IMul, uint, set_index, builder.constant_uint(TABLE_BINDINGS)),
            binding,
        )
        entry = builder.op(
            Op.IAdd,
            uint,
            builder.op(Op.IMul, uint, pair, builder.constant_uint(TABLE_ENTRY_WORDS)),
            builder.constant_uint(ACTION_TABLE_WORD),
        )
        start, size, summary = (
            self.resources.load(
                self.resources.bound_area_pointer(
                    builder.op(Op.IAdd, uint, entry, builder.constant_uint(k))
                )
            )
            for k in range(TABLE_ENTRY_WORDS)
        )
        known = builder.op(Op.INotEqual, bool_, start, builder.constant_uint(NO_STATE))
        return start, known, known, size, summary

    def _from_header(self, set_index: int, binding: int) -> tuple[int, int, int, int, int]:
        """(start, known, stated, actual size, no summary) from the header of the set's
        region."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        # The region of the set bound at set_index (NO_STATE past the tracked sets).
        tracked = builder.op(
            Op.ULessThan, bool_, set_index, builder.constant_uint(MAX_TRACKED_SETS)
        )
        safe_set = builder.op(Op.Select, uint, tracked, set_index, builder.constant_uint(0))
        region_word = self.resources.load(self.resources.bound_area_pointer(safe_set))
        region = builder.op(Op.Select, uint, tracked, region_word, builder.constant_uint(NO_STATE))
        known = builder.op(Op.INotEqual, bool_, region, builder.constant_uint(NO_STATE))
        count = self._word(region, builder.constant_uint(BINDING_COUNT_WORD))
        has = builder.op(Op.ULessThan, bool_, binding, count)
        scaled = builder.op(Op.IMul, uint, binding, builder.constant_uint(_PER_BINDING))
        size = self._word(region, scaled, builder.constant_uint(_SIZE_BASE))
        # A binding the set's layout lacks has no descriptors at all.
        actual = builder.op(Op.Select, uint, has, size, builder.constant_uint(0))
        table = self._word(region, scaled, builder.constant_uint(_TABLE_BASE))
        start = builder.op(Op.IAdd, uint, region, table)
        stated = builder.op(Op.LogicalAnd, bool_, known, has)
        return start, known, stated, actual, builder.constant_uint(0)

    def _define_buffer_range(self) -> int:
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        function, (set_index, binding, index) = builder.new_function(uint, [uint] * 3)
        builder.name(function.id, "gpuav_buffer_range")
        self.resources.begin()
        unknown = builder.constant_uint(RANGE_UNKNOWN)
        start, _, known_binding, length, summary = self._binding(set_index, binding, unknown)
        word = self._range_word(start, index, length, summary)
        stated = builder.op(
            Op.LogicalAnd, bool_, known_binding, builder.op(Op.ULessThan, bool_, index, length)
        )
        builder.op_void(Op.ReturnValue, self._range_of(stated, word))
        return function.id

    def _define_range_in_table(self) -> int:
        """``gpuav_buffer_range`` with the binding's table given (``gpuav_binding_table`` of
        RANGE_UNKNOWN, read once per function): only the descriptor's own word is read."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        function, (table, index) = builder.new_function(uint, [self.table_type, uint])
        builder.name(function.id, "gpuav_range_in_table")
        self.resources.begin()
        start, length, flag, summary = self._table_words(table)
        stated = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.INotEqual, bool_, flag, builder.constant_uint(0)),
            builder.op(Op.ULessThan, bool_, index, length),
        )
        word = self._range_word(start, index, length, summary)
        builder.op_void(Op.ReturnValue, self._range_of(stated, word))
        return function.id

    def _range_of(self, stated: int, word: int) -> int:
        """The bytes a descriptor's ``word`` says are bound, emitted in place: RANGE_UNKNOWN
        where the state does not say (not ``stated``, or no range_word), 0 where it may not
        be used."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        unknown = builder.constant_uint(RANGE_UNKNOWN)
        # Words below RANGE_BASE say nothing about a range; RANGE_UNKNOWN itself is no
        # range_word either.
        ranged = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.UGreaterThanEqual, bool_, word, builder.constant_uint(RANGE_BASE)),
            builder.op(Op.INotEqual, bool_, word, unknown),
        )
        usable = builder.op(Op.LogicalAnd, bool_, stated, ranged)
        bound = builder.op(Op.ISub, uint, word, builder.constant_uint(RANGE_BASE))
        zero = builder.constant_uint(0)
        unwritten = builder.op(
            Op.LogicalAnd, bool_, stated, builder.op(Op.IEqual, bool_, word, zero)
        )
        known_range = builder.op(Op.Select, uint, usable, bound, unknown)
        return builder.op(Op.Select, uint, unwritten, zero, known_range)

    def _define_descriptor_word(self) -> int:
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        function, (set_index, binding, index) = builder.new_function(uint, [uint] * 3)
        builder.name(function.id, "gpuav_descriptor_word")
        self.resources.begin()
        zero = builder.constant_uint(0)
        start, known, _, length, summary = self._binding(set_index, binding, zero)
        word = self._descriptor_word(start, index, summary, zero)
        inside = builder.op(Op.ULessThan, bool_, index, length)
        stated = builder.op(Op.Select, uint, inside, word, zero)
        result = builder.op(Op.Select, uint, known, stated, builder.constant_uint(ACCESSIBLE))
        builder.op_void(Op.ReturnValue, result)
        return function.id

    def _define_action_verdict(self) -> int:
        """``uint gpuav_action_verdict()``: the verdict word of the action's bound-sets area
        (``host_terms``), read once at the start of an entry function that has an unchecked
        copy (``function_versions``)."""
        builder = self.builder
        function, _ = builder.new_function(self.uint, [])
        builder.name(function.id, "gpuav_action_verdict")
        self.resources.begin()
        pointer = self.resources.bound_area_pointer(builder.constant_uint(VERDICT_WORD))
        builder.op_void(Op.ReturnValue, self.resources.load(pointer))
        return function.id

    def _define_binding_table(self) -> int:
        builder = self.builder
        uint = self.uint
        function, (set_index, binding, static_length) = builder.new_function(
            self.table_type, [uint] * 3
        )
        builder.name(function.id, "gpuav_binding_table")
        self.resources.begin()
        start, _, stated, length, summary = self._binding(set_index, binding, static_length)
        flag = builder.op(
            Op.Select, uint, stated, builder.constant_uint(1), builder.constant_uint(0)
        )
        table_words = builder.op(
            Op.CompositeConstruct, self.table_type, start, length, flag, summary
        )
        builder.op_void(Op.ReturnValue, table_words)
        return function.id

    def _table_words(self, table: int) -> tuple[int, ...]:
        """(start, length, stated flag, summary) of a ``gpuav_binding_table``."""
        uint = self.uint
        return tuple(
            self.builder.op(Op.CompositeExtract, uint, table, k) for k in range(TABLE_COMPONENTS)
        )

    def _define_check_in_table(self) -> int:
        """``gpuav_check_descriptor`` with the binding's table given (``gpuav_binding_table``,
        read once per function): only the descriptor's own word is read here."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        function, parameters = builder.new_function(
            bool_, [uint, self.table_type, uint, uint, uint, bool_]
        )
        instruction_index, table, index, set_binding, forbidden, also = parameters
        builder.name(function.id, "gpuav_check_in_table")
        self.resources.begin()
        start, length, flag, summary = self._table_words(table)
        stated = builder.op(Op.INotEqual, bool_, flag, builder.constant_uint(0))
        word = self._descriptor_word(start, index, summary, forbidden)
        ok = self._judge(
            instruction_index, index, length, set_binding, stated, word, forbidden, also
        )
        builder.op_void(Op.ReturnValue, ok)
        return function.id

    def _define_table_word_fits(self) -> int:
        """``bool gpuav_table_word_fits(uvec3 table, uint index, uint forbidden)``: whether
        descriptor ``index`` of a binding (its ``gpuav_binding_table``) leaves an access with
        the ``forbidden`` bits nothing to report: written, alive and fitting, or outside the
        binding's length (which the access's own index test covers), or not known to the state.
        No record is written."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        function, (table, index, forbidden) = builder.new_function(
            bool_, [self.table_type, uint, uint]
        )
        builder.name(function.id, "gpuav_table_word_fits")
        self.resources.begin()
        start, length, flag, summary = self._table_words(table)
        zero = builder.constant_uint(0)
        word = self._descriptor_word(start, index, summary, forbidden)
        clean = builder.op(Op.IEqual, bool_, builder.op(Op.BitwiseAnd, uint, word, forbidden), zero)
        usable = builder.op(
            Op.LogicalAnd, bool_, builder.op(Op.INotEqual, bool_, word, zero), clean
        )
        unstated = builder.op(Op.IEqual, bool_, flag, zero)
        outside = builder.op(Op.UGreaterThanEqual, bool_, index, length)
        passes = builder.op(
            Op.LogicalOr, bool_, builder.op(Op.LogicalOr, bool_, unstated, outside), usable
        )
        builder.op_void(Op.ReturnValue, passes)
        return function.id

    def _judge(
        self,
        instruction_index: int,
        index: int,
        length: int,
        set_binding: int,
        stated: int,
        flag: int,
        forbidden: int,
        also: int,
    ) -> int:
        """Whether a descriptor may be used, emitted in place, with the records of why not:
        ``index`` against ``length`` (and ``also``), its word ``flag`` (where the state is
        ``stated``) unwritten or having a ``forbidden`` bit."""
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        below = builder.op(Op.ULessThan, bool_, index, length)
        inside = builder.op(Op.LogicalAnd, bool_, also, below)
        unwritten = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.LogicalAnd, bool_, stated, inside),
            builder.op(Op.IEqual, bool_, flag, builder.constant_uint(0)),
        )
        with builder.if_then(builder.op(Op.LogicalNot, bool_, inside)):
            self.writer.emit_call(
                instruction_index, ErrorCode.INDEX_OUT_OF_BOUNDS, index, length, set_binding
            )
        zero = builder.constant_uint(0)
        forbidden_found = builder.op(Op.BitwiseAnd, uint, flag, forbidden)
        mismatched = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.LogicalAnd, bool_, stated, inside),
            builder.op(Op.INotEqual, bool_, forbidden_found, zero),
        )
        unusable = builder.op(Op.LogicalOr, bool_, unwritten, mismatched)
        # One branch on the way of a usable descriptor; which record, only off it.
        with builder.if_then(unusable), builder.if_else(unwritten) as (empty, unfit):
            with empty:
                code = ErrorCode.DESCRIPTOR_UNINITIALIZED
                self.writer.emit_call(instruction_index, code, index, length, set_binding)
            with unfit:
                builder.op(
                    Op.FunctionCall,
                    builder.type_void(),
                    self.write_mismatch,
                    instruction_index,
                    index,
                    length,
                    set_binding,
                    flag,
                    forbidden,
                )
        return builder.op(Op.LogicalAnd, bool_, inside, builder.op(Op.LogicalNot, bool_, unusable))

    def _define_check_descriptor(self) -> int:
        builder = self.builder
        uint, bool_ = self.uint, self.bool_
        function, parameters = builder.new_function(bool_, [uint] * 6 + [bool_])
        instruction_index, set_index, binding, index, static_length, forbidden, also = parameters
        builder.name(function.id, "gpuav_check_descriptor")
        self.resources.begin()
        start, _, stated, length, summary = self._binding(set_index, binding, static_length)
        flag = self._descriptor_word(start, index, summary, forbidden)
        shifted = builder.op(Op.ShiftLeftLogical, uint, set_index, builder.constant_uint(SET_SHIFT))
        set_binding = builder.op(Op.BitwiseOr, uint, shifted, binding)
        ok = self._judge(
            instruction_index, index, length, set_binding, stated, flag, forbidden, also
        )
        builder.op_void(Op.ReturnValue, ok)
        return function.id
