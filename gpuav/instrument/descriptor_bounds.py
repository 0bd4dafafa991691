"""The rewrite phase of the ``descriptor-bounds`` pass.

Each access found by ``find_accesses`` is guarded where its consumer stands:

    ok = gpuav_check_bounds(instruction index, index, length, true)
                                 (per lookup; seed 003: base + element; writes the record)
    if ok:   clones of the naming chain (access chain, load, OpSampledImage...) + the consumer
    %result = OpPhi %type %clone_result %ok_block %null %head_block

The consumer's original result id becomes the phi's, so the rest of the module is untouched;
the original naming instructions, now unused, are removed (``unused_links``) so that no
descriptor is named with an unchecked index. A correct program computes exactly what it did before.

The clones index descriptors with safe indices (``safe_indices``): the branch alone does not
keep a bad index away from every driver.

With descriptor state, every use of a descriptor is checked for being written (and its
resource alive, VUID-...-None-08114), arrayed or not, and for fitting the access: the view
type, format, samples and sampler its image type and instruction need (``image_facts``).
Where the index is a constant inside the array, the descriptor's word is read once per
function, in its first block, and the access only tests it; where the word says the
descriptor may not be used, the skipped access is noted for one record per invocation
(``unusable_reports``). Inside a loop, an access to a small array first tests its binding's
verdict, decided once per function (``binding_verdicts``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuav.instrument.accesses import (
    DescriptorAccess,
    DescriptorLookup,
    Lookup,
    MergedLookup,
)
from gpuav.instrument.binding_tables import BindingTables
from gpuav.instrument.binding_verdicts import BindingVerdicts
from gpuav.instrument.descriptor_expectations import forbidden_bits
from gpuav.instrument.empty_queries import emit_empty_start, empty_start_of
from gpuav.instrument.helpers import Helpers
from gpuav.instrument.index_conversions import IndexConversions
from gpuav.instrument.record import NO_INSTRUCTION_INDEX, NO_SET_BINDING, pack_set_binding
from gpuav.instrument.safe_indices import SafeIndexer, SafeIndices
from gpuav.instrument.unusable_reports import NotedLookup, UnusableReports
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import RESULT_INDEX, Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Function, Module


@dataclass(frozen=True)
class CheckOperands:
    """The ids one check passes to its helper: flat index, total length (None: a runtime
    array, known only to the descriptor state), per-dimension result, set and binding (None
    without descriptor state)."""

    flat: int
    total: int | None
    extra_ok: int
    descriptor_set: int | None
    binding: int | None


@dataclass(frozen=True)
class HoistedWord:
    """A constant-index descriptor's word, read once per function, the bits the access
    forbids there (a uint constant) and whether the access may go ahead (bool ids)."""

    word: int
    forbidden: int
    fits: int


@dataclass
class Guarder:
    """Rewrites one access at a time; accesses of one block must come last first (api)."""

    builder: Builder
    def_use: DefUse
    types: Types
    helpers: Helpers
    decorations_by_target: dict[int, list[Instruction]] = field(default_factory=dict)
    # the bindings' tables read once per function, shared with the buffer-range checks
    tables_read: BindingTables | None = None
    # id(merge instruction) -> the operands carried through it (gpuav.instrument.merges)
    merged: dict[int, CheckOperands] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.tables = self.tables_read or BindingTables(self.builder, self.helpers.binding_table)
        self.uint = self.builder.type_int(32, False)
        self.bool_ = self.builder.type_bool()
        self.conversions = IndexConversions(self.builder, self.types)
        self.called_descriptor_word = False  # else the pass drops that helper
        self.called_check_in_table = False  # likewise
        # lookup id -> its binding's table, for the access being guarded
        self.tables_here: dict[int, int] = {}
        self.verdicts = BindingVerdicts(self.builder, self.helpers.table_word_fits)
        # lookup id -> its binding's verdict (binding_verdicts), for the access being guarded
        self.verdicts_here: dict[int, int] = {}
        write_record, write_mismatch = self.helpers.write_record, self.helpers.write_mismatch
        self.reports = (
            None
            if write_record is None or write_mismatch is None
            else UnusableReports(self.builder, write_record, write_mismatch)
        )
        # (function id, set, binding, index, forbidden bits) -> the descriptor's word, read
        # once in the function's first block, and whether the access may use it
        self._hoisted: dict[tuple[int, int, int, int, int], HoistedWord] = {}

    @property
    def module(self) -> Module:
        return self.builder.module

    def guard(self, access: DescriptorAccess) -> None:
        builder = self.builder
        consumer = access.consumer
        place = self.def_use.place(consumer)
        if place is None:
            raise RuntimeError(f"{consumer!r} is not in a block")
        if not any(self._checked(lookup) for lookup in access.lookups):
            return  # e.g. a runtime array without set and binding: nothing to compare with
        function, block = place
        usable = {
            id(lookup): self._hoisted_usable(function, lookup, consumer)
            for lookup in access.lookups
            if isinstance(lookup, DescriptorLookup) and self._hoistable(lookup)
        }
        self.tables_here = {
            id(lookup): self._hoisted_table(function, lookup, static_length)
            for lookup in access.lookups
            if isinstance(lookup, DescriptorLookup)
            and id(lookup) not in usable
            and (static_length := self._table_length(lookup)) is not None
        }
        self.verdicts_here = {
            id(lookup): self.verdicts.verdict(
                function, table, lookup.static_length, self.forbidden(lookup, consumer)
            )
            for lookup in access.lookups
            if isinstance(lookup, DescriptorLookup)
            and (table := self.tables_here.get(id(lookup))) is not None
            and lookup.static_length is not None
            and self.verdicts.wanted(function, block, lookup.static_length)
        }
        position = next(k for k, i in enumerate(block.instructions) if i is consumer)
        del block.instructions[position]
        builder.position_at_start(block, function)
        builder.index = position
        self.conversions.cache = {}
        try:
            self._guard_at(access, consumer, usable)
        finally:
            self.conversions.cache = None
            self.tables_here = {}
            self.verdicts_here = {}

    def _guard_at(
        self, access: DescriptorAccess, consumer: Instruction, usable: dict[int, HoistedWord]
    ) -> None:
        builder = self.builder
        index = access.instruction_index
        index = NO_INSTRUCTION_INDEX if index is None else index
        checked = [lookup for lookup in access.lookups if self._checked(lookup)]
        # Every descriptor's word read once per function: the access tests the words, and
        # only its else branch runs the full checks (which write the records).
        hoisted = all(id(lookup) in usable for lookup in checked)
        # Else each check calls a helper that also writes its record when it fails.
        conditions = [
            usable[id(lookup)].fits if hoisted else self._check(index, lookup, consumer)
            for lookup in checked
        ]
        ok = conditions[0]
        for condition in conditions[1:]:
            ok = builder.op(Op.LogicalAnd, self.bool_, ok, condition)
        result = consumer.result_id
        result_type = consumer.type_id
        has_value = result is not None and not self._is_void(result_type)
        indexer = SafeIndexer(self)
        safe = indexer.for_access(access, ok)
        renamed_result = 0
        empty_start = empty_start_of(consumer)  # a ray query's start: skipped, start it empty

        def emit_access() -> None:
            nonlocal renamed_result
            renamed = self._clone_links(access.links, safe, indexer)
            for at in self.def_use.id_operands.positions(consumer):
                consumer.operands[at] = renamed.get(consumer.operands[at], consumer.operands[at])
            if has_value:
                renamed_result = self.module.new_id()
                consumer.operands[RESULT_INDEX[consumer.opcode]] = renamed_result
                self._copy_decorations(result or 0, renamed_result)
            builder.emit(consumer)

        if hoisted or empty_start is not None:
            with builder.if_else(ok) as (valid, invalid):
                with valid:
                    emit_access()
                with invalid:
                    if hoisted:
                        self._note_unusable(index, checked, usable)
                    if empty_start is not None:
                        emit_empty_start(builder, self.types, empty_start)
            skipped = invalid.exit_label
        else:
            with builder.if_then(ok) as valid:
                emit_access()
            skipped = valid.head_label
        if has_value and result_type is not None:
            null = builder.constant_null(result_type)
            builder.phi(
                result_type,
                (renamed_result, valid.exit_label),
                (null, skipped),
                result=result,
            )

    def _is_void(self, type_id: int | None) -> bool:
        return type_id is not None and self.types.opcode(type_id) == Op.TypeVoid

    def _checked(self, lookup: Lookup) -> bool:
        if isinstance(lookup, MergedLookup):
            return id(lookup.merge) in self.merged
        if lookup.runtime_sized or self.with_state(lookup):
            return self.with_state(lookup)
        if lookup.static_index is None:
            return True
        if lookup.static_length is None:
            return lookup.static_index != 0
        return lookup.statically_out_of_bounds

    def with_state(self, lookup: DescriptorLookup) -> bool:
        return (
            self.helpers.check_descriptor is not None
            and lookup.descriptor_set is not None
            and lookup.binding is not None
        )

    def _clone_links(
        self, links: tuple[Instruction, ...], safe: SafeIndices, indexer: SafeIndexer
    ) -> dict[int, int]:
        renamed: dict[int, int] = {}
        positions = self.def_use.id_operands.positions
        for link in links:
            clone = Instruction(link.opcode, list(link.operands), None)
            for at in positions(link):
                clone.operands[at] = renamed.get(clone.operands[at], clone.operands[at])
            safe.use_in(link, clone, indexer.array_levels(link.operands[2]))
            original = link.operands[1]
            renamed[original] = clone.operands[1] = self.module.new_id()
            self._copy_decorations(original, renamed[original])
            self.builder.emit(clone)
        return renamed

    def _copy_decorations(self, source: int, target: int) -> None:
        for decoration in self.decorations_by_target.get(source, ()):
            self.module.annotations.append(
                Instruction(decoration.opcode, [target, *decoration.operands[1:]])
            )

    # -- a constant index: the descriptor's word read once per function --------------------

    def _hoistable(self, lookup: DescriptorLookup) -> bool:
        return (
            self.helpers.descriptor_word is not None
            and self.helpers.write_record is not None
            and self.with_state(lookup)
            and lookup.element is None
            and lookup.static_index is not None
            and lookup.static_length is not None
            and not lookup.statically_out_of_bounds
        )

    def forbidden(self, lookup: Lookup, consumer: Instruction) -> int:
        """What the descriptor of ``lookup`` may not be, used by ``consumer`` (0 for a merge
        of descriptors: which variable was chosen is not known here)."""
        if isinstance(lookup, MergedLookup):
            return 0
        return forbidden_bits(self.types, lookup.variable, consumer)

    def _hoisted_usable(
        self, function: Function, lookup: DescriptorLookup, consumer: Instruction
    ) -> HoistedWord:
        """``gpuav_descriptor_word(...)``, emitted once per function and descriptor in the
        function's first block (after its variables), and whether it is not 0 and has none
        of the bits ``consumer`` forbids; call before splitting anything."""
        assert lookup.descriptor_set is not None and lookup.binding is not None
        assert lookup.static_index is not None and self.helpers.descriptor_word is not None
        forbidden = self.forbidden(lookup, consumer)
        key = (function.id, lookup.descriptor_set, lookup.binding, lookup.static_index, forbidden)
        if key not in self._hoisted:
            builder = self.builder
            builder.position_after_variables(function)
            word = builder.op(
                Op.FunctionCall,
                self.uint,
                self.helpers.descriptor_word,
                builder.constant_uint(lookup.descriptor_set),
                builder.constant_uint(lookup.binding),
                builder.constant_uint(lookup.static_index),
            )
            zero = builder.constant_uint(0)
            fits = builder.op(Op.INotEqual, self.bool_, word, zero)
            mask = builder.constant_uint(forbidden)
            if forbidden:
                found = builder.op(Op.BitwiseAnd, self.uint, word, mask)
                clean = builder.op(Op.IEqual, self.bool_, found, zero)
                fits = builder.op(Op.LogicalAnd, self.bool_, fits, clean)
            self._hoisted[key] = HoistedWord(word, mask, fits)
            self.called_descriptor_word = True
        return self._hoisted[key]

    # -- a dynamic index: the binding's table read once per function ------------------------

    def _table_length(self, lookup: DescriptorLookup) -> int | None:
        """The static length a dynamically indexed lookup's check passes (a runtime array:
        none, 0xFFFF_FFFF), where its binding's table can be read once per function."""
        if not self.tables.available or not self.with_state(lookup):
            return None
        if lookup.static_length is not None:
            return lookup.static_length
        return 0xFFFF_FFFF if lookup.runtime_sized and len(lookup.lengths) == 1 else None

    def _hoisted_table(self, function: Function, lookup: DescriptorLookup, length: int) -> int:
        assert lookup.descriptor_set is not None and lookup.binding is not None
        return self.tables.table(function, lookup.descriptor_set, lookup.binding, length)

    def _note_unusable(
        self, instruction_index: int, lookups: list[Lookup], usable: dict[int, HoistedWord]
    ) -> None:
        """The skipped access's descriptors: noted for the invocation's one record."""
        assert self.reports is not None
        constant = self.builder.constant_uint
        noted = []
        for lookup in lookups:
            assert isinstance(lookup, DescriptorLookup)
            assert lookup.static_index is not None and lookup.static_length is not None
            hoisted = usable[id(lookup)]
            noted.append(
                NotedLookup(
                    hoisted.fits,
                    constant(lookup.static_index),
                    constant(lookup.static_length),
                    constant(self._set_binding(lookup)),
                    hoisted.word,
                    hoisted.forbidden,
                )
            )
        self.reports.note(instruction_index, noted)

    # -- index arithmetic ------------------------------------------------------------------

    def _check(self, instruction_index: int, lookup: Lookup, consumer: Instruction) -> int:
        """Emit the call that checks one lookup (and reports it); returns its bool."""
        builder = self.builder
        if isinstance(lookup, MergedLookup):
            operands = self.merged[id(lookup.merge)]
            if lookup.element is not None:  # seed 003 on the chosen block
                moved = builder.op(Op.IAdd, self.uint, operands.flat, self.as_uint(lookup.element))
                operands = replace(operands, flat=moved)
        else:
            operands = self.operands(lookup)
        index = builder.constant_uint(instruction_index)
        table = self.tables_here.get(id(lookup))
        if table is not None and self.helpers.check_in_table is not None:
            self.called_check_in_table = True
            check_in_table = self.helpers.check_in_table

            def check() -> int:
                return builder.op(
                    Op.FunctionCall,
                    self.bool_,
                    check_in_table,
                    index,
                    table,
                    operands.flat,
                    builder.constant_uint(self._set_binding(lookup)),
                    builder.constant_uint(self.forbidden(lookup, consumer)),
                    operands.extra_ok,
                )

            verdict = self.verdicts_here.get(id(lookup))
            if verdict is None:
                return check()
            assert isinstance(lookup, DescriptorLookup) and lookup.static_length is not None
            passes = self.verdicts.passes(
                verdict, table, operands.flat, lookup.static_length, operands.extra_ok
            )
            return builder.or_else(passes, check)
        if (
            self.helpers.check_descriptor is not None
            and operands.descriptor_set is not None
            and operands.binding is not None
        ):
            return builder.op(
                Op.FunctionCall,
                self.bool_,
                self.helpers.check_descriptor,
                index,
                operands.descriptor_set,
                operands.binding,
                operands.flat,
                # no state and a runtime array: unchecked
                operands.total or builder.constant_uint(0xFFFF_FFFF),
                builder.constant_uint(self.forbidden(lookup, consumer)),
                operands.extra_ok,
            )
        if operands.total is None:
            raise RuntimeError("a runtime array checked without descriptor state")
        return builder.op(
            Op.FunctionCall,
            self.bool_,
            self.helpers.check_bounds,
            index,
            operands.flat,
            operands.total,
            operands.extra_ok,
            builder.constant_uint(self._set_binding(lookup)),
        )

    def _set_binding(self, lookup: Lookup) -> int:
        """The record's set and binding word of a lookup checked without descriptor state."""
        if isinstance(lookup, MergedLookup):
            return NO_SET_BINDING  # whichever was chosen: not known here
        if lookup.descriptor_set is None or lookup.binding is None:
            return NO_SET_BINDING
        return pack_set_binding(lookup.descriptor_set, lookup.binding)

    def operands(self, lookup: DescriptorLookup) -> CheckOperands:
        """Emit the index arithmetic of one lookup at the insert point."""
        builder = self.builder
        uint = self.uint
        lengths = [None if n is None else self.as_uint(n) for n in lookup.lengths]
        indices = [self.as_uint(index) for index in lookup.indices]
        # The helper compares the flat index; per-dimension checks matter only for arrays of
        # arrays (a flat index can be in range when one index is not) and 64-bit indices.
        extra: int | None = None
        if lookup.element is None:  # seed 003: with an element only base + element counts
            for index, as_uint, length in zip(lookup.indices, indices, lengths, strict=True):
                if length is not None and (len(indices) > 1 or self.conversions.is_wide(index)):
                    ok = self.conversions.less_than(index, as_uint, length)
                    extra = (
                        ok if extra is None else builder.op(Op.LogicalAnd, self.bool_, extra, ok)
                    )
        flat = indices[0] if indices else builder.constant_uint(0)
        for as_uint, inner in zip(indices[1:], lengths[1:], strict=True):
            if inner is None:  # only the outermost dimension can be a runtime array
                raise RuntimeError("runtime array inside a descriptor array")
            flat = builder.op(Op.IAdd, uint, builder.op(Op.IMul, uint, flat, inner), as_uint)
        total: int | None = None
        if lookup.static_length is not None:
            total = builder.constant_uint(lookup.static_length)
        elif all(length is not None for length in lengths):
            known = [length for length in lengths if length is not None]
            total = known[0] if known else builder.constant_uint(1)
            for length in known[1:]:
                total = builder.op(Op.IMul, uint, total, length)
        if lookup.element is not None:
            flat = builder.op(Op.IAdd, uint, flat, self.as_uint(lookup.element))
        extra_ok = builder.constant_bool(True) if extra is None else extra
        if self.helpers.check_descriptor is not None and self.with_state(lookup):
            assert lookup.descriptor_set is not None and lookup.binding is not None
            return CheckOperands(
                flat,
                total,
                extra_ok,
                builder.constant_uint(lookup.descriptor_set),
                builder.constant_uint(lookup.binding),
            )
        return CheckOperands(flat, total, extra_ok, None, None)

    def as_uint(self, value: int) -> int:
        return self.conversions.as_uint(value)
