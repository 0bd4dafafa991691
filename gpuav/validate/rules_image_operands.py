"""Image instructions: what each may consume (Vulkan environment for SPIR-V, standalone rules
on image instructions). The image and image-operands positions of every ``OpImage*``
instruction come from the grammar, so sparse and new variants are covered without a list.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache

from gpuav.spirv.grammar import INSTRUCTIONS, Dim, ImageOperands, Op
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.shader_facts import function_instructions, image_type_of, scalar_info

READ_RESULT = "VUID-StandaloneSpirv-Result-04780"
OFFSET_SAMPLED = "VUID-StandaloneSpirv-Offset-04865"
DREF_3D = "VUID-StandaloneSpirv-OpImage-04777"
GATHER_COMPONENT = "VUID-StandaloneSpirv-OpImageGather-04664"

_OFFSETS = (
    ImageOperands.Offset | ImageOperands.ConstOffset | ImageOperands.ConstOffsets
) | ImageOperands.Offsets
_CONSTANTS = frozenset(
    {Op.Constant, Op.ConstantNull, Op.SpecConstant, Op.SpecConstantOp, Op.ConstantComposite}
)
# OpTypeImage operands: result, sampled type, dim, depth, arrayed, ms, sampled, format.
_DIM, _SAMPLED = 2, 6


@cache
def _shapes() -> dict[int, tuple[int, int | None, bool]]:
    """opcode -> (image operand index, image-operands mask index or None, Dref in name)."""
    shapes: dict[int, tuple[int, int | None, bool]] = {}
    for opcode, info in INSTRUCTIONS.items():
        name, operands = info[0], info[2]
        if not name.startswith("OpImage") or name.startswith("OpImageQuery"):
            continue
        kinds = [kind for kind, _quantifier in operands]
        if "IdRef" not in kinds:
            continue
        mask = kinds.index("ImageOperands") if "ImageOperands" in kinds else None
        shapes[opcode] = (kinds.index("IdRef"), mask, "Dref" in name)
    return shapes


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    defs = context.def_use.defs
    shapes = _shapes()
    for instruction in function_instructions(context):
        shape = shapes.get(instruction.opcode)
        if shape is None:
            continue
        image_at, mask_at, dref = shape
        operands = instruction.operands
        image = image_type_of(defs, operands[image_at]) if image_at < len(operands) else None
        if instruction.opcode in (Op.ImageRead, Op.ImageSparseRead):
            yield from _read_result(defs, instruction)
        if instruction.opcode in (Op.ImageGather, Op.ImageSparseGather) and len(operands) > 4:
            component = defs.get(operands[4])
            if component is None or component.opcode not in _CONSTANTS:
                yield Diagnostic(
                    GATHER_COMPONENT,
                    f"{instruction.name}'s Component must be a constant",
                    instruction.origin,
                )
        if image is None:
            continue
        if dref and image.operands[_DIM] == Dim.Dim3D:
            yield Diagnostic(
                DREF_3D, f"{instruction.name} must not use a 3D image", instruction.origin
            )
        has_mask = mask_at is not None and mask_at < len(operands)
        if has_mask and operands[mask_at or 0] & _OFFSETS and image.operands[_SAMPLED] != 1:
            yield Diagnostic(
                OFFSET_SAMPLED,
                f"{instruction.name} with an Offset, ConstOffset or ConstOffsets operand needs "
                "an image whose type has Sampled 1",
                instruction.origin,
            )


def _read_result(defs: Mapping[int, Instruction], read: Instruction) -> Iterator[Diagnostic]:
    result_type = read.operands[0]
    if read.opcode == Op.ImageSparseRead:
        struct = defs.get(result_type)
        if struct is None or struct.opcode != Op.TypeStruct or len(struct.operands) < 3:
            return  # the core rules' business
        result_type = struct.operands[2]
    scalar = scalar_info(defs, result_type)
    if scalar is None or scalar.components != 4:
        yield Diagnostic(
            READ_RESULT, f"{read.name}'s result must be a four-component vector", read.origin
        )
