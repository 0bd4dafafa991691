"""What an image or sampler descriptor's state word says about the objects it names, and what
a shader's access forbids there: the contract between the layer, which writes the words, the
instrumentation, which tests them, and the report, which explains a mismatch.

An image, sampler or combined descriptor's word is ACCESSIBLE plus *fact bits*, one bit per
value of each property, so that a property the layer does not know sets no bit:

    VIEW_TYPE_BIT << t      the image view's VkImageViewType t (0..6)
    FLOAT / SINT / UINT     the numeric type of the view's format (its aspect's, for depth and
                            stencil); the spec's "Interpretation of Numeric Format" table:
                            UNORM, SNORM, USCALED, SSCALED, SRGB and float formats are float
    SINGLE_SAMPLED / MULTISAMPLED   the image's sample count: 1, or more
    WIDTH_32 / WIDTH_64     whether the format's components are 64 bits wide
    UNNORMALIZED            the sampler has unnormalizedCoordinates
    UNNORMALIZED_VIEW       ...and the combined view is not a one-level, one-layer 1D or 2D
                            view (VUID-...-None-08609, -unnormalizedCoordinates-09635)

An access passes a *forbidden* mask: the bits of every value its instruction's OpTypeImage or
sampling rules exclude. The descriptor fits when ``word & forbidden == 0``; one AND and one
compare next to the test of the word that is there anyway. A mismatch record carries the
word and the mask, and ``mismatches`` names what broke, for the message.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuav.instrument.descriptor_state import ACCESSIBLE

VIEW_TYPE_BIT = 1 << 1
VIEW_TYPE_COUNT = 7
VIEW_TYPE_BITS = ((1 << VIEW_TYPE_COUNT) - 1) * VIEW_TYPE_BIT
FLOAT = 1 << 8
SINT = 1 << 9
UINT = 1 << 10
SINGLE_SAMPLED = 1 << 11
MULTISAMPLED = 1 << 12
WIDTH_32 = 1 << 13
WIDTH_64 = 1 << 14
UNNORMALIZED = 1 << 15
UNNORMALIZED_VIEW = 1 << 16

# VkImageViewType
VIEW_TYPE_NAMES = (
    "VK_IMAGE_VIEW_TYPE_1D",
    "VK_IMAGE_VIEW_TYPE_2D",
    "VK_IMAGE_VIEW_TYPE_3D",
    "VK_IMAGE_VIEW_TYPE_CUBE",
    "VK_IMAGE_VIEW_TYPE_1D_ARRAY",
    "VK_IMAGE_VIEW_TYPE_2D_ARRAY",
    "VK_IMAGE_VIEW_TYPE_CUBE_ARRAY",
)
_NUMERIC_NAMES = {FLOAT: "float", SINT: "signed integer", UINT: "unsigned integer"}

# SPIR-V Dim -> view type (not arrayed, arrayed); dims without a view type are not checked.
_VIEW_TYPE_OF_DIM = {0: (0, 4), 1: (1, 5), 2: (2, None), 3: (3, 6)}


def view_word(view_type: int | None, numeric: int, samples: int | None, wide: bool | None) -> int:
    """The word of an image view descriptor: ``numeric`` is FLOAT, SINT, UINT or 0 (unknown);
    None for what the layer does not know."""
    word = ACCESSIBLE | numeric
    if view_type is not None and 0 <= view_type < VIEW_TYPE_COUNT:
        word |= VIEW_TYPE_BIT << view_type
    if samples is not None:
        word |= SINGLE_SAMPLED if samples <= 1 else MULTISAMPLED
    if wide is not None:
        word |= WIDTH_64 if wide else WIDTH_32
    return word


def forbidden_by_image_type(
    dim: int, arrayed: bool, multisampled: bool, numeric: int | None, width: int | None
) -> int:
    """The bits an ``OpTypeImage`` excludes (VUID-...-viewType-07752, -format-07753,
    RuntimeSpirv-samples-08725/08726, -SampledType-04470/04471). ``numeric`` is the Sampled
    Type's FLOAT, SINT or UINT (0: either integer, with a SignExtend/ZeroExtend operand;
    None: not checked); ``width`` its bits (None: not checked)."""
    forbidden = 0
    view_types = _VIEW_TYPE_OF_DIM.get(dim)
    if view_types is not None:
        wanted = view_types[1 if arrayed else 0]
        if wanted is not None:
            forbidden |= VIEW_TYPE_BITS & ~(VIEW_TYPE_BIT << wanted)
    if numeric == FLOAT:
        forbidden |= SINT | UINT
    elif numeric in (SINT, UINT):
        forbidden |= FLOAT | (SINT | UINT) & ~numeric
    elif numeric == 0:
        forbidden |= FLOAT
    forbidden |= SINGLE_SAMPLED if multisampled else MULTISAMPLED
    if width == 64:
        forbidden |= WIDTH_32
    elif width == 32:
        forbidden |= WIDTH_64
    return forbidden


@dataclass(frozen=True)
class Mismatch:
    """One property a descriptor broke: the VUID's tail (after ``VUID-<command>-``, or a
    whole id when it starts with ``VUID-``) and the sentence saying so."""

    vuid: str
    text: str


def _named_bits(word: int, names: dict[int, str]) -> str:
    return " or ".join(name for bit, name in names.items() if word & bit) or "unknown"


def _view_type(word: int) -> str:
    for view_type, name in enumerate(VIEW_TYPE_NAMES):
        if word & VIEW_TYPE_BIT << view_type:
            return name
    return "unknown"


def mismatches(word: int, forbidden: int) -> list[Mismatch]:
    """What the descriptor's ``word`` has that the access's ``forbidden`` mask excludes."""
    found = word & forbidden
    result = []
    if found & VIEW_TYPE_BITS:
        allowed = [
            name
            for view_type, name in enumerate(VIEW_TYPE_NAMES)
            if not forbidden & VIEW_TYPE_BIT << view_type
        ]
        result.append(
            Mismatch(
                "viewType-07752",
                f"The image view's type is {_view_type(word)}, but the shader's image type "
                f"(its Dim and Arrayed) needs {' or '.join(allowed)}.",
            )
        )
    if found & (FLOAT | SINT | UINT):
        wanted = _named_bits(~forbidden & (FLOAT | SINT | UINT), _NUMERIC_NAMES)
        result.append(
            Mismatch(
                "format-07753",
                f"The image view's format is {_named_bits(word, _NUMERIC_NAMES)}, but the "
                f"shader's Sampled Type is {wanted}.",
            )
        )
    if found & MULTISAMPLED:
        result.append(
            Mismatch(
                "VUID-RuntimeSpirv-samples-08725",
                "The image is multisampled, but the shader's image type has MS = 0.",
            )
        )
    if found & SINGLE_SAMPLED:
        result.append(
            Mismatch(
                "VUID-RuntimeSpirv-samples-08726",
                "The image has VK_SAMPLE_COUNT_1_BIT, but the shader's image type has MS = 1.",
            )
        )
    if found & WIDTH_64:
        result.append(
            Mismatch(
                "SampledType-04470",
                "The image view's format has 64-bit components, but the shader's Sampled Type "
                "is not 64 bits wide.",
            )
        )
    if found & WIDTH_32:
        result.append(
            Mismatch(
                "SampledType-04471",
                "The image view's format has components narrower than 64 bits, but the "
                "shader's Sampled Type is 64 bits wide.",
            )
        )
    if found & UNNORMALIZED_VIEW:
        result.append(
            Mismatch(
                "None-08609",
                f"The sampler has unnormalizedCoordinates, but the image view is "
                f"{_view_type(word)}, or has more than one mip level or array layer "
                f"(only one-level, one-layer 1D and 2D views may be sampled so).",
            )
        )
    if found & UNNORMALIZED:
        result.append(
            Mismatch(
                _sampler_vuid(forbidden),
                "The sampler has unnormalizedCoordinates, which this instruction may not use "
                + _sampler_reason(forbidden),
            )
        )
    return result


# Which sampling rule put UNNORMALIZED in a mask: the mask's high bits say (never fact bits).
IMPLICIT_LOD_DREF_PROJ = 1 << 30
BIAS_OR_OFFSET = 1 << 29


def _sampler_vuid(forbidden: int) -> str:
    return "None-08610" if forbidden & IMPLICIT_LOD_DREF_PROJ else "None-08611"


def _sampler_reason(forbidden: int) -> str:
    if forbidden & IMPLICIT_LOD_DREF_PROJ:
        return "(ImplicitLod, Dref and Proj sampling need normalized coordinates)."
    return "(a LOD bias or an offset needs normalized coordinates)."
