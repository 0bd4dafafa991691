"""The descriptor bindings a compute module declares, for a benchmark to build its pipeline
layout from the module itself (``module_creation_app.c`` reads them as numbers)."""

from __future__ import annotations

from dataclasses import dataclass

from gpuav.spirv import read
from gpuav.spirv.grammar import Decoration, Dim, Op, StorageClass
from gpuav.spirv.instruction import Instruction

# VkDescriptorType values.
SAMPLER, COMBINED_IMAGE_SAMPLER, SAMPLED_IMAGE, STORAGE_IMAGE = 0, 1, 2, 3
UNIFORM_TEXEL_BUFFER, STORAGE_TEXEL_BUFFER, UNIFORM_BUFFER, STORAGE_BUFFER = 4, 5, 6, 7
INPUT_ATTACHMENT = 10
RUNTIME_ARRAY_COUNT = 4  # descriptors a layout gives a runtime array
MAX_SETS = 8  # module_creation_app's (and many devices') limit
PUSH_CONSTANT_BYTES = 128  # Vulkan's guaranteed minimum, enough for the corpus' blocks
_DESCRIPTOR_CLASSES = (
    StorageClass.UniformConstant,
    StorageClass.Uniform,
    StorageClass.StorageBuffer,
)


class NoLayout(ValueError):
    """A module whose resources this benchmark does not build layouts for."""


@dataclass(frozen=True)
class Binding:
    set: int
    binding: int
    descriptor_type: int
    count: int


@dataclass(frozen=True)
class Resources:
    bindings: tuple[Binding, ...]
    push_bytes: int

    def line(self) -> str:
        """The module's layout as ``module_creation_app`` reads it, after the path and flag."""
        numbers = [self.push_bytes, len(self.bindings)]
        for binding in self.bindings:
            numbers += [binding.set, binding.binding, binding.descriptor_type, binding.count]
        return " ".join(map(str, numbers))


def resources_of(words: list[int]) -> Resources:
    module = read(words)
    defined = {i.result_id: i for i in module.globals if i.result_id is not None}
    decorated: dict[int, dict[int, int]] = {}
    for annotation in module.annotations:
        if annotation.opcode == Op.Decorate:
            target, decoration, *literals = annotation.operands
            decorated.setdefault(target, {})[decoration] = literals[0] if literals else 0
    bindings = []
    push_bytes = 0
    for variable in module.globals:
        if variable.opcode != Op.Variable:
            continue
        storage_class = variable.operands[2]
        if storage_class == StorageClass.PushConstant:
            push_bytes = PUSH_CONSTANT_BYTES
        if storage_class not in _DESCRIPTOR_CLASSES:
            continue
        pointee = defined[defined[variable.operands[0]].operands[2]]
        count = 1
        while pointee.opcode in (Op.TypeArray, Op.TypeRuntimeArray):
            if pointee.opcode == Op.TypeArray:
                count *= defined[pointee.operands[2]].operands[2]
            else:
                count *= RUNTIME_ARRAY_COUNT
            pointee = defined[pointee.operands[1]]
        decorations = decorated.get(variable.operands[1], {})
        bindings.append(
            Binding(
                decorations.get(Decoration.DescriptorSet, 0),
                decorations.get(Decoration.Binding, 0),
                _descriptor_type(pointee, storage_class, decorated),
                count,
            )
        )
    if any(binding.set >= MAX_SETS for binding in bindings):
        raise NoLayout(f"a set index of {MAX_SETS} or more")
    return Resources(tuple(bindings), push_bytes)


def _descriptor_type(
    pointee: Instruction, storage_class: int, decorated: dict[int, dict[int, int]]
) -> int:
    if pointee.opcode == Op.TypeStruct:
        if storage_class == StorageClass.StorageBuffer:
            return STORAGE_BUFFER
        buffer_block = Decoration.BufferBlock in decorated.get(pointee.operands[0], {})
        return STORAGE_BUFFER if buffer_block else UNIFORM_BUFFER
    if pointee.opcode == Op.TypeSampler:
        return SAMPLER
    if pointee.opcode == Op.TypeSampledImage:
        return COMBINED_IMAGE_SAMPLER
    if pointee.opcode == Op.TypeImage:
        dim, sampled = pointee.operands[2], pointee.operands[6]
        if dim == Dim.Buffer:
            return STORAGE_TEXEL_BUFFER if sampled == 2 else UNIFORM_TEXEL_BUFFER
        if dim == Dim.SubpassData:
            return INPUT_ATTACHMENT
        return STORAGE_IMAGE if sampled == 2 else SAMPLED_IMAGE
    raise NoLayout(f"no descriptor type for {pointee.opcode}")
