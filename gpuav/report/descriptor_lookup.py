"""Which descriptor variable an instruction consumes: walk back to the OpVariable.

The instruction a record names consumes a descriptor through a short chain of value and
pointer instructions (an image from OpLoad of an OpAccessChain into the array, possibly
through OpSampledImage, OpImage or OpCopyObject; a buffer through OpAccessChain or seed 003's
OpPtrAccessChain). Following each id operand back along that chain in operand order reaches
the variable; the first one carrying DescriptorSet or Binding decorations is the descriptor.
A pointer merged by OpPhi or OpSelect (variable pointers) is followed into every incoming
value: the descriptor is named when they all come from one variable, else not at all. A record
that says which set and binding failed (an image and a separate sampler both indexed) picks
the variable reached with those.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction

# Instructions whose operand 2 (after result type and id) is the value or pointer they come from.
_FOLLOW = frozenset(
    {
        Op.Load,
        Op.CopyObject,
        Op.CopyLogical,
        Op.SampledImage,
        Op.Image,
        Op.AccessChain,
        Op.InBoundsAccessChain,
        Op.PtrAccessChain,
        Op.InBoundsPtrAccessChain,
        Op.ImageTexelPointer,
    }
)
_MAX_STEPS = 64
# Types of values that stand for a descriptor (or a pointer that still leads to one).
_HANDLE_TYPES = frozenset(
    {
        Op.TypeImage,
        Op.TypeSampler,
        Op.TypeSampledImage,
        Op.TypePointer,
        Op.TypeAccelerationStructureKHR,
    }
)


# Merges of pointers (variable pointers): every incoming value is followed, and the descriptor
# is named when they all lead to the same variable.
_MERGES = frozenset({Op.Phi, Op.Select})

# The only definitions the walk looks at: what it follows, variables, and the types it reads.
DEFINITIONS_NEEDED = (
    _FOLLOW
    | _MERGES
    | _HANDLE_TYPES
    | {Op.Variable, Op.TypeArray, Op.TypeRuntimeArray, Op.TypeStruct}
)


@dataclass(frozen=True)
class DescriptorVariable:
    variable_id: int
    name: str | None  # the variable's OpName, else its block type's name
    block_name: str | None  # the block type's name when the variable is a Block/BufferBlock
    descriptor_set: int | None
    binding: int | None

    def describe(self) -> str:
        """E.g. ``tex`` or ``data (block Data)``, with the set and binding."""
        name = self.name or f"%{self.variable_id}"
        if self.block_name and self.block_name != name:
            name += f" (block {self.block_name})"
        where = []
        if self.descriptor_set is not None:
            where.append(f"set {self.descriptor_set}")
        if self.binding is not None:
            where.append(f"binding {self.binding}")
        return f"{name}, {', '.join(where)}" if where else name


def find_descriptor(
    operand_ids: Iterable[int],
    definitions: Mapping[int, Instruction],
    decorations: Decorations,
    names: Mapping[int, str],
    wanted: tuple[int, int] | None = None,
) -> DescriptorVariable | None:
    """The first descriptor variable reached from ``operand_ids`` (ids, in operand order);
    the one at set and binding ``wanted`` when one is reached."""
    if wanted is not None:
        for start in operand_ids:
            for reached in _variables_reached(start, definitions, with_samplers=True):
                chosen = _variable(reached, definitions, decorations, names)
                if chosen is not None and (chosen.descriptor_set, chosen.binding) == wanted:
                    return chosen
    for start in operand_ids:
        variables = _variables_reached(start, definitions)
        found = {
            variable.variable_id: variable
            for variable in (_variable(v, definitions, decorations, names) for v in variables)
            if variable is not None
        }
        if len(found) == 1:
            return next(iter(found.values()))
        if found:
            return None  # a merge of different descriptors: the record cannot say which
    return None


def _variables_reached(
    start: int, definitions: Mapping[int, Instruction], with_samplers: bool = False
) -> list[Instruction]:
    """The OpVariables that ``start`` comes from through the followed chain and merges (and,
    ``with_samplers``, the sampler of an OpSampledImage after its image)."""
    variables: list[Instruction] = []
    pending, seen = [start], {start}
    while pending and len(seen) <= _MAX_STEPS:
        definition = definitions.get(pending.pop())
        if definition is None or len(definition.operands) < 3:
            continue
        opcode = definition.opcode
        if opcode == Op.Variable:
            variables.append(definition)
            continue
        if opcode == Op.Phi:
            sources = definition.operands[2::2]
        elif opcode == Op.Select and len(definition.operands) >= 5:
            sources = definition.operands[3:5]
        elif opcode == Op.SampledImage and with_samplers and len(definition.operands) >= 4:
            sources = definition.operands[2:4]
        elif opcode in _FOLLOW and (opcode != Op.Load or _is_handle(definition, definitions)):
            # A load of a non-handle is a value read from a buffer: the consumer is that load.
            sources = [definition.operands[2]]
        else:
            continue
        for source in sources:
            if source not in seen:
                seen.add(source)
                pending.append(source)
    return variables


def _is_handle(load: Instruction, definitions: Mapping[int, Instruction]) -> bool:
    loaded_type = definitions.get(load.operands[0])
    return loaded_type is not None and loaded_type.opcode in _HANDLE_TYPES


def _variable(
    variable: Instruction,
    definitions: Mapping[int, Instruction],
    decorations: Decorations,
    names: Mapping[int, str],
) -> DescriptorVariable | None:
    id_ = variable.operands[1]
    descriptor_set = decorations.descriptor_set(id_)
    binding = decorations.binding(id_)
    if descriptor_set is None and binding is None:
        return None
    block = _block_type(variable, definitions, decorations)
    block_name = names.get(block) or None if block is not None else None
    return DescriptorVariable(
        id_, names.get(id_) or block_name, block_name, descriptor_set, binding
    )


def _block_type(
    variable: Instruction, definitions: Mapping[int, Instruction], decorations: Decorations
) -> int | None:
    """The Block/BufferBlock struct the variable holds (through arrays), or None."""
    pointer = definitions.get(variable.operands[0])
    if pointer is None or pointer.opcode != Op.TypePointer:
        return None
    type_id = pointer.operands[2]
    for _ in range(_MAX_STEPS):
        definition = definitions.get(type_id)
        if definition is None:
            return None
        if definition.opcode in (Op.TypeArray, Op.TypeRuntimeArray):
            type_id = definition.operands[1]
            continue
        if definition.opcode == Op.TypeStruct and (
            decorations.is_block(type_id) or decorations.is_buffer_block(type_id)
        ):
            return type_id
        return None
    return None
