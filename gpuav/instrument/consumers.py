"""Which instructions consume a descriptor, for the find phase: image instructions (seed
000's list, and vendor ones by name), memory accesses with the operands that are pointers,
and the result types a guarded function call may have."""

from __future__ import annotations

from gpuav.spirv.grammar import Op

# Seed 000's 32 image instructions.
SEED_IMAGE_INSTRUCTIONS = frozenset(
    {
        Op.ImageSampleImplicitLod,
        Op.ImageSampleExplicitLod,
        Op.ImageSampleDrefImplicitLod,
        Op.ImageSampleDrefExplicitLod,
        Op.ImageSampleProjImplicitLod,
        Op.ImageSampleProjExplicitLod,
        Op.ImageSampleProjDrefImplicitLod,
        Op.ImageSampleProjDrefExplicitLod,
        Op.ImageGather,
        Op.ImageDrefGather,
        Op.ImageQueryLod,
        Op.ImageSparseSampleImplicitLod,
        Op.ImageSparseSampleExplicitLod,
        Op.ImageSparseSampleDrefImplicitLod,
        Op.ImageSparseSampleDrefExplicitLod,
        Op.ImageSparseSampleProjImplicitLod,
        Op.ImageSparseSampleProjExplicitLod,
        Op.ImageSparseSampleProjDrefImplicitLod,
        Op.ImageSparseSampleProjDrefExplicitLod,
        Op.ImageSparseGather,
        Op.ImageSparseDrefGather,
        Op.ImageFetch,
        Op.ImageRead,
        Op.ImageQueryFormat,
        Op.ImageQueryOrder,
        Op.ImageQuerySizeLod,
        Op.ImageQuerySize,
        Op.ImageQueryLevels,
        Op.ImageQuerySamples,
        Op.ImageSparseFetch,
        Op.ImageSparseRead,
        Op.ImageWrite,
    }
)
# Vendor image instructions (OpImageSampleFootprintNV, OpFragmentFetchAMD, ...) read a
# descriptor just the same; they are recognised by name so that new ones are covered too.
IMAGE_NAME_PREFIXES = ("OpImage", "OpFragment")

# Instructions that take an acceleration structure (a ray trace, a ray query's start, a hit
# object's trace or recorded hit): skipped as a whole when the descriptor may not be used.
STRUCTURE_CONSUMERS = frozenset(
    {
        Op.TraceRayKHR,
        Op.TraceNV,
        Op.TraceRayMotionNV,
        Op.RayQueryInitializeKHR,
        Op.HitObjectTraceRayNV,
        Op.HitObjectTraceRayMotionNV,
        Op.HitObjectRecordHitNV,
        Op.HitObjectRecordHitMotionNV,
        Op.HitObjectRecordHitWithIndexNV,
        Op.HitObjectRecordHitWithIndexMotionNV,
        Op.HitObjectTraceRayEXT,
        Op.HitObjectTraceRayMotionEXT,
    }
)

# Result types a guarded call may have: void, or a type with an OpConstantNull.
NULLABLE_RESULTS = frozenset(
    {
        Op.TypeVoid,
        Op.TypeBool,
        Op.TypeInt,
        Op.TypeFloat,
        Op.TypeVector,
        Op.TypeMatrix,
        Op.TypeArray,
        Op.TypeStruct,
    }
)
# Memory instructions and the operand positions of the pointers they access.
POINTER_OPERANDS: dict[int, tuple[int, ...]] = {
    Op.Load: (2,),
    Op.Store: (0,),
    Op.CopyMemory: (0, 1),
    Op.CopyMemorySized: (0, 1),
    Op.ArrayLength: (2,),
    Op.AtomicStore: (0,),
    Op.AtomicFlagClear: (0,),
}
for _name, _opcode in vars(Op).items():
    if _name.startswith("Atomic") and _opcode not in POINTER_OPERANDS:
        POINTER_OPERANDS[_opcode] = (2,)
