"""Values the layer knows for each action: ``OpArrayLength`` results, from the range it keeps
for the buffer, and push constants, from what the app pushed.

The driver measures a runtime array as ``(range - offset) / stride``: the bytes bound to the
descriptor after the array's member offset, in whole elements. The layer knows that range
(``gpuav_buffer_range``), so a test before a loop can bound the length without reading it
from the descriptor, which may be unwritten. ``x % length``, the usual way to keep an index
inside a runtime array, is then bounded too (``loop_bounds``).

A push constant read at constant indices is a word of the bytes the app last pushed before the
action, which the layer notes (``fetch_bindings.c``): ``textures[push.material]``, the usual
bindless index, can then be decided for a draw on the host (``host_terms.Pushed``).
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
from gpuav.spirv.grammar import Decoration, Op, StorageClass
from gpuav.spirv.instruction import Instruction


@dataclass
class ActionValues:
    builder: Builder
    def_use: DefUse
    types: Types
    decorations: Decorations
    buffer_range: int  # gpuav_buffer_range
    # whether a bound was made (its test calls gpuav_buffer_range)
    called: bool = False

    def length(self, length: Instruction) -> EmitBound | None:
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

    def pushed(self, load: Instruction) -> host_terms.Bound | None:
        """The pushed word a 32-bit load from the push-constant block reads, at its byte
        offset in the block; None for other loads, or where the offset is not known."""
        chain = self.def_use.definition(load.operands[2])
        if chain is None or chain.opcode not in CHAINS:
            return None
        variable = self.def_use.definition(chain.operands[2])
        if (
            variable is None
            or variable.opcode != Op.Variable
            or variable.operands[2] != StorageClass.PushConstant
        ):
            return None
        offset = 0
        current = self.types.pointee(variable.operands[0])
        for index_id in chain.operands[3:]:
            index = self.types.constant_value(index_id)
            if index is None or index < 0:
                return None
            step = self._step(current, index)
            if step is None:
                return None
            offset, current = offset + step[0], step[1]
        if self.types.opcode(current) != Op.TypeInt or self.types.width(current) != 32:
            return None
        return host_terms.Pushed(offset)

    def _step(self, composite: int, index: int) -> tuple[int, int] | None:
        """(bytes from ``composite``'s start, the type) of its member or element ``index``."""
        opcode = self.types.opcode(composite)
        if opcode == Op.TypeStruct:
            members = self.types.member_types(composite)
            offset = self.decorations.member_value(composite, index, Decoration.Offset)
            if index >= len(members) or offset is None:
                return None
            return offset, members[index]
        if opcode == Op.TypeArray:
            stride = self.decorations.value(composite, Decoration.ArrayStride)
            length = self.types.array_length(composite)
            if not stride or length is None or index >= length:
                return None
            return index * stride, self.types.element(composite)
        if opcode == Op.TypeVector:
            component = self.types.scalar(composite)
            if index >= self.types.component_count(composite):
                return None
            return index * self.types.width(component) // 8, component
        return None

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
