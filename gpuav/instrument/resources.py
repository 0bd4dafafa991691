"""How instrumented code reaches our three buffers: through our descriptor set, or through a
context of device addresses (issue 8, ``gpuav.instrument.descriptor_state``).

Both give the record writer and the state reader the same few operations (pointers to
``DataWrittenLength``, ``Data[i]``, ``region[s]`` and ``words[i]``, the capacity of ``Data``
and the length of ``words``, loads and stores), emitted at the builder's insert point. In
address mode each helper function loads the context once, at its start (``begin``).
"""

from __future__ import annotations

from gpuav.instrument.descriptor_state import (
    ADDRESS_BOUND_SETS,
    ADDRESS_OUTPUT,
    ADDRESS_STATE,
    BOUND_AREA_WORDS,
    BOUND_SETS_BINDING,
    CONTEXT_DATA_WORDS,
    MIN_CONTEXT_DATA_WORDS,
    OUTPUT_BINDING,
    STATE_BINDING,
    ContextAddressSource,
    PushConstantAddress,
)
from gpuav.instrument.push_constants import block_end
from gpuav.instrument.record import DATA_FIRST_WORD, WRITTEN_LENGTH_WORD
from gpuav.instrument.stage_words import add_to_interface
from gpuav.instrument.unsupported import DescriptorBoundsUnsupported
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import (
    AddressingModel,
    Capability,
    Decoration,
    MemoryAccess,
    Op,
    StorageClass,
)
from gpuav.spirv.instruction import Instruction, encode_string
from gpuav.spirv.module import version_word

UINT_BYTES = 4
WORDS_PER_QUAD = 4  # the bound-sets area is an array of uvec4 (std140)
UINT64_BYTES = 8


