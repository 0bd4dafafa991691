"""Whether every descriptor of a small binding leaves an access nothing to report, decided
once per function from the binding's table, so that an access inside a loop needs no load of
its own descriptor's word.

An access of a dynamically indexed descriptor reads that descriptor's word to learn whether
it is written, its resource alive and its view fitting (``gpuav_check_in_table``). In a loop
that is one dependent load per iteration, and on a GPU it is the load, not the compare,
that costs. For a binding whose array has at most ``MAX_DESCRIPTORS`` descriptors, the
*verdict* ANDs ``gpuav_table_word_fits`` over all of them in the function's first block; the
access then passes at once where the verdict holds and its index is below the binding's
length, and only otherwise calls the full check (which writes the records):

    verdict = fits(table, 0, forbidden) && ... && fits(table, count - 1, forbidden)
    if !(verdict && index < length && index < count): ok = gpuav_check_in_table(...)

Outside loops one word per access is cheaper than the whole binding's, so only accesses in a
loop take a verdict.
"""

from __future__ import annotations

from gpuav.instrument.state_reader import TABLE_LENGTH
from gpuav.spirv.analysis.loops import loop_blocks
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op
from gpuav.spirv.module import Block, Function

MAX_DESCRIPTORS = 16


class BindingVerdicts:
    def __init__(self, builder: Builder, table_word_fits: int | None) -> None:
        self.builder = builder
        self.table_word_fits = table_word_fits
        # (function id, table id, descriptor count, forbidden bits) -> the verdict's bool
        self._read: dict[tuple[int, int, int, int], int] = {}
        # function id -> the labels of its loop blocks when first asked
        self._loops: dict[int, set[int]] = {}

    @property
    def called(self) -> bool:
        return bool(self._read)

    def wanted(self, function: Function, block: Block, count: int | None) -> bool:
        """Whether an access in ``block`` of a binding of ``count`` descriptors (None: a
        runtime array) takes a verdict."""
        if self.table_word_fits is None or count is None or not 0 < count <= MAX_DESCRIPTORS:
            return False
        return block.label_id in self._loop_blocks(function)

    def verdict(self, function: Function, table: int, count: int, forbidden: int) -> int:
        """The verdict, emitted in ``function``'s first block right after ``table`` the first
        time; call before the guard splits anything."""
        assert self.table_word_fits is not None
        key = (function.id, table, count, forbidden)
        if key not in self._read:
            builder = self.builder
            entry = function.blocks[0]
            defining = next(i for i in entry.instructions if i.result_id == table)
            builder.position_after(defining, entry, function)
            bool_ = builder.type_bool()
            mask = builder.constant_uint(forbidden)
            fits = [
                builder.op(
                    Op.FunctionCall,
                    bool_,
                    self.table_word_fits,
                    table,
                    builder.constant_uint(index),
                    mask,
                )
                for index in range(count)
            ]
            verdict = fits[0]
            for more in fits[1:]:
                verdict = builder.op(Op.LogicalAnd, bool_, verdict, more)
            self._read[key] = verdict
        return self._read[key]

    def passes(self, verdict: int, table: int, index: int, count: int, also: int) -> int:
        """Whether an access passes on its binding's ``verdict`` alone, emitted in place:
        the verdict holds (and ``also``), and ``index`` is below both the binding's length and
        the ``count`` descriptors the verdict covers."""
        builder = self.builder
        uint, bool_ = builder.type_int(32, False), builder.type_bool()
        length = builder.op(Op.CompositeExtract, uint, table, TABLE_LENGTH)
        below = builder.op(Op.ULessThan, bool_, index, length)
        covered = builder.op(Op.ULessThan, bool_, index, builder.constant_uint(count))
        passes = builder.op(Op.LogicalAnd, bool_, verdict, below)
        passes = builder.op(Op.LogicalAnd, bool_, passes, covered)
        if also == builder.constant_bool(True):
            return passes
        return builder.op(Op.LogicalAnd, bool_, passes, also)

    def _loop_blocks(self, function: Function) -> set[int]:
        """Found once per function. The guards split blocks later, but accesses are guarded
        last first, so an access's block is always one that stood then (a block made after
        would count as outside loops: the access would take its full check)."""
        if function.id not in self._loops:
            self._loops[function.id] = loop_blocks(function)
        return self._loops[function.id]
