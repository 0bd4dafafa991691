"""The pass's helper functions, built once per kind of shader and copied into each module.

The helpers (``gpuav_write_record``, ``gpuav_check_bounds`` and, with descriptor state,
``gpuav_state_word``, ``gpuav_check_descriptor``, ``gpuav_binding_table``...) are the
same code in every shader; only ids, the shader id and the descriptor set differ. Emitting
them through the builder is a third of the pass's time, so for the descriptor-set path they
are built once into a scratch module (keyed by what changes their code: StorageBuffer or
BufferBlock, the memory model's scope, descriptor state) and copied: shared types and
constants are found or declared in the target, everything else gets fresh ids. The
context-address path builds them directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from gpuav.instrument.address_check import define_address_check
from gpuav.instrument.binding_fits import define_binding_fits
from gpuav.instrument.buffer_ranges import define_range_check
from gpuav.instrument.descriptor_state import ContextAddressSource
from gpuav.instrument.local_guards import define_local_report
from gpuav.instrument.record_writer import RecordWriter
from gpuav.instrument.resources import AddressResources, SetResources
from gpuav.instrument.state_reader import StateReader
from gpuav.instrument.texel_buffers import define_texel_check
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.builder import SHARED_CONSTANTS, UNIQUE_TYPES, Builder
from gpuav.spirv.grammar import RESULT_INDEX, Decoration, MemoryModel, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function, Module, version_word

_SHADER_ID_PLACEHOLDER = 0x5EED_C0DE
# Globals a module may hold only once (the builder shares them); others are declared anew.
_SHARED = UNIQUE_TYPES | SHARED_CONSTANTS


@dataclass(frozen=True)
class Helpers:
    """Ids of the helpers in one module, and the globals they use."""

    check_bounds: int
    check_descriptor: int | None
    stage_info: int
    variables: tuple[int, ...]  # our buffers' variables (for SPIR-V 1.4 interface lists)
    buffer_range: int | None = None  # with descriptor state
    check_buffer_range: int | None = None  # with descriptor state
    write_range_record: int | None = None  # with descriptor state
    check_texel: int | None = None  # with descriptor state
    write_texel_record: int | None = None  # with descriptor state
    report_local_index: int | None = None
    write_local_record: int | None = None
    check_address: int | None = None  # with descriptor state; and its two record writers
    address_writers: tuple[int, ...] = ()
    address_stretch: int | None = None  # its Private variable
    address_inside: int | None = None  # with descriptor state: the same search, no record
    descriptor_word: int | None = None  # with descriptor state
    write_record: int | None = None  # gpuav_write_record, for the descriptor errors
    write_mismatch: int | None = None  # with descriptor state: a descriptor not fitting
    binding_table: int | None = None  # with descriptor state; read once per function
    check_in_table: int | None = None  # with descriptor state: checks against that table
    range_in_table: int | None = None  # with descriptor state: a buffer's range from it
    table_word_fits: int | None = None  # with descriptor state: one descriptor of a table
    binding_fits: int | None = None  # with descriptor state: all of them, before a loop
    action_verdict: int | None = None  # with descriptor state: the layer's verdict word


def declare_stage_info(builder: Builder) -> int:
    uvec3 = builder.type_vector(builder.type_int(32, False), 3)
    variable = builder.variable(
        builder.type_pointer(StorageClass.Private, uvec3), StorageClass.Private
    )
    builder.name(variable, "gpuav_stage_info")
    return variable


def build_helpers(
    builder: Builder,
    *,
    descriptor_set: int,
    shader_id: int,
    descriptor_state: bool,
    context_address: ContextAddressSource | None,
) -> Helpers:
    """Declare our buffers and define the helpers in ``builder``'s module."""
    if context_address is None:
        return _Template.get(builder.module, descriptor_state).copy_into(
            builder, descriptor_set, shader_id
        )
    stage_info = declare_stage_info(builder)
    resources = AddressResources(builder, context_address)
    return _define(builder, resources, shader_id, stage_info, descriptor_state)


