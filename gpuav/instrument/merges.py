"""Check operands carried through OpPhi and OpSelect, for descriptors chosen at run time.

``(c ? texA[i] : texB[j])`` in HLSL, or a descriptor picked in a loop, reaches its image
instruction through an OpSelect or OpPhi. The check stays at the consumer (only the chosen
descriptor is reported, and only when it is used): right after each incoming value's
definition the pass computes that lookup's flat index, length, per-dimension result, set and
binding, and merges each of them exactly as the descriptor is merged (an OpPhi beside the
OpPhi, an OpSelect beside the OpSelect, same condition and parents). The consumer's check
then reads the merged values. Only instructions are added; no block is split, so this runs
before any guard.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuav.instrument.accesses import DescriptorAccess, DescriptorLookup, Lookup, MergedLookup
from gpuav.instrument.descriptor_bounds import CheckOperands, Guarder
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction


@dataclass
class MergedOperands:
    """Fills ``guarder.merged`` for the merged lookups of the accesses."""

    guarder: Guarder

    def prepare(self, accesses: list[DescriptorAccess]) -> None:
        for access in accesses:
            for lookup in access.lookups:
                if isinstance(lookup, MergedLookup) and self._checkable(lookup):
                    self._merged(lookup)

    def _stateful(self) -> bool:
        return self.guarder.helpers.check_descriptor is not None

    def _checkable(self, lookup: Lookup) -> bool:
        """Every incoming lookup has a length to compare with (its own, or the state's)."""
        if isinstance(lookup, MergedLookup):
            return all(self._checkable(inner) for _, inner in lookup.incoming)
        if self._stateful():
            return lookup.descriptor_set is not None and lookup.binding is not None
        return not lookup.runtime_sized

    def _merged(self, lookup: MergedLookup) -> CheckOperands:
        guarder = self.guarder
        known = guarder.merged.get(id(lookup.merge))
        if known is not None:
            return known
        incoming = [self._incoming(value, inner, lookup.merge) for value, inner in lookup.incoming]
        builder = guarder.builder
        merge = lookup.merge
        place = guarder.def_use.place(merge)
        if place is None:
            raise RuntimeError(f"{merge!r} is not in a block")
        builder.position_after(merge, place[1], place[0])
        uint, bool_ = guarder.uint, guarder.bool_

        def merged(values: list[int], type_id: int) -> int:
            if merge.opcode == Op.Select:
                return builder.op(Op.Select, type_id, merge.operands[2], *values)
            parents = merge.operands[3::2]
            return builder.phi(type_id, *zip(values, parents, strict=True))

        stateful = self._stateful()
        operands = CheckOperands(
            merged([o.flat for o in incoming], uint),
            merged([o.total or builder.constant_uint(0xFFFF_FFFF) for o in incoming], uint),
            merged([o.extra_ok for o in incoming], bool_),
            merged([o.descriptor_set or 0 for o in incoming], uint) if stateful else None,
            merged([o.binding or 0 for o in incoming], uint) if stateful else None,
        )
        guarder.merged[id(merge)] = operands
        return operands

    def _incoming(self, value: int, lookup: Lookup, merge: Instruction) -> CheckOperands:
        """The operands of one incoming value, computed right after its definition."""
        if isinstance(lookup, MergedLookup):
            return self._merged(lookup)
        self._position_after_definition(value, merge)
        return self._complete(lookup, self.guarder.operands(lookup))

    def _complete(self, lookup: DescriptorLookup, operands: CheckOperands) -> CheckOperands:
        """Every field an id (a merge needs a value from every parent)."""
        builder = self.guarder.builder
        if not self._stateful():
            return operands
        return CheckOperands(
            operands.flat,
            operands.total or builder.constant_uint(0xFFFF_FFFF),
            operands.extra_ok,
            operands.descriptor_set or builder.constant_uint(lookup.descriptor_set or 0),
            operands.binding or builder.constant_uint(lookup.binding or 0),
        )

    def _position_after_definition(self, value: int, merge: Instruction) -> None:
        guarder = self.guarder
        builder = guarder.builder
        definition = guarder.def_use.defs.get(value)
        place = None if definition is None else guarder.def_use.place(definition)
        if definition is None or place is None:  # a global (one block variable): entry block
            merge_place = guarder.def_use.place(merge)
            if merge_place is None:
                raise RuntimeError(f"{merge!r} is not in a block")
            function = merge_place[0]
            block = function.blocks[0]
            at = 0
            while at < len(block.instructions) and block.instructions[at].opcode == Op.Variable:
                at += 1
            builder.position_at_start(block, function)
            builder.index = at
            return
        function, block = place
        builder.position_after(definition, block, function)
        while (
            builder.index < len(block.instructions)
            and block.instructions[builder.index].opcode == Op.Phi
        ):
            builder.index += 1