class SetResources:
    """Our buffers as variables of our descriptor set (bindings of descriptor_state)."""

    def __init__(self, builder: Builder, descriptor_set: int, with_state: bool) -> None:
        self.builder = builder
        module = builder.module
        # SPIR-V before 1.3 has no StorageBuffer class without an extension: use BufferBlock.
        modern = module.version >= version_word(1, 3)
        self.storage_class = StorageClass.StorageBuffer if modern else StorageClass.Uniform
        block = Decoration.Block if modern else Decoration.BufferBlock
        uint = builder.type_int(32, False)
        runtime = builder.type_runtime_array(uint)
        builder.decorate(runtime, Decoration.ArrayStride, UINT_BYTES)
        output = builder.type_struct(uint, runtime)
        builder.name(output, "gpuav_output_block")
        self.output = self._variable(output, block, descriptor_set, OUTPUT_BINDING, "gpuav_output")
        builder.member_decorate(output, 1, Decoration.Offset, UINT_BYTES)
        # Restrict: no other buffer of the shader is ever bound to our memory (issue 17).
        builder.decorate(self.output, Decoration.Restrict)
        self.variables = [self.output]
        if with_state:
            # The bound-sets area is a uniform buffer: the same for every invocation of an
            # action, its words read at constant offsets come through the constant cache
            # rather than the load path the app's own memory accesses use.
            quad = builder.type_vector(uint, WORDS_PER_QUAD)
            count = builder.constant_uint(BOUND_AREA_WORDS // WORDS_PER_QUAD)
            fixed = builder.declare(Op.TypeArray, quad, count)
            builder.decorate(fixed, Decoration.ArrayStride, WORDS_PER_QUAD * UINT_BYTES)
            bound = builder.type_struct(fixed)
            self.bound_sets = self._variable(
                bound,
                Decoration.Block,
                descriptor_set,
                BOUND_SETS_BINDING,
                "gpuav_bound_sets",
                StorageClass.Uniform,
            )
            state_runtime = builder.type_runtime_array(uint)
            builder.decorate(state_runtime, Decoration.ArrayStride, UINT_BYTES)
            state = builder.type_struct(state_runtime)
            self.state = self._variable(state, block, descriptor_set, STATE_BINDING, "gpuav_state")
            self.variables += [self.bound_sets, self.state]
            # Only read by the instrumented code: the driver may keep these look-ups apart
            # from the record writes and hoist them (issue 17).
            builder.decorate(self.state, Decoration.NonWritable)
            builder.decorate(self.state, Decoration.Restrict)

    def _variable(
        self,
        struct: int,
        block: int,
        set_: int,
        binding: int,
        name: str,
        storage_class: int | None = None,
    ) -> int:
        builder = self.builder
        builder.decorate(struct, block)
        builder.member_decorate(struct, 0, Decoration.Offset, 0)
        storage_class = self.storage_class if storage_class is None else storage_class
        variable = builder.variable(builder.type_pointer(storage_class, struct), storage_class)
        builder.decorate(variable, Decoration.DescriptorSet, set_)
        builder.decorate(variable, Decoration.Binding, binding)
        builder.name(variable, name)
        return variable

    def begin(self) -> None:
        """Nothing to load: the variables are globals."""

    def _uint_pointer(self, base: int, *indices: int) -> int:
        builder = self.builder
        pointer = builder.type_pointer(self.storage_class, builder.type_int(32, False))
        return builder.op(Op.AccessChain, pointer, base, *indices)

    def length_pointer(self) -> int:
        return self._uint_pointer(self.output, self.builder.constant_uint(WRITTEN_LENGTH_WORD))

    def data_pointer(self, index: int) -> int:
        return self._uint_pointer(self.output, self.builder.constant_uint(DATA_FIRST_WORD), index)

    def capacity(self) -> int:
        uint = self.builder.type_int(32, False)
        return self.builder.op(Op.ArrayLength, uint, self.output, DATA_FIRST_WORD)

    def bound_area_pointer(self, word: int) -> int:
        builder = self.builder
        uint = builder.type_int(32, False)
        quad = builder.op(Op.ShiftRightLogical, uint, word, builder.constant_uint(2))
        lane = builder.op(Op.BitwiseAnd, uint, word, builder.constant_uint(WORDS_PER_QUAD - 1))
        pointer = builder.type_pointer(StorageClass.Uniform, uint)
        return builder.op(
            Op.AccessChain, pointer, self.bound_sets, builder.constant_uint(0), quad, lane
        )

    def state_pointer(self, index: int) -> int:
        return self._uint_pointer(self.state, self.builder.constant_uint(0), index)

    def state_length(self) -> int:
        uint = self.builder.type_int(32, False)
        return self.builder.op(Op.ArrayLength, uint, self.state, 0)

    def load(self, pointer: int) -> int:
        return self.builder.op(Op.Load, self.builder.type_int(32, False), pointer)

    def store(self, pointer: int, value: int) -> None:
        self.builder.op_void(Op.Store, pointer, value)


class AddressResources:
    """Our buffers through PhysicalStorageBuffer pointers read from a context (issue 8)."""

    def __init__(self, builder: Builder, source: ContextAddressSource) -> None:
        self.builder = builder
        module = builder.module
        builder.capability(Capability.Int64)
        builder.capability(Capability.PhysicalStorageBufferAddresses)
        if module.version < version_word(1, 5):
            builder.extension("SPV_KHR_physical_storage_buffer")
        for memory_model in module.memory_model:
            memory_model.operands[0] = AddressingModel.PhysicalStorageBuffer64
        self.storage_class = StorageClass.PhysicalStorageBuffer
        uint = builder.type_int(32, False)
        self.uint64 = builder.type_int(64, False)
        context = builder.type_struct(*[self.uint64] * (CONTEXT_DATA_WORDS + 1))
        builder.decorate(context, Decoration.Block)
        for member in range(CONTEXT_DATA_WORDS + 1):
            builder.member_decorate(context, member, Decoration.Offset, member * UINT64_BYTES)
        builder.name(context, "gpuav_context")
        _decorate_read_only(builder, context, CONTEXT_DATA_WORDS + 1)
        self.context_pointer = builder.type_pointer(self.storage_class, context)
        runtime = builder.type_runtime_array(uint)
        builder.decorate(runtime, Decoration.ArrayStride, UINT_BYTES)
        output = builder.type_struct(uint, runtime)
        builder.decorate(output, Decoration.Block)
        builder.member_decorate(output, 0, Decoration.Offset, 0)
        builder.member_decorate(output, 1, Decoration.Offset, UINT_BYTES)
        words = builder.type_runtime_array(uint)
        builder.decorate(words, Decoration.ArrayStride, UINT_BYTES)
        state = builder.type_struct(words)
        builder.name(state, "gpuav_words_block")
        builder.decorate(state, Decoration.Block)
        builder.member_decorate(state, 0, Decoration.Offset, 0)
        _decorate_read_only(builder, state, 1)
        self.output_pointer_type = builder.type_pointer(self.storage_class, output)
        self.words_pointer_type = builder.type_pointer(self.storage_class, state)
        self.variables: list[int] = []
        self._source = source
        self._address = self._declare_source(source)
        self._current: dict[str, int] = {}

    def _declare_source(self, source: ContextAddressSource) -> tuple[int, int]:
        """(push-constant variable, member) or (low, high) specialization constants."""
        builder = self.builder
        module = builder.module
        uint = builder.type_int(32, False)
        if isinstance(source, PushConstantAddress):
            for instruction in module.globals:
                if (
                    instruction.opcode == Op.Variable
                    and instruction.operands[2] == StorageClass.PushConstant
                ):
                    variable = instruction.operands[1]
                    pointer = next(
                        g for g in module.globals if g.result_id == instruction.operands[0]
                    )
                    block = next(g for g in module.globals if g.result_id == pointer.operands[2])
                    end = block_end(module, block.operands[0])
                    if end is None or source.offset < end or source.offset % UINT64_BYTES:
                        raise DescriptorBoundsUnsupported(
                            f"the context address at push-constant offset {source.offset} "
                            f"would overlap the shader's push constants (ending at {end})"
                        )
                    block.operands.append(self.uint64)
                    _declare_before(module.globals, self.uint64, block)
                    member = len(block.operands) - 2
                    builder.member_decorate(
                        block.operands[0], member, Decoration.Offset, source.offset
                    )
                    builder.module.debug_names.append(
                        _member_name(block.operands[0], member, "gpuav_context_address")
                    )
                    return variable, member
            if source.offset % UINT64_BYTES:
                raise DescriptorBoundsUnsupported(
                    f"push-constant offset {source.offset} is not 8-byte aligned"
                )
            struct = builder.type_struct(self.uint64)
            builder.decorate(struct, Decoration.Block)
            builder.member_decorate(struct, 0, Decoration.Offset, source.offset)
            variable = builder.variable(
                builder.type_pointer(StorageClass.PushConstant, struct), StorageClass.PushConstant
            )
            builder.name(variable, "gpuav_push_constants")
            self.variables.append(variable)
            return variable, 0
        low = builder.declare(Op.SpecConstant, uint, 0)
        high = builder.declare(Op.SpecConstant, uint, 0)
        builder.decorate(low, Decoration.SpecId, source.low_constant_id)
        builder.decorate(high, Decoration.SpecId, source.high_constant_id)
        builder.name(low, "gpuav_context_address_low")
        builder.name(high, "gpuav_context_address_high")
        return low, high

    def begin(self) -> None:
        """Load the context at the insert point (a helper function's entry block)."""
        builder = self.builder
        if isinstance(self._source, PushConstantAddress):
            variable, member = self._address
            pointer = builder.op(
                Op.AccessChain,
                builder.type_pointer(StorageClass.PushConstant, self.uint64),
                variable,
                builder.constant_uint(member),
            )
            address = builder.op(Op.Load, self.uint64, pointer)
        else:
            low, high = self._address
            wide_low = builder.op(Op.UConvert, self.uint64, low)
            wide_high = builder.op(Op.UConvert, self.uint64, high)
            shifted = builder.op(
                Op.ShiftLeftLogical, self.uint64, wide_high, builder.constant_uint(32)
            )
            address = builder.op(Op.BitwiseOr, self.uint64, shifted, wide_low)
        context = builder.op(Op.ConvertUToPtr, self.context_pointer, address)
        slots = {
            "output": ADDRESS_OUTPUT,
            "bound_sets": ADDRESS_BOUND_SETS,
            "state": ADDRESS_STATE,
            "capacity": CONTEXT_DATA_WORDS,
        }
        self._current = {}
        for name, slot in slots.items():
            member = builder.op(
                Op.AccessChain,
                builder.type_pointer(self.storage_class, self.uint64),
                context,
                builder.constant_uint(slot),
            )
            self._current[name] = builder.op(
                Op.Load, self.uint64, member, MemoryAccess.Aligned, UINT64_BYTES
            )
        for name, pointer_type in (
            ("output", self.output_pointer_type),
            ("bound_sets", self.words_pointer_type),
            ("state", self.words_pointer_type),
        ):
            self._current[name] = builder.op(Op.ConvertUToPtr, pointer_type, self._current[name])

    def _uint_pointer(self, base: int, *indices: int) -> int:
        builder = self.builder
        pointer = builder.type_pointer(self.storage_class, builder.type_int(32, False))
        return builder.op(Op.AccessChain, pointer, base, *indices)

    def length_pointer(self) -> int:
        return self._uint_pointer(self._current["output"], self.builder.constant_uint(0))

    def data_pointer(self, index: int) -> int:
        return self._uint_pointer(
            self._current["output"], self.builder.constant_uint(DATA_FIRST_WORD), index
        )

    def capacity(self) -> int:
        """Words of ``Data``, from the context (OpArrayLength needs a logical pointer)."""
        builder = self.builder
        uint = builder.type_int(32, False)
        given = builder.op(Op.UConvert, uint, self._current["capacity"])
        unset = builder.op(Op.IEqual, builder.type_bool(), given, builder.constant_uint(0))
        minimum = builder.constant_uint(MIN_CONTEXT_DATA_WORDS)
        return builder.op(Op.Select, uint, unset, minimum, given)

    def bound_area_pointer(self, word: int) -> int:
        return self._uint_pointer(self._current["bound_sets"], self.builder.constant_uint(0), word)

    def state_pointer(self, index: int) -> int:
        return self._uint_pointer(self._current["state"], self.builder.constant_uint(0), index)

    def state_length(self) -> int:
        """Unknown through an address: the layer's regions are trusted to be in the buffer."""
        return self.builder.constant_uint(0xFFFF_FFFF)

    def load(self, pointer: int) -> int:
        builder = self.builder
        return builder.op(
            Op.Load, builder.type_int(32, False), pointer, MemoryAccess.Aligned, UINT_BYTES
        )

    def store(self, pointer: int, value: int) -> None:
        self.builder.op_void(Op.Store, pointer, value, MemoryAccess.Aligned, UINT_BYTES)


Resources = SetResources | AddressResources


def _decorate_read_only(builder: Builder, struct: int, members: int) -> None:
    """NonWritable on every member of a block of ours reached only through an address.

    A PhysicalStorageBuffer pointer made by OpConvertUToPtr is no memory object declaration,
    so neither NonWritable nor Restrict can go on a variable: the members carry it, which lets
    the driver keep state look-ups apart from the record writes (issue 17). ``struct`` is a
    struct the pass declared itself, never shared with the application's blocks.
    """
    for member in range(members):
        builder.member_decorate(struct, member, Decoration.NonWritable)


def _declare_before(globals_: list[Instruction], type_id: int, user: Instruction) -> None:
    """Move the definition of ``type_id`` (a scalar type) before ``user`` if it is after it."""
    at_user = next(k for k, g in enumerate(globals_) if g is user)
    at_type = next(k for k, g in enumerate(globals_) if g.result_id == type_id)
    if at_type > at_user:
        globals_.insert(at_user, globals_.pop(at_type))


def _member_name(struct: int, member: int, text: str) -> Instruction:
    return Instruction(Op.MemberName, [struct, member, *encode_string(text)])


def list_in_interfaces(builder: Builder, variables: list[int]) -> None:
    """SPIR-V 1.4: every global variable an entry point uses is in its interface."""
    if builder.module.version >= version_word(1, 4):
        for entry_point in builder.module.entry_points:
            for variable in variables:
                add_to_interface(entry_point, variable)