def _define(
    builder: Builder,
    resources: SetResources | AddressResources,
    shader_id: int,
    stage_info: int,
    descriptor_state: bool,
) -> Helpers:
    writer = RecordWriter(builder, resources, shader_id=shader_id, stage_info=stage_info)
    report_local, write_local = define_local_report(builder, writer)
    if not descriptor_state:
        return Helpers(
            writer.check_bounds,
            None,
            stage_info,
            tuple(resources.variables),
            report_local_index=report_local,
            write_local_record=write_local,
        )
    state = StateReader(builder, resources, writer)
    check_range, write_range = define_range_check(builder, writer)
    check_texel, write_texel = define_texel_check(builder, writer)
    check_address, *address_writers, address_stretch, address_inside = define_address_check(
        builder, writer, state.state_word
    )
    return Helpers(
        writer.check_bounds,
        state.check_descriptor,
        stage_info,
        tuple(resources.variables),
        state.buffer_range,
        check_range,
        write_range,
        check_texel,
        write_texel,
        report_local_index=report_local,
        write_local_record=write_local,
        check_address=check_address,
        address_writers=tuple(address_writers),
        address_stretch=address_stretch,
        address_inside=address_inside,
        descriptor_word=state.descriptor_word,
        write_record=writer.function,
        write_mismatch=state.write_mismatch,
        binding_table=state.binding_table,
        check_in_table=state.check_in_table,
        range_in_table=state.range_in_table,
        table_word_fits=state.table_word_fits,
        binding_fits=define_binding_fits(builder, state.table_word_fits, state.range_in_table),
        action_verdict=state.action_verdict,
    )


