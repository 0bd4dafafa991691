"""Images and samplers (Vulkan environment for SPIR-V, "Images and Samplers" of seed 004).

Type rules look at every OpTypeImage/OpTypeSampledImage; usage rules look at the image
instructions in function bodies. The SPIR-V image format <-> sampled type <-> Vulkan format
table is data (``image_formats.json``), also used to name the Vulkan format in messages.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any

from gpuav.spirv.grammar import Capability, Decoration, Dim, ExecutionModel, ImageFormat, Op
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.shader_facts import (
    EntryPoints,
    function_instructions,
    global_variables,
    image_type_of,
    operand,
    pointer_parts,
    scalar_info,
    strip_arrays,
    variable_type,
)

SAMPLED_TYPE = "VUID-StandaloneSpirv-OpTypeImage-04656"
SAMPLED_OPERAND = "VUID-StandaloneSpirv-OpTypeImage-04657"
SAMPLED_IMAGE_SAMPLED = "VUID-StandaloneSpirv-OpTypeSampledImage-06671"
FORMAT_TYPE = "VUID-StandaloneSpirv-Image-04965"
QUERY_SAMPLED = "VUID-StandaloneSpirv-OpImageQuerySizeLod-04659"
RECT = "VUID-StandaloneSpirv-OpTypeImage-09638"
SUBPASS_TYPE = "VUID-StandaloneSpirv-OpTypeImage-06214"
SUBPASS_COORDINATE = "VUID-StandaloneSpirv-SubpassData-04660"
OPAQUE_STORE = "VUID-StandaloneSpirv-OpTypeImage-06924"
WRITE_WITHOUT_FORMAT = "VUID-RuntimeSpirv-apiVersion-07954"
READ_WITHOUT_FORMAT = "VUID-RuntimeSpirv-apiVersion-07955"
SUBPASS_STAGE = "GPUAV-SubpassData-Fragment"
QUERY_KIND = "GPUAV-ImageQuery-ImageKind"
SAMPLED_IMAGE_BUFFER = "GPUAV-OpTypeSampledImage-Buffer"

_OPAQUE_TYPES = frozenset({Op.TypeImage, Op.TypeSampler, Op.TypeSampledImage})
# OpTypeImage operands: result, sampled type, dim, depth, arrayed, ms, sampled, format.
_DIM, _ARRAYED, _MS, _SAMPLED, _FORMAT = 2, 4, 5, 6, 7
_SPARSE_OR_READ = (Op.ImageRead, Op.ImageSparseRead)
_QUERY_SAMPLED_ONLY = (Op.ImageQuerySizeLod, Op.ImageQueryLevels, Op.ImageQueryLod)


@cache
def image_formats() -> dict[str, dict[str, Any]]:
    """SPIR-V Image Format name -> {vulkan_format, numeric, width} (the appendix's table)."""
    text = resources.files("gpuav.validate").joinpath("image_formats.json").read_text()
    formats: dict[str, dict[str, Any]] = json.loads(text)["formats"]
    return formats


@cache
def _format_names() -> dict[int, str]:
    return {getattr(ImageFormat, name): name for name in image_formats()}


def vulkan_format(spirv_format: int) -> str | None:
    """The Vulkan format compatible with a SPIR-V Image Format value (None for Unknown)."""
    name = _format_names().get(spirv_format)
    return None if name is None else str(image_formats()[name]["vulkan_format"])


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    defs = context.def_use.defs
    for instruction in context.module.globals:
        if instruction.opcode == Op.TypeImage and len(instruction.operands) > _FORMAT:
            yield from _image_type(context, instruction)
        elif instruction.opcode == Op.TypeSampledImage:
            yield from _sampled_image_type(context, instruction)
    yield from _formatless_storage(context)
    yield from _subpass_stages(context)
    for instruction in function_instructions(context):
        opcode = instruction.opcode
        if opcode in _QUERY_SAMPLED_ONLY or opcode in (Op.ImageQuerySize, Op.ImageQuerySamples):
            yield from _query(defs, instruction)
        elif opcode in _SPARSE_OR_READ:
            yield from _subpass_read(defs, instruction)
        elif opcode in (Op.Store, Op.CopyMemory, Op.CopyMemorySized):
            yield from _opaque_store(defs, instruction)


def _image_type(context: ValidationContext, image: Instruction) -> Iterator[Diagnostic]:
    defs = context.def_use.defs
    operands = image.operands
    sampled_type = scalar_info(defs, operands[1])
    int64_images = any(
        capability.operands[:1] == [Capability.Int64ImageEXT]
        for capability in context.module.capabilities
    )
    allowed = sampled_type is not None and sampled_type.components == 1
    if allowed and sampled_type is not None:
        allowed = (sampled_type.kind in ("int", "float") and sampled_type.width == 32) or (
            sampled_type.kind == "int" and sampled_type.width == 64 and int64_images
        )
    if not allowed:
        yield Diagnostic(
            SAMPLED_TYPE,
            "OpTypeImage's Sampled Type must be a scalar 32-bit float or integer "
            "(or a 64-bit integer with the Int64ImageEXT capability)",
            image.origin,
        )
    sampled, dim = operands[_SAMPLED], operands[_DIM]
    if sampled not in (1, 2):
        yield Diagnostic(
            SAMPLED_OPERAND,
            f"OpTypeImage's Sampled operand is {sampled}: Vulkan needs 1 (sampled) or 2 (storage)",
            image.origin,
        )
    if dim == Dim.Rect:
        yield Diagnostic(RECT, "OpTypeImage must not have Dim Rect in Vulkan", image.origin)
    if dim == Dim.SubpassData and (operands[_ARRAYED] != 0 or sampled != 2):
        yield Diagnostic(
            SUBPASS_TYPE,
            "an OpTypeImage of Dim SubpassData must be non-arrayed with Sampled 2",
            image.origin,
        )
    yield from _format_matches(image, sampled_type)


def _format_matches(image: Instruction, sampled_type: Any) -> Iterator[Diagnostic]:
    format_name = _format_names().get(image.operands[_FORMAT])
    if format_name is None or sampled_type is None:
        return  # Unknown format, or a Sampled Type already reported
    entry = image_formats()[format_name]
    wants_float = entry["numeric"] == "float"
    # Signedness is not part of the match: an integer image is accessed with the signedness
    # of the instruction (Vulkan "Signedness of SPIR-V Image Accesses").
    if (sampled_type.kind == "float") != wants_float or sampled_type.width != entry["width"]:
        kind = "float" if wants_float else "integer"
        yield Diagnostic(
            FORMAT_TYPE,
            f"Image Format {format_name} ({entry['vulkan_format']}) needs a {entry['width']}-bit "
            f"{kind} Sampled Type, not a {sampled_type.width}-bit {sampled_type.kind}",
            image.origin,
        )


def _sampled_image_type(context: ValidationContext, sampled: Instruction) -> Iterator[Diagnostic]:
    image_id = operand(sampled, 1)
    image = context.def_use.defs.get(image_id) if image_id is not None else None
    if image is None or image.opcode != Op.TypeImage or len(image.operands) <= _FORMAT:
        return
    if image.operands[_SAMPLED] != 1:
        yield Diagnostic(
            SAMPLED_IMAGE_SAMPLED,
            "OpTypeSampledImage's image type must have Sampled 1 "
            f"(it has {image.operands[_SAMPLED]})",
            sampled.origin,
        )
    if image.operands[_DIM] == Dim.Buffer and context.module.version_tuple >= (1, 6):
        yield Diagnostic(
            SAMPLED_IMAGE_BUFFER,
            "since SPIR-V 1.6 OpTypeSampledImage's image type must not have Dim Buffer",
            sampled.origin,
        )


def _query(defs: Mapping[int, Instruction], query: Instruction) -> Iterator[Diagnostic]:
    image = image_type_of(defs, operand(query, 2))
    if image is None:
        return
    dim, ms, sampled = image.operands[_DIM], image.operands[_MS], image.operands[_SAMPLED]
    if query.opcode in _QUERY_SAMPLED_ONLY and sampled != 1:
        yield Diagnostic(
            QUERY_SAMPLED,
            f"{query.name} needs an image whose type has Sampled 1 (it has {sampled})",
            query.origin,
        )
    # The SPIR-V specification's own restrictions on what each query accepts.
    if query.opcode in (Op.ImageQuerySizeLod, Op.ImageQueryLevels):
        if dim not in (Dim.Dim1D, Dim.Dim2D, Dim.Dim3D, Dim.Cube) or ms != 0:
            yield Diagnostic(
                QUERY_KIND,
                f"{query.name} needs a single-sampled 1D, 2D, 3D or Cube image",
                query.origin,
            )
    elif query.opcode == Op.ImageQuerySize:
        if not (dim in (Dim.Buffer, Dim.Rect) or ms == 1 or sampled in (0, 2)) or (
            dim == Dim.SubpassData
        ):
            yield Diagnostic(
                QUERY_KIND,
                "OpImageQuerySize needs a buffer, multisampled or storage image "
                "(use OpImageQuerySizeLod for sampled images)",
                query.origin,
            )
    elif query.opcode == Op.ImageQuerySamples and (dim != Dim.Dim2D or ms != 1):
        yield Diagnostic(
            QUERY_KIND, "OpImageQuerySamples needs a multisampled 2D image", query.origin
        )


def _subpass_read(defs: Mapping[int, Instruction], read: Instruction) -> Iterator[Diagnostic]:
    image = image_type_of(defs, operand(read, 2))
    if image is None or image.operands[_DIM] != Dim.SubpassData:
        return
    if not _zero_uv(defs, operand(read, 3)):
        yield Diagnostic(
            SUBPASS_COORDINATE,
            "the (u,v) coordinates of a SubpassData read must be a constant (0,0) vector",
            read.origin,
        )


def _zero_uv(defs: Mapping[int, Instruction], coordinate: int | None) -> bool:
    """Whether the first two components are constant zero (a layer component may vary)."""
    if coordinate is None or (vector := defs.get(coordinate)) is None:
        return False
    if vector.opcode == Op.ConstantNull:
        return True
    if vector.opcode not in (Op.ConstantComposite, Op.CompositeConstruct):
        return False
    components = vector.operands[2:4]
    return len(components) == 2 and all(_is_zero(defs, component) for component in components)


def _is_zero(defs: Mapping[int, Instruction], id_: int) -> bool:
    instruction = defs.get(id_)
    if instruction is None:
        return False
    if instruction.opcode == Op.ConstantNull:
        return True
    return instruction.opcode == Op.Constant and all(word == 0 for word in instruction.operands[2:])


def _opaque_store(defs: Mapping[int, Instruction], store: Instruction) -> Iterator[Diagnostic]:
    target = operand(store, 0)
    pointer = defs.get(target) if target is not None else None
    parts = pointer_parts(defs, pointer.type_id) if pointer is not None else None
    if parts is None:
        return
    if (element := defs.get(strip_arrays(defs, parts[1]))) is not None and (
        element.opcode in _OPAQUE_TYPES
    ):
        yield Diagnostic(
            OPAQUE_STORE,
            "images, samplers, sampled images and arrays of them must not be stored to",
            store.origin,
        )


def _formatless_storage(context: ValidationContext) -> Iterator[Diagnostic]:
    """Storage images of Unknown format need the without-format features or NonReadable /
    NonWritable, unless the device reports format features per format (Vulkan 1.3 or
    VK_KHR_format_feature_flags2)."""
    if context.vulkan_version >= (1, 3) or "VK_KHR_format_feature_flags2" in context.extensions:
        return
    defs = context.def_use.defs
    decorations = context.decorations
    for variable in global_variables(context):
        pointee = variable_type(defs, variable)
        image = defs.get(strip_arrays(defs, pointee)) if pointee is not None else None
        if image is None or image.opcode != Op.TypeImage or len(image.operands) <= _FORMAT:
            continue
        if image.operands[_SAMPLED] != 2 or image.operands[_FORMAT] != ImageFormat.Unknown:
            continue
        if image.operands[_DIM] == Dim.SubpassData:
            continue
        variable_id = variable.operands[1]
        if "shaderStorageImageReadWithoutFormat" not in context.features and not (
            decorations.has(variable_id, Decoration.NonReadable)
        ):
            yield Diagnostic(
                READ_WITHOUT_FORMAT,
                "a storage image of Unknown format must be decorated NonReadable unless "
                "shaderStorageImageReadWithoutFormat is enabled",
                variable.origin,
            )
        if "shaderStorageImageWriteWithoutFormat" not in context.features and not (
            decorations.has(variable_id, Decoration.NonWritable)
        ):
            yield Diagnostic(
                WRITE_WITHOUT_FORMAT,
                "a storage image of Unknown format must be decorated NonWritable unless "
                "shaderStorageImageWriteWithoutFormat is enabled",
                variable.origin,
            )


def _subpass_stages(context: ValidationContext) -> Iterator[Diagnostic]:
    """Input attachments (Dim SubpassData) exist only in fragment shaders."""
    defs = context.def_use.defs
    entry_points: EntryPoints | None = None
    for variable in global_variables(context):
        pointee = variable_type(defs, variable)
        image = defs.get(strip_arrays(defs, pointee)) if pointee is not None else None
        if image is None or image.opcode != Op.TypeImage or len(image.operands) <= _FORMAT:
            continue
        if image.operands[_DIM] != Dim.SubpassData:
            continue
        entry_points = entry_points or EntryPoints(context)
        if entry_points.models_using(variable.operands[1]) - {ExecutionModel.Fragment}:
            yield Diagnostic(
                SUBPASS_STAGE,
                "an input attachment (Dim SubpassData) is used outside a fragment shader",
                variable.origin,
            )
