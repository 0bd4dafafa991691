"""Facts about a module's types, constants, variables and images that several rule families
share, and the feature and enumerant-name lookups of their messages.

Everything here is defensive: a rule family must never raise on a broken module, so every
lookup of an id that may not be defined returns None instead of failing. The facts are cached
on the ValidationContext object's analyses (def-use) and computed once per family call.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from gpuav.spirv.grammar import Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.reach import interface_ids, models_of_users, reach

# Storage classes whose variables are descriptors (Vulkan "Shader Resource and Storage Class
# Correspondence").
DESCRIPTOR_STORAGE = frozenset(
    {StorageClass.UniformConstant, StorageClass.Uniform, StorageClass.StorageBuffer}
)
ACCESS_CHAINS = frozenset(
    {Op.AccessChain, Op.InBoundsAccessChain, Op.PtrAccessChain, Op.InBoundsPtrAccessChain}
)


@dataclass(frozen=True)
class Scalar:
    """The scalar at the bottom of a scalar or vector type."""

    kind: str  # "int", "float" or "bool"
    width: int
    signed: bool
    components: int


def operand(instruction: Instruction, index: int) -> int | None:
    operands = instruction.operands
    return operands[index] if index < len(operands) else None


def pointer_parts(defs: Mapping[int, Instruction], type_id: int | None) -> tuple[int, int] | None:
    """(storage class, pointee type) of an OpTypePointer, else None."""
    if type_id is None:
        return None
    instruction = defs.get(type_id)
    if instruction is None or instruction.opcode != Op.TypePointer:
        return None
    if len(instruction.operands) < 3:
        return None
    return instruction.operands[1], instruction.operands[2]


def strip_arrays(defs: Mapping[int, Instruction], type_id: int) -> int:
    """The element type under any number of OpTypeArray/OpTypeRuntimeArray."""
    for _ in range(64):  # a cycle in a broken module must not hang
        instruction = defs.get(type_id)
        if instruction is None or instruction.opcode not in (Op.TypeArray, Op.TypeRuntimeArray):
            return type_id
        if len(instruction.operands) < 2:
            return type_id
        type_id = instruction.operands[1]
    return type_id


def scalar_info(defs: Mapping[int, Instruction], type_id: int | None) -> Scalar | None:
    """The scalar of a scalar or vector numeric/bool type, else None."""
    if type_id is None:
        return None
    instruction = defs.get(type_id)
    components = 1
    if instruction is not None and instruction.opcode == Op.TypeVector:
        if len(instruction.operands) < 3:
            return None
        components = instruction.operands[2]
        instruction = defs.get(instruction.operands[1])
    if instruction is None:
        return None
    operands = instruction.operands
    if instruction.opcode == Op.TypeInt and len(operands) >= 3:
        return Scalar("int", operands[1], operands[2] == 1, components)
    if instruction.opcode == Op.TypeFloat and len(operands) >= 2:
        return Scalar("float", operands[1], True, components)
    if instruction.opcode == Op.TypeBool:
        return Scalar("bool", 32, False, components)
    return None


def image_type_of(defs: Mapping[int, Instruction], value: int | None) -> Instruction | None:
    """The OpTypeImage (with all eight operands) of an image or sampled-image value."""
    if value is None or (instruction := defs.get(value)) is None:
        return None
    type_ = defs.get(instruction.type_id or -1)
    if type_ is not None and type_.opcode == Op.TypeSampledImage and len(type_.operands) > 1:
        type_ = defs.get(type_.operands[1])
    if type_ is None or type_.opcode != Op.TypeImage or len(type_.operands) < 8:
        return None
    return type_


def global_variables(context: ValidationContext) -> Iterator[Instruction]:
    for instruction in context.module.globals:
        if instruction.opcode == Op.Variable and len(instruction.operands) >= 3:
            yield instruction


def variable_storage(instruction: Instruction) -> int:
    return instruction.operands[2]


def variable_type(defs: Mapping[int, Instruction], variable: Instruction) -> int | None:
    """The pointee type of an OpVariable."""
    parts = pointer_parts(defs, variable.operands[0])
    return None if parts is None else parts[1]


def variables_by_struct(context: ValidationContext) -> dict[int, list[Instruction]]:
    """struct type id -> global variables whose type is that struct or an array of it."""
    defs = context.def_use.defs
    found: dict[int, list[Instruction]] = {}
    for variable in global_variables(context):
        pointee = variable_type(defs, variable)
        if pointee is not None:
            found.setdefault(strip_arrays(defs, pointee), []).append(variable)
    return found


def root_variable(defs: Mapping[int, Instruction], pointer: int) -> Instruction | None:
    """The OpVariable a pointer is derived from through access chains and copies."""
    for _ in range(256):
        instruction = defs.get(pointer)
        if instruction is None:
            return None
        if instruction.opcode == Op.Variable:
            return instruction
        if instruction.opcode in ACCESS_CHAINS or instruction.opcode == Op.CopyObject:
            if len(instruction.operands) < 3:
                return None
            pointer = instruction.operands[2]
            continue
        return None
    return None


class EntryPoints:
    """Which execution models list each global variable in their interface, or use it."""

    def __init__(self, context: ValidationContext) -> None:
        self.context = context
        self.function_models = reach(context).models
        # variable id -> execution models of entry points listing it in their interface
        self.interface_models: defaultdict[int, set[int]] = defaultdict(set)
        for entry in context.module.entry_points:
            for variable in interface_ids(entry):
                self.interface_models[variable].add(entry.operands[0])

    def models_using(self, variable: int) -> set[int]:
        """Execution models of entry points whose interface lists or whose code uses it."""
        return set(self.interface_models.get(variable, ())) | models_of_users(
            self.context, variable
        )

    def models_of(self, instruction: Instruction) -> set[int]:
        place = self.context.def_use.place(instruction)
        if place is None:
            return set()
        return set(self.function_models.get(place[0].id, frozenset()))


def function_instructions(context: ValidationContext) -> Iterator[Instruction]:
    """Every instruction of every function body: parameters, then each block's."""
    for function in context.module.functions:
        yield from function.parameters
        for block in function.blocks:
            yield from block.instructions


def enabled(context: ValidationContext, name: str) -> bool:
    """Whether a feature (or boolean property, such as the float-controls ones) is on:
    named in ``features``, or a nonzero entry of ``limits``."""
    return name in context.features or bool(context.limits.get(name, 0))


def constant_u32(context: ValidationContext, id_: int) -> int | None:
    """The value of a 32-bit integer OpConstant (scopes and semantics), None otherwise
    (specialization constants included: their value is not known here)."""
    instruction = context.def_use.defs.get(id_)
    if instruction is None or instruction.opcode != Op.Constant or len(instruction.operands) < 3:
        return None
    type_instruction = context.def_use.defs.get(instruction.operands[0])
    if type_instruction is None or type_instruction.opcode != Op.TypeInt:
        return None
    return instruction.operands[2] & 0xFFFFFFFF


def enum_name(enum: type, value: int) -> str:
    """The grammar's spelling of an enumerant value (``Workgroup``), or the number."""
    for name, member in vars(enum).items():
        if not name.startswith("_") and member == value:
            return name.removesuffix("_")
    return str(value)
