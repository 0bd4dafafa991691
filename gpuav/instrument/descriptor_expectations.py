"""What one access forbids in the descriptor it uses (``image_facts``' bits), from the
variable's image type and the instruction: the view type, numeric type, sample count and
component width an ``OpTypeImage`` needs, and the sampling an unnormalized sampler may not do.
"""

from __future__ import annotations

from gpuav.instrument import image_facts
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import OPCODE_NAMES, ImageOperands, Op
from gpuav.spirv.instruction import Instruction

_DREF_OPERANDS = frozenset(
    {
        Op.ImageSampleDrefImplicitLod,
        Op.ImageSampleDrefExplicitLod,
        Op.ImageSampleProjDrefImplicitLod,
        Op.ImageSampleProjDrefExplicitLod,
        Op.ImageSparseSampleDrefImplicitLod,
        Op.ImageSparseSampleDrefExplicitLod,
        Op.ImageSparseSampleProjDrefImplicitLod,
        Op.ImageSparseSampleProjDrefExplicitLod,
        Op.ImageGather,
        Op.ImageDrefGather,
        Op.ImageSparseGather,
        Op.ImageSparseDrefGather,
    }
)
_GATHERS = frozenset(
    {Op.ImageGather, Op.ImageDrefGather, Op.ImageSparseGather, Op.ImageSparseDrefGather}
)
_BIAS_OR_OFFSET = (
    ImageOperands.Bias
    | ImageOperands.ConstOffset
    | ImageOperands.Offset
    | ImageOperands.ConstOffsets
    | ImageOperands.Offsets
)
_EXTENDED = ImageOperands.SignExtend | ImageOperands.ZeroExtend
# OpTypeImage operands: result, sampled type, Dim, Depth, Arrayed, MS
_SAMPLED_TYPE, _DIM, _ARRAYED, _MS = 1, 2, 4, 5


def _name(consumer: Instruction) -> str:
    return OPCODE_NAMES.get(consumer.opcode, "")


def _samples(consumer: Instruction) -> bool:
    name = _name(consumer)
    return name.startswith(("OpImageSample", "OpImageSparseSample"))


def _image_operands(consumer: Instruction) -> int:
    """The ImageOperands mask of an image instruction (0 when it has none)."""
    if consumer.opcode == Op.ImageWrite:
        at = 3
    elif consumer.opcode in _DREF_OPERANDS:
        at = 5
    elif _name(consumer).startswith(("OpImageSample", "OpImageSparseSample", "OpImageFetch")) or (
        consumer.opcode in (Op.ImageRead, Op.ImageSparseFetch, Op.ImageSparseRead)
    ):
        at = 4
    else:
        return 0
    return consumer.operands[at] if len(consumer.operands) > at else 0


def _numeric(types: Types, sampled_type: int, operands: int) -> int | None:
    opcode = types.opcode(sampled_type)
    if opcode == Op.TypeFloat:
        return image_facts.FLOAT
    if opcode != Op.TypeInt:
        return None  # OpTypeVoid and the like: nothing to compare
    if operands & _EXTENDED:
        return 0  # the instruction says how to read the integers: either kind fits
    return image_facts.SINT if types.is_signed(sampled_type) else image_facts.UINT


def _image_forbidden(types: Types, image_type: int, consumer: Instruction) -> int:
    operands = types.definition(image_type).operands
    sampled_type = operands[_SAMPLED_TYPE]
    numeric = _numeric(types, sampled_type, _image_operands(consumer))
    width = None if numeric is None else types.width(sampled_type)
    return image_facts.forbidden_by_image_type(
        operands[_DIM],
        operands[_ARRAYED] == 1,
        operands[_MS] == 1,
        numeric,
        width if width in (32, 64) else None,
    )


def _sampler_forbidden(consumer: Instruction) -> int:
    """What an unnormalized sampler may not do here (VUID-...-None-08609/08610/08611)."""
    forbidden = 0
    if _samples(consumer) or consumer.opcode in _GATHERS:
        forbidden |= image_facts.UNNORMALIZED_VIEW
    if not _samples(consumer):
        return forbidden
    name = _name(consumer)
    if any(part in name for part in ("ImplicitLod", "Dref", "Proj")):
        return forbidden | image_facts.UNNORMALIZED | image_facts.IMPLICIT_LOD_DREF_PROJ
    if _image_operands(consumer) & _BIAS_OR_OFFSET:
        return forbidden | image_facts.UNNORMALIZED | image_facts.BIAS_OR_OFFSET
    return forbidden


def forbidden_bits(types: Types, variable: int, consumer: Instruction) -> int:
    """The bits the descriptor of ``variable`` may not have when ``consumer`` uses it; 0 for
    buffers and anything not checked."""
    pointer = types.type_of(variable)
    if pointer is None or not types.is_pointer(pointer):
        return 0
    inner, _ = types.strip_arrays(types.pointee(pointer))
    opcode = types.opcode(inner)
    if opcode == Op.TypeSampler:
        return _sampler_forbidden(consumer)
    if opcode == Op.TypeSampledImage:
        image_type = types.definition(inner).operands[1]
        return _image_forbidden(types, image_type, consumer) | _sampler_forbidden(consumer)
    if opcode == Op.TypeImage:
        return _image_forbidden(types, inner, consumer)
    return 0
