"""Decorations and resource variables (Vulkan environment for SPIR-V, "Decorations" of seed 004).

Forbidden and misplaced decorations: GLSLShared/GLSLPacked, interpolation, Flat on integer
fragment inputs, Patch, FPRoundingMode. Resource variables (DescriptorSet/Binding, Block) are
``rules_resources``; built-in variables ``rules_builtins``; NonUniform ``rules_nonuniform``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from gpuav.spirv.grammar import Decoration, ExecutionModel, FPRoundingMode, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.shader_facts import (
    EntryPoints,
    global_variables,
    pointer_parts,
    scalar_info,
    strip_arrays,
    variable_storage,
    variable_type,
    variables_by_struct,
)

GLSL_LAYOUT = "VUID-StandaloneSpirv-GLSLShared-04669"
INTERPOLATION_STORAGE = "VUID-StandaloneSpirv-Flat-04670"
INTERPOLATION_FRAGMENT_OUTPUT = "VUID-StandaloneSpirv-Flat-06201"
INTERPOLATION_VERTEX_INPUT = "VUID-StandaloneSpirv-Flat-06202"
FLAT_REQUIRED = "VUID-StandaloneSpirv-Flat-04744"
PATCH_STAGE = "GPUAV-Patch-ExecutionModel"
ROUNDING_MODE = "VUID-StandaloneSpirv-FPRoundingMode-04675"
ROUNDING_MODE_USE = "GPUAV-FPRoundingMode-Conversion"
INVARIANT_STORAGE = "VUID-StandaloneSpirv-Invariant-04677"
INPUT_ATTACHMENT_STORAGE = "VUID-StandaloneSpirv-InputAttachmentIndex-06678"


_INTERPOLATION = frozenset(
    {Decoration.Flat, Decoration.NoPerspective, Decoration.Sample, Decoration.Centroid}
)
_DECORATES = (Op.Decorate, Op.DecorateId, Op.DecorateString)
_MEMBER_DECORATES = (Op.MemberDecorate, Op.MemberDecorateString)
_NO_PATCH_MODELS = frozenset(
    {ExecutionModel.Vertex, ExecutionModel.Geometry, ExecutionModel.Fragment}
)
# Where SPV_KHR_16bit_storage lets a rounded 16-bit conversion be stored.
_ROUNDED_STORE_CLASSES = frozenset(
    {
        StorageClass.StorageBuffer,
        StorageClass.Uniform,
        StorageClass.PushConstant,
        StorageClass.Output,
        StorageClass.PhysicalStorageBuffer,
    }
)


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    entry_points = EntryPoints(context)
    users = variables_by_struct(context)
    for annotation in context.module.annotations:
        yield from _annotation(context, annotation, entry_points, users)
    yield from _flat_required(context, entry_points)


def _annotation(
    context: ValidationContext,
    annotation: Instruction,
    entry_points: EntryPoints,
    users: Mapping[int, list[Instruction]],
) -> Iterator[Diagnostic]:
    operands = annotation.operands
    if annotation.opcode in _DECORATES and len(operands) >= 2:
        target, decoration, parameters = operands[0], operands[1], operands[2:]
        instruction = context.def_use.defs.get(target)
        variables = (
            [instruction] if instruction is not None and instruction.opcode == Op.Variable else []
        )
    elif annotation.opcode in _MEMBER_DECORATES and len(operands) >= 3:
        decoration, parameters = operands[2], operands[3:]
        variables = users.get(operands[0], [])
    else:
        return
    if decoration in (Decoration.GLSLShared, Decoration.GLSLPacked):
        yield Diagnostic(
            GLSL_LAYOUT,
            "the GLSLShared and GLSLPacked decorations must not be used",
            annotation.origin,
        )
    elif decoration in _INTERPOLATION:
        yield from _interpolation(annotation, variables, entry_points)
    elif decoration == Decoration.Patch:
        for variable in variables:
            if entry_points.interface_models.get(variable.operands[1], set()) & _NO_PATCH_MODELS:
                yield Diagnostic(
                    PATCH_STAGE,
                    "Patch must not be used in the interface of a vertex, geometry or fragment "
                    "shader",
                    annotation.origin,
                )
    elif decoration == Decoration.FPRoundingMode and annotation.opcode in _DECORATES:
        yield from _rounding_mode(context, annotation, parameters)
    elif decoration == Decoration.Invariant:
        for variable in variables:
            if variable_storage(variable) not in (StorageClass.Input, StorageClass.Output):
                yield Diagnostic(
                    INVARIANT_STORAGE,
                    "Invariant only decorates Input and Output variables (or their members)",
                    annotation.origin,
                )
    elif decoration == Decoration.InputAttachmentIndex:
        for variable in variables:
            if variable_storage(variable) != StorageClass.UniformConstant:
                yield Diagnostic(
                    INPUT_ATTACHMENT_STORAGE,
                    "InputAttachmentIndex only decorates UniformConstant variables",
                    annotation.origin,
                )


def _interpolation(
    annotation: Instruction, variables: Iterable[Instruction], entry_points: EntryPoints
) -> Iterator[Diagnostic]:
    for variable in variables:
        storage = variable_storage(variable)
        models = entry_points.interface_models.get(variable.operands[1], set())
        if storage not in (StorageClass.Input, StorageClass.Output):
            yield Diagnostic(
                INTERPOLATION_STORAGE,
                "Flat, NoPerspective, Sample and Centroid are only for Input and Output variables",
                annotation.origin,
            )
        elif storage == StorageClass.Output and ExecutionModel.Fragment in models:
            yield Diagnostic(
                INTERPOLATION_FRAGMENT_OUTPUT,
                "Flat, NoPerspective, Sample and Centroid must not decorate fragment outputs",
                annotation.origin,
            )
        elif storage == StorageClass.Input and ExecutionModel.Vertex in models:
            yield Diagnostic(
                INTERPOLATION_VERTEX_INPUT,
                "Flat, NoPerspective, Sample and Centroid must not decorate vertex inputs",
                annotation.origin,
            )


def _rounding_mode(
    context: ValidationContext, annotation: Instruction, parameters: list[int]
) -> Iterator[Diagnostic]:
    if parameters and parameters[0] not in (FPRoundingMode.RTE, FPRoundingMode.RTZ):
        yield Diagnostic(
            ROUNDING_MODE,
            "only the RTE and RTZ rounding modes may be used for FPRoundingMode",
            annotation.origin,
        )
    defs = context.def_use.defs
    target = defs.get(annotation.operands[0])
    scalar = None if target is None else scalar_info(defs, target.type_id)
    ok = (
        target is not None
        and target.opcode == Op.FConvert
        and scalar is not None
        and (scalar.kind, scalar.width) == ("float", 16)
        and all(
            _rounded_store(defs, user, target) for user in context.def_use.uses(target.operands[1])
        )
    )
    if not ok:
        yield Diagnostic(
            ROUNDING_MODE_USE,
            "FPRoundingMode may only decorate an OpFConvert to 16-bit float whose result is "
            "only stored to StorageBuffer, Uniform, PushConstant or Output memory "
            "(SPV_KHR_16bit_storage)",
            annotation.origin,
        )


def _rounded_store(
    defs: Mapping[int, Instruction], user: Instruction, converted: Instruction
) -> bool:
    if user.opcode in (Op.Decorate, Op.DecorateId, Op.Name):
        return True
    if user.opcode != Op.Store or len(user.operands) < 2:
        return False
    if user.operands[1] != converted.operands[1]:
        return False
    pointer = defs.get(user.operands[0])
    parts = pointer_parts(defs, None if pointer is None else pointer.type_id)
    return parts is not None and parts[0] in _ROUNDED_STORE_CLASSES


def _flat_required(context: ValidationContext, entry_points: EntryPoints) -> Iterator[Diagnostic]:
    """Integer and double fragment inputs must be Flat, built-ins included (glslang decorates
    gl_SampleID and gl_PrimitiveID Flat, and spirv-val asks for it)."""
    defs, decorations = context.def_use.defs, context.decorations
    for variable in global_variables(context):
        variable_id = variable.operands[1]
        if variable_storage(variable) != StorageClass.Input:
            continue
        if ExecutionModel.Fragment not in entry_points.interface_models.get(variable_id, set()):
            continue
        if decorations.has(variable_id, Decoration.Flat):
            continue
        pointee = variable_type(defs, variable)
        if pointee is None:
            continue
        element = strip_arrays(defs, pointee)
        struct = defs.get(element)
        if struct is not None and struct.opcode == Op.TypeStruct:
            unflat = [
                member
                for member, member_type in enumerate(struct.operands[1:])
                if _needs_flat(defs, member_type)
                and not decorations.member_has(element, member, Decoration.Flat)
            ]
        else:
            unflat = [0] if _needs_flat(defs, element) else []
        if unflat:
            yield Diagnostic(
                FLAT_REQUIRED,
                "an integer or double fragment input must be decorated Flat",
                variable.origin,
            )


def _needs_flat(defs: Mapping[int, Instruction], type_id: int) -> bool:
    type_id = strip_arrays(defs, type_id)
    instruction = defs.get(type_id)
    if (
        instruction is not None
        and instruction.opcode == Op.TypeMatrix
        and len(instruction.operands) > 1
    ):
        type_id = instruction.operands[1]
    scalar = scalar_info(defs, type_id)
    return scalar is not None and (
        scalar.kind == "int" or (scalar.kind == "float" and scalar.width == 64)
    )