class _Template:
    """The helpers built into a scratch module, with the id positions of each instruction."""

    _cache: ClassVar[dict[tuple[bool, bool, bool], _Template]] = {}

    @classmethod
    def get(cls, module: Module, descriptor_state: bool) -> _Template:
        modern = module.version >= version_word(1, 3)
        vulkan_model = any(i.operands[1] == MemoryModel.Vulkan for i in module.memory_model)
        key = (modern, vulkan_model, descriptor_state)
        template = cls._cache.get(key)
        if template is None:
            template = cls._cache[key] = cls(module, descriptor_state)
        return template

    def __init__(self, module: Module, descriptor_state: bool) -> None:
        scratch = Module(version=module.version, generator=0, bound=1)
        scratch.memory_model = [
            Instruction(i.opcode, list(i.operands)) for i in module.memory_model
        ]
        builder = Builder(scratch)
        stage_info = declare_stage_info(builder)
        resources = SetResources(builder, 0, descriptor_state)
        self.helpers = _define(
            builder, resources, _SHADER_ID_PLACEHOLDER, stage_info, descriptor_state
        )
        self.module = scratch
        positions = IdOperands(scratch).positions
        self.globals = [(g, positions(g)) for g in scratch.globals]
        self.functions = [
            [(i, positions(i)) for i in function.all_instructions()]
            for function in scratch.functions
        ]

    def copy_into(self, builder: Builder, descriptor_set: int, shader_id: int) -> Helpers:
        module = builder.module
        ids: dict[int, int] = {}
        for instruction, positions in self.globals:
            ids[instruction.result_id or 0] = self._global(
                builder, instruction, positions, ids, shader_id
            )
        functions = self.functions
        for function_instructions in functions:
            for instruction, _positions in function_instructions:
                result = instruction.result_id
                if result is not None:
                    ids[result] = module.new_id()
        for function_instructions in functions:
            module.functions.append(
                _function([_mapped(i, p, ids) for i, p in function_instructions])
            )
        for annotation in self.module.annotations:
            operands = [ids[annotation.operands[0]], *annotation.operands[1:]]
            if annotation.opcode == Op.Decorate and operands[1] == Decoration.DescriptorSet:
                operands[2] = descriptor_set
            module.annotations.append(Instruction(annotation.opcode, operands))
        for name in self.module.debug_names:
            if name.operands[0] in ids:
                module.debug_names.append(
                    Instruction(name.opcode, [ids[name.operands[0]], *name.operands[1:]])
                )
        helpers = self.helpers
        return Helpers(
            ids[helpers.check_bounds],
            None if helpers.check_descriptor is None else ids[helpers.check_descriptor],
            ids[helpers.stage_info],
            tuple(ids[v] for v in helpers.variables),
            None if helpers.buffer_range is None else ids[helpers.buffer_range],
            None if helpers.check_buffer_range is None else ids[helpers.check_buffer_range],
            None if helpers.write_range_record is None else ids[helpers.write_range_record],
            None if helpers.check_texel is None else ids[helpers.check_texel],
            None if helpers.write_texel_record is None else ids[helpers.write_texel_record],
            report_local_index=None
            if helpers.report_local_index is None
            else ids[helpers.report_local_index],
            write_local_record=None
            if helpers.write_local_record is None
            else ids[helpers.write_local_record],
            check_address=None if helpers.check_address is None else ids[helpers.check_address],
            address_writers=tuple(ids[writer] for writer in helpers.address_writers),
            address_stretch=None
            if helpers.address_stretch is None
            else ids[helpers.address_stretch],
            address_inside=None if helpers.address_inside is None else ids[helpers.address_inside],
            descriptor_word=None
            if helpers.descriptor_word is None
            else ids[helpers.descriptor_word],
            write_record=None if helpers.write_record is None else ids[helpers.write_record],
            write_mismatch=None if helpers.write_mismatch is None else ids[helpers.write_mismatch],
            binding_table=None if helpers.binding_table is None else ids[helpers.binding_table],
            check_in_table=None if helpers.check_in_table is None else ids[helpers.check_in_table],
            range_in_table=None if helpers.range_in_table is None else ids[helpers.range_in_table],
            table_word_fits=None
            if helpers.table_word_fits is None
            else ids[helpers.table_word_fits],
            binding_fits=None if helpers.binding_fits is None else ids[helpers.binding_fits],
            action_verdict=None if helpers.action_verdict is None else ids[helpers.action_verdict],
        )

    @staticmethod
    def _global(
        builder: Builder,
        instruction: Instruction,
        positions: list[int],
        ids: dict[int, int],
        shader_id: int,
    ) -> int:
        opcode = instruction.opcode
        if opcode == Op.Constant and instruction.operands[2:] == [_SHADER_ID_PLACEHOLDER]:
            return builder.constant_uint(shader_id)
        mapped = _mapped(instruction, positions, ids, keep_result=True)
        result_at = RESULT_INDEX[opcode]
        operands = mapped.operands[:result_at] + mapped.operands[result_at + 1 :]
        if opcode in _SHARED:
            return builder.shared_declaration(opcode, *operands)
        return builder.declare(opcode, *operands)


def _mapped(
    instruction: Instruction, positions: list[int], ids: dict[int, int], keep_result: bool = False
) -> Instruction:
    operands = list(instruction.operands)
    result_at = RESULT_INDEX.get(instruction.opcode)
    for at in positions:
        if keep_result and at == result_at:
            continue
        operands[at] = ids[operands[at]]
    return Instruction(instruction.opcode, operands)


def _function(instructions: list[Instruction]) -> Function:
    """Reassemble a function from its instructions in module order."""
    definition, *rest = instructions
    function = Function(definition=definition, end=rest[-1])
    block: Block | None = None
    for instruction in rest[:-1]:
        if instruction.opcode == Op.FunctionParameter:
            function.parameters.append(instruction)
        elif instruction.opcode == Op.Label:
            block = Block(label=instruction)
            function.blocks.append(block)
        elif block is not None:
            block.instructions.append(instruction)
    return function
