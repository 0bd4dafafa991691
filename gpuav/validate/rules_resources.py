"""Resource variables (Vulkan environment for SPIR-V, seed 004, and the spec's Shader
Resource Interface): DescriptorSet/Binding, the types buffers and opaque descriptors may have,
Block/BufferBlock, what may not be written, and where OpTypeRuntimeArray may be instantiated.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from gpuav.spirv.grammar import OPCODE_NAMES, Decoration, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.shader_facts import (
    DESCRIPTOR_STORAGE,
    function_instructions,
    global_variables,
    root_variable,
    strip_arrays,
    variable_storage,
    variable_type,
)

DESCRIPTOR_DECORATIONS = "VUID-StandaloneSpirv-UniformConstant-06677"
DESCRIPTOR_STORAGE_CLASS = "VUID-StandaloneSpirv-DescriptorSet-06491"
BUFFER_TYPE = "VUID-StandaloneSpirv-Uniform-06807"
PUSH_CONSTANT_TYPE = "VUID-StandaloneSpirv-PushConstant-06808"
BLOCK_REQUIRED = "VUID-StandaloneSpirv-PushConstant-06675"
UNIFORM_BLOCK_REQUIRED = "VUID-StandaloneSpirv-Uniform-06676"
RUNTIME_ARRAY = "VUID-StandaloneSpirv-OpTypeRuntimeArray-04680"
UNIFORM_CONSTANT_TYPE = "VUID-StandaloneSpirv-UniformConstant-04655"
UNIFORM_BLOCK_WRITE = "VUID-StandaloneSpirv-Uniform-06925"

_OPAQUE = frozenset(
    {Op.TypeImage, Op.TypeSampler, Op.TypeSampledImage, Op.TypeAccelerationStructureKHR}
)
# Writes whose pointer is operand 0, and atomics (read-modify-write) whose pointer is operand 2.
_WRITES = frozenset(
    {Op.Store, Op.CopyMemory, Op.CopyMemorySized, Op.AtomicStore, Op.AtomicFlagClear}
)
_ATOMIC_WRITES = frozenset(
    opcode
    for opcode, name in OPCODE_NAMES.items()
    if name.startswith("OpAtomic") and opcode not in _WRITES and opcode != Op.AtomicLoad
)


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    for variable in global_variables(context):
        yield from _descriptor_variable(context, variable)
        yield from _runtime_arrays(context, variable)
    for instruction in function_instructions(context):
        if instruction.opcode == Op.Variable and len(instruction.operands) >= 3:
            yield from _runtime_arrays(context, instruction)
        elif instruction.opcode in _WRITES or instruction.opcode in _ATOMIC_WRITES:
            yield from _uniform_block_write(context, instruction)


def _uniform_block_write(context: ValidationContext, write: Instruction) -> Iterator[Diagnostic]:
    """A Uniform variable decorated Block (a uniform buffer) is read-only."""
    pointer_at = 2 if write.opcode in _ATOMIC_WRITES else 0
    if len(write.operands) <= pointer_at:
        return
    defs = context.def_use.defs
    variable = root_variable(defs, write.operands[pointer_at])
    if variable is None or variable_storage(variable) != StorageClass.Uniform:
        return
    pointee = variable_type(defs, variable)
    if pointee is not None and context.decorations.is_block(strip_arrays(defs, pointee)):
        yield Diagnostic(
            UNIFORM_BLOCK_WRITE,
            "a uniform buffer (Uniform storage, Block) must not be written",
            write.origin,
        )


def _descriptor_variable(context: ValidationContext, variable: Instruction) -> Iterator[Diagnostic]:
    defs, decorations = context.def_use.defs, context.decorations
    variable_id, storage = variable.operands[1], variable_storage(variable)
    has_set = decorations.has(variable_id, Decoration.DescriptorSet)
    has_binding = decorations.has(variable_id, Decoration.Binding)
    if storage in DESCRIPTOR_STORAGE and not (has_set and has_binding):
        yield Diagnostic(
            DESCRIPTOR_DECORATIONS,
            "a UniformConstant, Uniform or StorageBuffer variable needs DescriptorSet and Binding",
            variable.origin,
        )
    if storage not in DESCRIPTOR_STORAGE and (has_set or has_binding):
        yield Diagnostic(
            DESCRIPTOR_STORAGE_CLASS,
            "DescriptorSet and Binding only decorate UniformConstant, Uniform and StorageBuffer "
            "variables",
            variable.origin,
        )
    pointee = variable_type(defs, variable)
    if pointee is None:
        return
    if storage == StorageClass.UniformConstant:
        element = defs.get(_strip_one_array(defs, pointee))
        if element is None or element.opcode not in _OPAQUE:
            yield Diagnostic(
                UNIFORM_CONSTANT_TYPE,
                "a UniformConstant variable must be an image, sampler, sampled image or "
                "acceleration structure, or an array of them",
                variable.origin,
            )
        return
    if storage not in (StorageClass.Uniform, StorageClass.StorageBuffer, StorageClass.PushConstant):
        return
    struct_id = pointee if storage == StorageClass.PushConstant else _strip_one_array(defs, pointee)
    struct = defs.get(struct_id)
    if struct is None or struct.opcode != Op.TypeStruct:
        rule = PUSH_CONSTANT_TYPE if storage == StorageClass.PushConstant else BUFFER_TYPE
        yield Diagnostic(
            rule, "a buffer or push-constant variable must have a struct type", variable.origin
        )
        return
    block = decorations.is_block(struct_id)
    if storage == StorageClass.Uniform and not (block or decorations.is_buffer_block(struct_id)):
        yield Diagnostic(
            UNIFORM_BLOCK_REQUIRED,
            "a Uniform variable's struct must be decorated Block or BufferBlock",
            variable.origin,
        )
    elif storage != StorageClass.Uniform and not block:
        yield Diagnostic(
            BLOCK_REQUIRED,
            "a PushConstant or StorageBuffer variable's struct must be decorated Block",
            variable.origin,
        )


def _strip_one_array(defs: Mapping[int, Instruction], type_id: int) -> int:
    """Descriptors may form one array level, never arrays of arrays (04655, 06807)."""
    instruction = defs.get(type_id)
    if instruction is not None and instruction.opcode in (Op.TypeArray, Op.TypeRuntimeArray):
        return instruction.operands[1] if len(instruction.operands) > 1 else type_id
    return type_id


def _runtime_arrays(context: ValidationContext, variable: Instruction) -> Iterator[Diagnostic]:
    """OpTypeRuntimeArray only as the last member of a Block (StorageBuffer, Uniform) or
    BufferBlock (Uniform) struct, or as the outermost dimension of a descriptor array."""
    defs, decorations = context.def_use.defs, context.decorations
    storage = variable_storage(variable)
    type_id = variable_type(defs, variable)
    if type_id is None:
        return
    outer = defs.get(type_id)
    if outer is not None and outer.opcode == Op.TypeRuntimeArray and storage in DESCRIPTOR_STORAGE:
        type_id = outer.operands[1] if len(outer.operands) > 1 else type_id
    if storage in DESCRIPTOR_STORAGE:
        type_id = _strip_sized(defs, type_id)
    struct = defs.get(type_id)
    sized_last = False
    if struct is not None and struct.opcode == Op.TypeStruct and len(struct.operands) > 1:
        block = decorations.is_block(type_id)
        buffer_block = decorations.is_buffer_block(type_id)
        sized_last = (
            storage in (StorageClass.StorageBuffer, StorageClass.PhysicalStorageBuffer) and block
        ) or (storage == StorageClass.Uniform and (block or buffer_block))
    if sized_last and struct is not None:
        members = struct.operands[1:]
        last = defs.get(members[-1])
        illegal = any(_has_runtime_array(defs, member, 0) for member in members[:-1])
        if last is not None and last.opcode == Op.TypeRuntimeArray and len(last.operands) > 1:
            illegal = illegal or _has_runtime_array(defs, last.operands[1], 0)
        else:
            illegal = illegal or _has_runtime_array(defs, members[-1], 0)
    else:
        illegal = _has_runtime_array(defs, type_id, 0)
    if illegal:
        yield Diagnostic(
            RUNTIME_ARRAY,
            "OpTypeRuntimeArray may only be the last member of a Block/BufferBlock buffer struct "
            "or the outermost dimension of a descriptor array",
            variable.origin,
        )


def _strip_sized(defs: Mapping[int, Instruction], type_id: int) -> int:
    for _ in range(64):
        instruction = defs.get(type_id)
        if (
            instruction is None
            or instruction.opcode != Op.TypeArray
            or len(instruction.operands) < 2
        ):
            return type_id
        type_id = instruction.operands[1]
    return type_id


def _has_runtime_array(defs: Mapping[int, Instruction], type_id: int, depth: int) -> bool:
    instruction = defs.get(type_id)
    if instruction is None or depth > 64:
        return False
    if instruction.opcode == Op.TypeRuntimeArray:
        return True
    if instruction.opcode in (Op.TypeArray, Op.TypeVector, Op.TypeMatrix):
        return len(instruction.operands) > 1 and _has_runtime_array(
            defs, instruction.operands[1], depth + 1
        )
    if instruction.opcode == Op.TypeStruct:
        return any(
            _has_runtime_array(defs, member, depth + 1) for member in instruction.operands[1:]
        )
    return False
