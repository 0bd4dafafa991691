"""Upper bounds of ``OpArrayLength`` results, from the range the layer keeps for the buffer.

The driver measures a runtime array as ``(range - offset) / stride``: the bytes bound to the
descriptor after the array's member offset, in whole elements. The layer knows that range
(``gpuav_buffer_range``), so a test before a loop can bound the length without reading it
from the descriptor, which may be unwritten. ``x % length``, the usual way to keep an index
inside a runtime array, is then bounded too (``loop_bounds``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuav.instrument import host_terms
from gpuav.instrument.local_arrays import CHAINS
from gpuav.instrument.loop_bounds import Described, EmitBound
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Decoration, Op
from gpuav.spirv.instruction import Instruction


@dataclass
class ArrayLengthBounds:
    builder: Builder
    def_use: DefUse
    types: Types
    decorations: Decorations
    buffer_range: int  # gpuav_buffer_range
    # whether a bound was made (its test calls gpuav_buffer_range)
    called: bool = False

    def bound(self, length: Instruction) -> EmitBound | None:
        """A bound of ``length`` (an OpArrayLength) for a buffer variable, or one element of
        an array of them at a constant index; None for anything else."""
        pointer, member = length.operands[2], length.operands[3]
        found = self._variable(pointer)
        if found is None:
            return None
        variable, index = found
        descriptor_set = self.decorations.descriptor_set(variable.operands[1])
        binding = self.decorations.binding(variable.operands[1])
        struct = self.types.pointee(self.types.type_of(pointer) or 0)
        members = self.types.member_types(struct)
        if descriptor_set is None or binding is None or not 0 <= member < len(members):
            return None
        offset = self.decorations.member_value(struct, member, Decoration.Offset)
        stride = self.decorations.value(members[member], Decoration.ArrayStride)
        if offset is None or not stride:
            return None
        buffer_range = self.buffer_range

        def emit(builder: Builder) -> tuple[int, list[int]]:
            self.called = True
            uint, bool_ = builder.type_int(32, False), builder.type_bool()
            bytes_ = builder.op(
                Op.FunctionCall,
                uint,
                buffer_range,
                builder.constant_uint(descriptor_set),
                builder.constant_uint(binding),
                builder.constant_uint(index),
            )
            start = builder.constant_uint(offset)
            holds = builder.op(Op.UGreaterThanEqual, bool_, bytes_, start)
            after = builder.op(Op.ISub, uint, bytes_, start)
            return builder.op(Op.UDiv, uint, after, builder.constant_uint(stride)), [holds]

        host = host_terms.ArrayLength(descriptor_set, binding, index, offset, stride)
        return Described(emit, host)

    def _variable(self, pointer: int) -> tuple[Instruction, int] | None:
        """(the descriptor variable, the constant index into its array or 0) of the block
        ``pointer`` points to."""
        definition = self.def_use.definition(pointer)
        if definition is None:
            return None
        if definition.opcode == Op.Variable:
            pointee = self.types.pointee(definition.operands[0])
            if self.types.opcode(pointee) != Op.TypeStruct:
                return None
            return definition, 0
        if definition.opcode not in CHAINS or len(definition.operands) != 4:
            return None
        variable = self.def_use.definition(definition.operands[2])
        if variable is None or variable.opcode != Op.Variable:
            return None
        array = self.types.pointee(variable.operands[0])
        if self.types.opcode(array) != Op.TypeArray:
            return None
        length = self.types.array_length(array)
        index = self.types.constant_value(definition.operands[3])
        if length is None or index is None or not 0 <= index < length:
            return None
        return variable, index
