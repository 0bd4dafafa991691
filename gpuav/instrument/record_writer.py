"""The one helper function that writes an error record into the debug output buffer.

``void gpuav_write_record(uint instruction_index, uint error_code, uint descriptor_index,
uint array_length, uint set_binding)`` (the descriptor errors) claims the record's words with
an atomic add on ``DataWrittenLength`` and writes them only when the whole record fits in
``Data`` (seed 000: never a partial record).
Word positions and sizes come from ``gpuav.instrument.record``; where the buffer is comes from
``gpuav.instrument.resources`` (our descriptor set, or a context address).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from gpuav.instrument import record
from gpuav.instrument.record import ErrorCode
from gpuav.instrument.resources import Resources
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import MemoryModel, Op, Scope


class RecordWriter:
    """Defines ``gpuav_write_record`` and emits calls to it."""

    def __init__(
        self, builder: Builder, resources: Resources, *, shader_id: int, stage_info: int
    ) -> None:
        self.builder = builder
        self.resources = resources
        self.shader_id = shader_id
        self.stage_info = stage_info
        vulkan_model = any(i.operands[1] == MemoryModel.Vulkan for i in builder.module.memory_model)
        # Device scope needs an extra capability under the Vulkan memory model; one draw's
        # invocations all run on one queue, so QueueFamily scope is enough there.
        self.scope = Scope.QueueFamily if vulkan_model else Scope.Device
        self.function = self._define()
        self.check_bounds = self._define_check_bounds()

    def _define(self) -> int:
        builder = self.builder
        uint = builder.type_int(32, False)
        function, (instruction_index, error_code, descriptor_index, array_length, set_binding) = (
            builder.new_function(builder.type_void(), [uint] * 5)
        )
        builder.name(function.id, "gpuav_write_record")
        self.resources.begin()
        # The bounds and uninitialized-descriptor records have the same words.
        size = builder.constant_uint(record.record_size(ErrorCode.INDEX_OUT_OF_BOUNDS))
        with self._claimed(instruction_index, error_code, size, descriptor_index) as start:
            self._store(start, record.ARRAY_LENGTH, array_length)
            self._store(start, record.DESCRIPTOR_SET_BINDING, set_binding)
        builder.op_void(Op.Return)
        return function.id

    def define_writer(self, code: ErrorCode, name: str) -> int:
        """``void name(uint instruction_index, uint descriptor_index, uint words...)``: the
        record of ``code``, whose validation words are the parameters in record order."""
        builder = self.builder
        uint = builder.type_int(32, False)
        count = record.VALIDATION_WORDS[code]
        function, (instruction_index, *words) = builder.new_function(
            builder.type_void(), [uint] * (1 + count)
        )
        builder.name(function.id, name)
        self.resources.begin()
        size = builder.constant_uint(record.record_size(code))
        with self._claimed(instruction_index, builder.constant_uint(code), size, words[0]) as at:
            for offset, value in enumerate(words[1:], record.DESCRIPTOR_INDEX + 1):
                self._store(at, offset, value)
        builder.op_void(Op.Return)
        return function.id

    def define_check(
        self, code: ErrorCode, name: str, writer_name: str, passes: Callable[[list[int]], int]
    ) -> tuple[int, int]:
        """``bool name(uint instruction_index, uint descriptor_index, uint words...)``, whose
        parameters are the record of ``code``'s words: ``passes(parameters)`` (emitted in the
        function) says whether the access may go ahead; when not, the record is written.
        Returns the check's id and its record writer's."""
        builder = self.builder
        write = self.define_writer(code, writer_name)
        uint = builder.type_int(32, False)
        bool_ = builder.type_bool()
        function, parameters = builder.new_function(
            bool_, [uint] * (1 + record.VALIDATION_WORDS[code])
        )
        builder.name(function.id, name)
        ok = passes(parameters)
        with builder.if_then(builder.op(Op.LogicalNot, bool_, ok)):
            builder.op(Op.FunctionCall, builder.type_void(), write, *parameters)
        builder.op_void(Op.ReturnValue, ok)
        return function.id, write

    @contextmanager
    def _claimed(
        self, instruction_index: int, error_code: int, size: int, descriptor_index: int
    ) -> Iterator[int]:
        """Claim ``size`` words with an atomic add and, inside the ``with``, write the common
        words when the whole record fits; the body writes the rest at the yielded start."""
        builder = self.builder
        resources = self.resources
        uint = builder.type_int(32, False)
        bool_ = builder.type_bool()
        info = builder.op(Op.Load, builder.type_vector(uint, 3), self.stage_info)
        stage, word0, word1 = (builder.op(Op.CompositeExtract, uint, info, k) for k in range(3))
        start = builder.op(
            Op.AtomicIAdd,
            uint,
            resources.length_pointer(),
            builder.constant_uint(self.scope),
            builder.constant_uint(0),
            size,
        )
        # The last word of Data counts lost printf lines (record.RESERVED_TAIL_WORDS).
        whole = resources.capacity()
        tail = builder.constant_uint(record.RESERVED_TAIL_WORDS)
        capacity = builder.op(
            Op.Select,
            uint,
            builder.op(Op.UGreaterThanEqual, bool_, whole, tail),
            builder.op(Op.ISub, uint, whole, tail),
            builder.constant_uint(0),
        )
        room = builder.op(Op.ISub, uint, capacity, start)
        fits = builder.op(
            Op.LogicalAnd,
            bool_,
            builder.op(Op.ULessThanEqual, bool_, start, capacity),
            builder.op(Op.ULessThanEqual, bool_, size, room),
        )
        words = {
            record.RECORD_SIZE: size,
            record.SHADER_ID: builder.constant_uint(self.shader_id),
            record.INSTRUCTION_INDEX: instruction_index,
            record.STAGE: stage,
            record.STAGE_WORD_0: word0,
            record.STAGE_WORD_1: word1,
            record.ERROR_CODE: error_code,
            record.DESCRIPTOR_INDEX: descriptor_index,
        }
        with builder.if_then(fits):
            for offset, value in words.items():
                self._store(start, offset, value)
            yield start

    def _define_check_bounds(self) -> int:
        """``bool gpuav_check_bounds(uint instruction_index, uint index, uint length, bool
        also, uint set_binding)``: ``also && index < length``, writing the bounds record when
        false."""
        builder = self.builder
        uint = builder.type_int(32, False)
        bool_ = builder.type_bool()
        function, (instruction_index, index, length, also, set_binding) = builder.new_function(
            bool_, [uint, uint, uint, bool_, uint]
        )
        builder.name(function.id, "gpuav_check_bounds")
        below = builder.op(Op.ULessThan, bool_, index, length)
        ok = builder.op(Op.LogicalAnd, bool_, also, below)
        with builder.if_then(builder.op(Op.LogicalNot, bool_, ok)):
            self.emit_call(
                instruction_index, ErrorCode.INDEX_OUT_OF_BOUNDS, index, length, set_binding
            )
        builder.op_void(Op.ReturnValue, ok)
        return function.id

    def emit_call(
        self, instruction_index: int, error_code: int, index: int, length: int, set_binding: int
    ) -> None:
        """Call ``gpuav_write_record`` with ids (the error code is a literal value)."""
        builder = self.builder
        builder.op(
            Op.FunctionCall,
            builder.type_void(),
            self.function,
            instruction_index,
            builder.constant_uint(error_code),
            index,
            length,
            set_binding,
        )

    def _store(self, start: int, offset: int, value: int) -> None:
        builder = self.builder
        at = start
        if offset:
            at = builder.op(
                Op.IAdd, builder.type_int(32, False), start, builder.constant_uint(offset)
            )
        self.resources.store(self.resources.data_pointer(at), value)
