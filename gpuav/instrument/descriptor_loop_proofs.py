"""Descriptor accesses in a loop that gets an unchecked copy (``loop_versions``).

The test before the loop reads the binding's table once and asks ``gpuav_binding_fits``
whether every descriptor of the binding can be used by the access. What is left is the
index itself:

- where it has a bound before the loop (``LoopBounds``; a descriptor that is no array has
  index 0), the test also compares that bound with the binding's length, and the copy runs
  the access as the app wrote it, stores and atomics included;
- where it does not (an index read from memory), the copy keeps a check without a branch: the
  index is kept where it is below the length and replaced by 0 (a usable descriptor, by the
  test) where it is not, the read's result is then zero, and the first failing index is
  kept in a function variable. After the loop, one call of ``gpuav_check_in_table`` with that
  index writes the record the checked loop would have written for it; later failures of the
  same invocation at the same access add no record. Only reads qualify here (a load, a
  fetch, an image read, a sample with an explicit level, a query): a store or an atomic
  through a replaced index would change another descriptor's memory.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuav.instrument import host_terms
from gpuav.instrument.accesses import DescriptorAccess, DescriptorLookup
from gpuav.instrument.binding_tables import BindingTables
from gpuav.instrument.descriptor_expectations import forbidden_bits
from gpuav.instrument.local_arrays import CHAINS
from gpuav.instrument.loop_bounds import Described, EmitBound, LoopBounds, described
from gpuav.instrument.loop_versions import Proof
from gpuav.instrument.record import NO_INSTRUCTION_INDEX, pack_set_binding
from gpuav.instrument.state_reader import TABLE_LENGTH
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.loops import Loop
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import RESULT_INDEX, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, version_word

_READS = frozenset(
    {
        Op.Load,
        Op.ImageFetch,
        Op.ImageRead,
        Op.ImageSampleExplicitLod,
        Op.ImageSampleDrefExplicitLod,
        Op.ImageGather,
        Op.ImageDrefGather,
        Op.ImageQuerySize,
        Op.ImageQuerySizeLod,
        Op.ImageQueryLevels,
        Op.ImageQuerySamples,
    }
)
# The table length a binding without state is read with (as the descriptor guard reads it).
_RUNTIME_LENGTH = 0xFFFF_FFFF


class DescriptorLoopProofs:
    def __init__(
        self,
        builder: Builder,
        def_use: DefUse,
        types: Types,
        tables: BindingTables,
        binding_fits: int,
        check_in_table: int,
    ) -> None:
        self.builder = builder
        self.def_use = def_use
        self.types = types
        self.tables = tables
        self.binding_fits = binding_fits
        self.check_in_table = check_in_table
        self.uint = builder.type_int(32, False)
        self.bool_ = builder.type_bool()
        self.called_binding_fits = False
        self.called_check_in_table = False

    def loop_proof(
        self, access: DescriptorAccess, bounds: LoopBounds, block: Block
    ) -> Proof | None:
        if len(access.lookups) != 1 or not self.tables.available:
            return None
        consumer = access.consumer
        lookup = access.lookups[0]
        if not self._shape_known(lookup):
            return None
        assert isinstance(lookup, DescriptorLookup)
        loop = bounds.loop
        if not self._inside(consumer, loop):
            return None
        length = lookup.static_length if lookup.static_length is not None else _RUNTIME_LENGTH
        # A descriptor that is no array is index 0 of a binding of one.
        bound = bounds.upper(lookup.indices[0], block) if lookup.indices else _first()
        site = None
        if bound is None:
            site = self._site(access, lookup, loop)
            if site is None:
                return None
        function = loop.function
        builder = self.builder
        descriptor_set, binding = lookup.descriptor_set or 0, lookup.binding or 0
        forbidden = forbidden_bits(self.types, lookup.variable, consumer)

        def test(to_test: Callable[[], None]) -> list[int]:
            table = self.tables.table(function, descriptor_set, binding, length)
            if site is not None:
                site.table = table
                site.set_binding = pack_set_binding(descriptor_set, binding)
                site.forbidden = forbidden
            to_test()
            self.called_binding_fits = True
            fits = builder.op(
                Op.FunctionCall,
                self.bool_,
                self.binding_fits,
                table,
                builder.constant_uint(forbidden),
                builder.constant_uint(0),
            )
            if bound is None:
                return [fits]
            value, valid = bound(builder)
            entries = builder.op(Op.CompositeExtract, self.uint, table, TABLE_LENGTH)
            return [fits, *valid, builder.op(Op.ULessThan, self.bool_, value, entries)]

        if site is not None:
            return Proof(test, site.keep_in_copy)
        index_bound = described(bound) if bound is not None else None
        host = None
        if index_bound is not None:
            host = (
                host_terms.Fits(descriptor_set, binding, forbidden, host_terms.Const(0)),
                host_terms.Below(index_bound, descriptor_set, binding),
            )
        return Proof(test, host=host)

    def _shape_known(self, lookup: object) -> bool:
        """One descriptor, or an index into one array of them, of a known set and binding."""
        return (
            isinstance(lookup, DescriptorLookup)
            and lookup.descriptor_set is not None
            and lookup.binding is not None
            and lookup.element is None
            and len(lookup.indices) <= 1
            and (lookup.static_length is not None or lookup.runtime_sized)
        )

    def _site(self, access: DescriptorAccess, lookup: DescriptorLookup, loop: Loop) -> _Site | None:
        """The read whose index the copy keeps checking, where it can be kept: a read (a
        store through a replaced index would write another descriptor's memory) of a scalar
        or vector, through an access chain in the loop indexed by a 32-bit integer."""
        consumer = access.consumer
        if consumer.opcode not in _READS or consumer.type_id is None:
            return None
        result_type = self.types.opcode(consumer.type_id)
        if result_type not in (Op.TypeBool, Op.TypeInt, Op.TypeFloat, Op.TypeVector):
            return None  # OpSelect picks scalars and vectors only
        index = lookup.indices[0]
        index_type = self.types.type_of(index)
        if (
            index_type is None
            or self.types.opcode(index_type) != Op.TypeInt
            or self.types.width(index_type) != 32
        ):
            return None
        chain = next(
            (
                link
                for link in access.links
                if link.opcode in CHAINS
                and link.operands[2] == lookup.variable
                and link.operands[3] == index
            ),
            None,
        )
        if chain is None or not self._inside(chain, loop):
            return None
        return _Site(self, loop, consumer, chain, index, access.instruction_index)

    def _inside(self, instruction: Instruction, loop: Loop) -> bool:
        place = self.def_use.place(instruction)
        return place is not None and place[1].label_id in loop.labels


def _first() -> EmitBound:
    def emit(builder: Builder) -> tuple[int, list[int]]:
        return builder.constant_uint(0), []

    return Described(emit, host_terms.Const(0))


class _Site:
    """One read whose index the copy keeps checking without a branch."""

    def __init__(
        self,
        proofs: DescriptorLoopProofs,
        loop: Loop,
        consumer: Instruction,
        chain: Instruction,
        index: int,
        instruction_index: int | None,
    ) -> None:
        self.proofs = proofs
        self.loop = loop
        self.consumer = consumer
        self.chain = chain
        self.index = index
        self.instruction_index = (
            NO_INSTRUCTION_INDEX if instruction_index is None else instruction_index
        )
        # set when the loop's test is emitted
        self.table = 0
        self.set_binding = 0
        self.forbidden = 0

    def keep_in_copy(self, mapping: dict[int, int], after: Block) -> None:
        proofs = self.proofs
        builder, types = proofs.builder, proofs.types
        uint, bool_ = proofs.uint, proofs.bool_
        function = self.loop.function
        failed, first = self._variables()
        chain = proofs.def_use.definition(mapping[self.chain.result_id or 0])
        consumer = proofs.def_use.definition(mapping[self.consumer.result_id or 0])
        assert chain is not None and consumer is not None
        place = proofs.def_use.place(chain)
        assert place is not None
        builder.position_before(chain, place[1], function)
        index = mapping.get(self.index, self.index)
        index_type = types.type_of(self.index) or uint
        as_uint = index if index_type == uint else builder.op(Op.Bitcast, uint, index)
        entries = builder.op(Op.CompositeExtract, uint, self.table, TABLE_LENGTH)
        ok = builder.op(Op.ULessThan, bool_, as_uint, entries)
        chain.operands[3] = builder.op(
            Op.Select, index_type, ok, index, builder.constant_null(index_type)
        )
        was = builder.op(Op.Load, bool_, failed)
        builder.op_void(
            Op.Store,
            failed,
            builder.op(Op.LogicalOr, bool_, was, builder.op(Op.LogicalNot, bool_, ok)),
        )
        kept = builder.op(Op.Load, uint, first)
        builder.op_void(Op.Store, first, builder.op(Op.Select, uint, was, kept, as_uint))
        self._zero_when_failed(consumer, ok)
        builder.position_at_start(after, function)
        while after.instructions[builder.index].opcode == Op.Phi:
            builder.index += 1
        with builder.if_then(builder.op(Op.Load, bool_, failed)):
            proofs.called_check_in_table = True
            builder.op(
                Op.FunctionCall,
                bool_,
                proofs.check_in_table,
                builder.constant_uint(self.instruction_index),
                self.table,
                builder.op(Op.Load, uint, first),
                builder.constant_uint(self.set_binding),
                builder.constant_uint(self.forbidden),
                builder.constant_bool(True),
            )

    def _variables(self) -> tuple[int, int]:
        """Function variables for whether the index failed and its first failing value,
        cleared in the preheader."""
        builder = self.proofs.builder
        uint, bool_ = self.proofs.uint, self.proofs.bool_
        function = self.loop.function
        entry = function.blocks[0]
        made = []
        for type_id in (bool_, uint):
            pointer = builder.type_pointer(StorageClass.Function, type_id)
            variable = builder.module.new_id()
            builder.position_at_start(entry, function)
            builder.emit(Instruction(Op.Variable, [pointer, variable, StorageClass.Function]))
            made.append(variable)
        preheader = self.loop.preheader
        assert preheader is not None
        builder.position_at_end(preheader, function)
        builder.index = len(preheader.instructions) - 2  # before the OpSelectionMerge
        builder.op_void(Op.Store, made[0], builder.constant_bool(False))
        builder.op_void(Op.Store, made[1], builder.constant_uint(0))
        return made[0], made[1]

    def _zero_when_failed(self, consumer: Instruction, ok: int) -> None:
        """The read's result where the index was kept, zero where it was replaced."""
        builder, types = self.proofs.builder, self.proofs.types
        place = self.proofs.def_use.place(consumer)
        assert place is not None and consumer.result_id is not None
        result_type = consumer.type_id or 0
        renamed = builder.module.new_id()
        result = consumer.result_id
        consumer.operands[RESULT_INDEX[consumer.opcode]] = renamed
        builder.copy_decorations(result, renamed)
        builder.position_after(consumer, place[1], place[0])
        condition = ok
        if types.opcode(result_type) == Op.TypeVector and builder.module.version < version_word(
            1, 4
        ):
            count = types.component_count(result_type)
            condition = builder.op(
                Op.CompositeConstruct, builder.type_vector(self.proofs.bool_, count), *[ok] * count
            )
        builder.emit(
            Instruction(
                Op.Select,
                [result_type, result, condition, renamed, builder.constant_null(result_type)],
            )
        )
