"""The debug output buffer and the one helper function that writes an error record.

``void gpuav_write_record(uint instruction_index, uint error_code, uint descriptor_index,
uint array_length)`` claims the record's words with an atomic add on ``DataWrittenLength`` and
writes them only when the whole record fits in the runtime length of ``Data`` (seed 000: never
a partial record). Word positions and sizes come from ``gpuav.instrument.record``.
"""

from __future__ import annotations

from gpuav.instrument import record
from gpuav.instrument.descriptor_state import OUTPUT_BINDING
from gpuav.instrument.record import ErrorCode
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Decoration, MemoryModel, Op, Scope, StorageClass
from gpuav.spirv.module import version_word


class RecordWriter:
    """Declares the output buffer at (``descriptor_set``, binding 0) and the helper."""

    def __init__(
        self, builder: Builder, *, descriptor_set: int, shader_id: int, stage_info: int
    ) -> None:
        self.builder = builder
        module = builder.module
        # SPIR-V before 1.3 has no StorageBuffer class without an extension: use BufferBlock.
        modern = module.version >= version_word(1, 3)
        self.storage_class = StorageClass.StorageBuffer if modern else StorageClass.Uniform
        uint = builder.type_int(32, False)
        data = builder.type_runtime_array(uint)
        builder.decorate(data, Decoration.ArrayStride, 4)
        struct = builder.type_struct(uint, data)
        builder.decorate(struct, Decoration.Block if modern else Decoration.BufferBlock)
        builder.member_decorate(struct, 0, Decoration.Offset, 0)
        builder.member_decorate(struct, 1, Decoration.Offset, 4)
        self.variable = builder.variable(
            builder.type_pointer(self.storage_class, struct), self.storage_class
        )
        builder.decorate(self.variable, Decoration.DescriptorSet, descriptor_set)
        builder.decorate(self.variable, Decoration.Binding, OUTPUT_BINDING)
        builder.name(struct, "gpuav_output_block")
        builder.name(self.variable, "gpuav_output")
        self.shader_id = shader_id
        self.stage_info = stage_info
        vulkan_model = any(i.operands[1] == MemoryModel.Vulkan for i in module.memory_model)
        # Device scope needs an extra capability under the Vulkan memory model; one draw's
        # invocations all run on one queue, so QueueFamily scope is enough there.
        self.scope = Scope.QueueFamily if vulkan_model else Scope.Device
        self.function = self._define()

    def _define(self) -> int:
        builder = self.builder
        uint = builder.type_int(32, False)
        void = builder.type_void()
        function, (instruction_index, error_code, descriptor_index, array_length) = (
            builder.new_function(void, [uint, uint, uint, uint])
        )
        builder.name(function.id, "gpuav_write_record")
        bool_ = builder.type_bool()
        is_bounds = builder.op(
            Op.IEqual, bool_, error_code, builder.constant_uint(ErrorCode.INDEX_OUT_OF_BOUNDS)
        )
        size = builder.op(
            Op.Select,
            uint,
            is_bounds,
            builder.constant_uint(record.record_size(ErrorCode.INDEX_OUT_OF_BOUNDS)),
            builder.constant_uint(record.record_size(ErrorCode.DESCRIPTOR_UNINITIALIZED)),
        )
        info = builder.op(Op.Load, builder.type_vector(uint, 3), self.stage_info)
        stage, word0, word1 = (builder.op(Op.CompositeExtract, uint, info, k) for k in range(3))
        uint_pointer = builder.type_pointer(self.storage_class, uint)
        length_pointer = builder.op(
            Op.AccessChain,
            uint_pointer,
            self.variable,
            builder.constant_uint(record.WRITTEN_LENGTH_WORD),
        )
        start = builder.op(
            Op.AtomicIAdd,
            uint,
            length_pointer,
            builder.constant_uint(self.scope),
            builder.constant_uint(0),
            size,
        )
        capacity = builder.op(Op.ArrayLength, uint, self.variable, record.DATA_FIRST_WORD)
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
            with builder.if_then(is_bounds):
                self._store(start, record.ARRAY_LENGTH, array_length)
        builder.op_void(Op.Return)
        return function.id

    def _store(self, start: int, offset: int, value: int) -> None:
        builder = self.builder
        uint = builder.type_int(32, False)
        at = start
        if offset:
            at = builder.op(Op.IAdd, uint, start, builder.constant_uint(offset))
        pointer = builder.op(
            Op.AccessChain,
            builder.type_pointer(self.storage_class, uint),
            self.variable,
            builder.constant_uint(record.DATA_FIRST_WORD),
            at,
        )
        builder.op_void(Op.Store, pointer, value)

    def call(
        self, instruction_index: int, error_code: int, descriptor_index: int, length: int
    ) -> None:
        """Emit a call at the builder's insert point; the first two are literal values."""
        builder = self.builder
        builder.op(
            Op.FunctionCall,
            builder.type_void(),
            self.function,
            builder.constant_uint(instruction_index),
            builder.constant_uint(error_code),
            descriptor_index,
            length,
        )
