"""Atomic instructions: the storage classes they may touch, the types they may operate on, and
the features 64-bit and floating-point atomics need (Vulkan environment for SPIR-V).

The pointer operand decides the storage class (an image texel pointer is in Image); the type
it points to decides the width. Integer atomics are 32-bit, or 64-bit with Int64Atomics and the
per-storage feature; float atomics need the feature of VK_EXT_shader_atomic_float(2) that
matches their width, storage class and operation (load/store/exchange, add, min/max).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gpuav.spirv.grammar import INSTRUCTIONS, Capability, ImageFormat, Op
from gpuav.spirv.grammar import StorageClass as Class
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.shader_facts import enabled, enum_name

STORAGE_CLASS = "VUID-StandaloneSpirv-None-04686"
TEXEL_POINTER_FORMAT = "VUID-StandaloneSpirv-OpImageTexelPointer-04658"
BUFFER_INT64 = "VUID-RuntimeSpirv-None-06278"
SHARED_INT64 = "VUID-RuntimeSpirv-None-06279"
IMAGE_INT64 = "VUID-RuntimeSpirv-None-06288"
BUFFER_FLOAT = "VUID-RuntimeSpirv-None-06284"
SHARED_FLOAT = "VUID-RuntimeSpirv-None-06285"
IMAGE_FLOAT = "VUID-RuntimeSpirv-None-06286"
# Seed 004 (1.1): "Atomic instructions must declare a scalar 32-bit integer type, or a scalar
# 64-bit integer type if the Int64Atomics capability is enabled"; float atomics came later
# with their own capabilities. The current spec has no VUID for it.
VALUE_TYPE = "GPUAV-StandaloneSpirv-AtomicType"

ATOMICS = frozenset(
    opcode
    for opcode, info in INSTRUCTIONS.items()
    if info[1] == "Atomic" and opcode not in (Op.AtomicFlagTestAndSet, Op.AtomicFlagClear)
)
_ALLOWED = frozenset(
    {
        Class.Uniform,
        Class.Workgroup,
        Class.Image,
        Class.StorageBuffer,
        Class.PhysicalStorageBuffer,
        Class.TaskPayloadWorkgroupEXT,
    }
)
_BUFFERS = (Class.StorageBuffer, Class.Uniform, Class.PhysicalStorageBuffer)
_FLOAT_OPS = {
    Op.AtomicFAddEXT: "AtomicAdd",
    Op.AtomicFMinEXT: "AtomicMinMax",
    Op.AtomicFMaxEXT: "AtomicMinMax",
    Op.AtomicLoad: "Atomics",
    Op.AtomicStore: "Atomics",
    Op.AtomicExchange: "Atomics",
}
_TEXEL_FORMATS = frozenset(
    {ImageFormat.R64i, ImageFormat.R64ui, ImageFormat.R32f, ImageFormat.R32i, ImageFormat.R32ui}
)


def check(context: ValidationContext) -> Iterable[Diagnostic]:
    capabilities = {c.operands[0] for c in context.module.capabilities if c.operands}
    for function in context.module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                if instruction.opcode in ATOMICS:
                    yield from _atomic(context, instruction, capabilities)


def _atomic(
    context: ValidationContext, instruction: Instruction, capabilities: set[int]
) -> Iterator[Diagnostic]:
    defs = context.def_use.defs
    at = 0 if instruction.opcode == Op.AtomicStore else 2
    if len(instruction.operands) <= at:
        return
    pointer_value = defs.get(instruction.operands[at])
    pointer_type = defs.get(pointer_value.type_id or 0) if pointer_value else None
    if pointer_type is None or pointer_type.opcode != Op.TypePointer:
        return
    storage, pointee = pointer_type.operands[1], defs.get(pointer_type.operands[2])
    name = instruction.name
    if storage not in _ALLOWED:
        yield Diagnostic(
            STORAGE_CLASS,
            f"{name} on a pointer in {enum_name(Class, storage)}; atomics may only use Uniform, "
            "Workgroup, Image, StorageBuffer or PhysicalStorageBuffer",
            instruction.origin,
        )
    if pointer_value is not None and pointer_value.opcode == Op.ImageTexelPointer:
        yield from _texel_pointer_format(context, instruction, pointer_value)
    if pointee is None or len(pointee.operands) < 2:
        return
    if pointee.opcode == Op.TypeInt:
        yield from _integer(context, instruction, storage, pointee.operands[1], capabilities)
    elif pointee.opcode == Op.TypeFloat:
        yield from _float(context, instruction, storage, pointee.operands[1])
    elif not (pointee.opcode == Op.TypeVector and Capability.AtomicFloat16VectorNV in capabilities):
        yield Diagnostic(
            VALUE_TYPE,
            f"{name} on a {pointee.name.removeprefix('OpType').lower()}; atomics operate on "
            "scalar integers (or floats)",
            instruction.origin,
        )


def _integer(
    context: ValidationContext,
    instruction: Instruction,
    storage: int,
    width: int,
    capabilities: set[int],
) -> Iterator[Diagnostic]:
    name = instruction.name
    if instruction.opcode in (Op.AtomicFAddEXT, Op.AtomicFMinEXT, Op.AtomicFMaxEXT):
        yield Diagnostic(VALUE_TYPE, f"{name} on an integer", instruction.origin)
        return
    if width == 32:
        return
    if width != 64 or Capability.Int64Atomics not in capabilities:
        yield Diagnostic(
            VALUE_TYPE,
            f"{name} on a {width}-bit integer; atomics are 32-bit, or 64-bit with the "
            "Int64Atomics capability",
            instruction.origin,
        )
        return
    if storage in _BUFFERS:
        feature, rule = "shaderBufferInt64Atomics", BUFFER_INT64
    elif storage == Class.Workgroup:
        feature, rule = "shaderSharedInt64Atomics", SHARED_INT64
    elif storage == Class.Image:
        feature, rule = "shaderImageInt64Atomics", IMAGE_INT64
    else:
        return
    if not enabled(context, feature):
        yield Diagnostic(
            rule,
            f"64-bit {name} in {enum_name(Class, storage)} needs {feature}",
            instruction.origin,
        )


def _float(
    context: ValidationContext, instruction: Instruction, storage: int, width: int
) -> Iterator[Diagnostic]:
    name = instruction.name
    operation = _FLOAT_OPS.get(instruction.opcode)
    if operation is None:
        yield Diagnostic(
            VALUE_TYPE,
            f"{name} on a float; only loads, stores, exchanges, FAdd, FMin and FMax are",
            instruction.origin,
        )
        return
    if storage in _BUFFERS:
        prefix, rule = "shaderBuffer", BUFFER_FLOAT
    elif storage == Class.Workgroup:
        prefix, rule = "shaderShared", SHARED_FLOAT
    elif storage == Class.Image:
        prefix, rule = "shaderImage", IMAGE_FLOAT
    else:
        return
    feature = f"{prefix}Float{width}{operation}"
    if not enabled(context, feature):
        yield Diagnostic(
            rule,
            f"{width}-bit float {name} in {enum_name(Class, storage)} needs {feature}",
            instruction.origin,
        )


def _texel_pointer_format(
    context: ValidationContext, instruction: Instruction, texel_pointer: Instruction
) -> Iterator[Diagnostic]:
    defs = context.def_use.defs
    image_pointer = defs.get(texel_pointer.operands[2]) if len(texel_pointer.operands) > 2 else None
    pointer_type = defs.get(image_pointer.type_id or 0) if image_pointer else None
    image = (
        defs.get(pointer_type.operands[2])
        if pointer_type and len(pointer_type.operands) > 2
        else None
    )
    if image is None or image.opcode != Op.TypeImage or len(image.operands) < 8:
        return
    if image.operands[7] not in _TEXEL_FORMATS:
        yield Diagnostic(
            TEXEL_POINTER_FORMAT,
            f"{instruction.name} through an image of format "
            f"{enum_name(ImageFormat, image.operands[7])}; atomics need R32i, R32ui, R32f, "
            "R64i or R64ui",
            instruction.origin,
        )
