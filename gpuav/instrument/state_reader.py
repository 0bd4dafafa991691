"""Helper functions that read the descriptor state the layer keeps (issue 8).

``gpuav_binding_length(set, binding, static_length)`` is the binding's actual array size in
the set bound at ``set`` (``static_length`` when the layer has no state for it: NO_STATE), and
``gpuav_descriptor_written(set, binding, index)`` whether that descriptor may be accessed
(true when there is no state). Every word of the state buffer is read through
``gpuav_state_word``, which returns 0 past the buffer's end, so a wrong offset can never make
the check itself read out of bounds. Layout: ``gpuav.instrument.descriptor_state``.
"""

from __future__ import annotations

from gpuav.instrument.descriptor_state import (
    BINDING_COUNT_WORD,
    MAX_TRACKED_SETS,
    NO_STATE,
)
from gpuav.instrument.record import ErrorCode
from gpuav.instrument.record_writer import RecordWriter
from gpuav.instrument.resources import Resources
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op

# The region words of binding b are at 1 + 2b (table offset) and 2 + 2b (size); see
# descriptor_state.binding_table_word / binding_size_word, which these must equal.
_TABLE_BASE, _SIZE_BASE, _PER_BINDING = 1, 2, 2


class StateReader:
    def __init__(self, builder: Builder, resources: Resources, writer: RecordWriter) -> None:
        self.builder = builder
        self.resources = resources
        self.writer = writer
        self.state_word = self._define_state_word()
        self.region = self._define_region()
        self.binding_length = self._define_binding_length()
        self.descriptor_written = self._define_descriptor_written()
        self.check_descriptor = self._define_check_descriptor()

    def _define_state_word(self) -> int:
        builder = self.builder
        uint = builder.type_int(32, False)
        function, (index,) = builder.new_function(uint, [uint])
        builder.name(function.id, "gpuav_state_word")
        self.resources.begin()
        inside = builder.op(Op.ULessThan, builder.type_bool(), index, self.resources.state_length())
        with builder.if_then(inside) as branch:
            value = self.resources.load(self.resources.state_pointer(index))
        result = builder.phi(
            uint, (value, branch.exit_label), (builder.constant_uint(0), branch.head_label)
        )
        builder.op_void(Op.ReturnValue, result)
        return function.id

    def _define_region(self) -> int:
        builder = self.builder
        uint = builder.type_int(32, False)
        function, (set_index,) = builder.new_function(uint, [uint])
        builder.name(function.id, "gpuav_region")
        self.resources.begin()
        tracked = builder.op(
            Op.ULessThan, builder.type_bool(), set_index, builder.constant_uint(MAX_TRACKED_SETS)
        )
        safe = builder.op(Op.Select, uint, tracked, set_index, builder.constant_uint(0))
        region = self.resources.load(self.resources.region_pointer(safe))
        result = builder.op(Op.Select, uint, tracked, region, builder.constant_uint(NO_STATE))
        builder.op_void(Op.ReturnValue, result)
        return function.id

    def _binding_word(self, region: int, binding: int, base: int) -> int:
        """state[region + base + 2 * binding]."""
        builder = self.builder
        uint = builder.type_int(32, False)
        scaled = builder.op(Op.IMul, uint, binding, builder.constant_uint(_PER_BINDING))
        offset = builder.op(Op.IAdd, uint, scaled, builder.constant_uint(base))
        return self._word(builder.op(Op.IAdd, uint, region, offset))

    def _word(self, index: int) -> int:
        builder = self.builder
        return builder.op(Op.FunctionCall, builder.type_int(32, False), self.state_word, index)

    def _region_facts(self, set_index: int, binding: int) -> tuple[int, int, int]:
        """(region, known: state exists, has: the binding is in the set's layout)."""
        builder = self.builder
        uint = builder.type_int(32, False)
        bool_ = builder.type_bool()
        region = builder.op(Op.FunctionCall, uint, self.region, set_index)
        known = builder.op(Op.INotEqual, bool_, region, builder.constant_uint(NO_STATE))
        count = self._word(
            builder.op(Op.IAdd, uint, region, builder.constant_uint(BINDING_COUNT_WORD))
        )
        has = builder.op(Op.ULessThan, bool_, binding, count)
        return region, known, has

    def _define_binding_length(self) -> int:
        builder = self.builder
        uint = builder.type_int(32, False)
        function, (set_index, binding, static_length) = builder.new_function(uint, [uint] * 3)
        builder.name(function.id, "gpuav_binding_length")
        region, known, has = self._region_facts(set_index, binding)
        size = self._binding_word(region, binding, _SIZE_BASE)
        actual = builder.op(Op.Select, uint, has, size, builder.constant_uint(0))
        result = builder.op(Op.Select, uint, known, actual, static_length)
        builder.op_void(Op.ReturnValue, result)
        return function.id

    def _define_descriptor_written(self) -> int:
        builder = self.builder
        uint = builder.type_int(32, False)
        bool_ = builder.type_bool()
        function, (set_index, binding, index) = builder.new_function(bool_, [uint] * 3)
        builder.name(function.id, "gpuav_descriptor_written")
        region, known, has = self._region_facts(set_index, binding)
        table = self._binding_word(region, binding, _TABLE_BASE)
        at = builder.op(Op.IAdd, uint, builder.op(Op.IAdd, uint, region, table), index)
        flag = builder.op(Op.INotEqual, bool_, self._word(at), builder.constant_uint(0))
        checked = builder.op(Op.LogicalAnd, bool_, known, has)
        result = builder.op(Op.Select, bool_, checked, flag, builder.constant_bool(True))
        builder.op_void(Op.ReturnValue, result)
        return function.id

    def _define_check_descriptor(self) -> int:
        """``bool gpuav_check_descriptor(uint instruction_index, uint set, uint binding,
        uint index, uint static_length, bool also)``: in bounds of the actual length (and
        ``also``) and written; writes the bounds or the uninitialized record when not."""
        builder = self.builder
        uint = builder.type_int(32, False)
        bool_ = builder.type_bool()
        function, parameters = builder.new_function(bool_, [uint] * 5 + [bool_])
        instruction_index, set_index, binding, index, static_length, also = parameters
        builder.name(function.id, "gpuav_check_descriptor")
        length = builder.op(
            Op.FunctionCall, uint, self.binding_length, set_index, binding, static_length
        )
        below = builder.op(Op.ULessThan, bool_, index, length)
        inside = builder.op(Op.LogicalAnd, bool_, also, below)
        written = builder.op(
            Op.FunctionCall, bool_, self.descriptor_written, set_index, binding, index
        )
        with builder.if_then(builder.op(Op.LogicalNot, bool_, inside)):
            self.writer.emit_call(instruction_index, ErrorCode.INDEX_OUT_OF_BOUNDS, index, length)
        unwritten = builder.op(
            Op.LogicalAnd, bool_, inside, builder.op(Op.LogicalNot, bool_, written)
        )
        with builder.if_then(unwritten):
            code = ErrorCode.DESCRIPTOR_UNINITIALIZED
            self.writer.emit_call(instruction_index, code, index, length)
        builder.op_void(Op.ReturnValue, builder.op(Op.LogicalAnd, bool_, inside, written))
        return function.id

    def check(
        self,
        instruction_index: int,
        set_index: int,
        binding: int,
        index: int,
        static_length: int,
        also: int,
    ) -> int:
        """Emit a call of ``gpuav_check_descriptor``; returns its bool."""
        builder = self.builder
        return builder.op(
            Op.FunctionCall,
            builder.type_bool(),
            self.check_descriptor,
            builder.constant_uint(instruction_index),
            builder.constant_uint(set_index),
            builder.constant_uint(binding),
            index,
            static_length,
            also,
        )
