"""The debug output buffer and error record layout of seed 000, defined once.

The instrumentation pass emits code that writes these words and the report decoder reads them,
both from the constants here, so the two cannot drift apart.

Buffer: ``struct { uint DataWrittenLength; uint Data[]; }``. A record in ``Data`` is
``[size, shader id, instruction index, stage, stage word 0, stage word 1, error code,
validation words...]``; the bounds error and the uninitialized-descriptor error (unwritten,
or its resource destroyed) carry (descriptor index, array length, set << 24 | binding), so
that a message names the descriptor whose index failed where an instruction uses two (an
image and a separate sampler); a descriptor that does not fit its access (view type, format,
samples, sampler) carries the same words, its state word and the bits the access forbids;
the buffer-range error carries (descriptor index, set and binding, byte offset, access size,
bound range, flags): the byte
span ``[offset, offset + size)`` of a load, store or atomic that does not lie inside the
``range`` bytes bound to the descriptor.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

# Word offsets inside the output buffer.
WRITTEN_LENGTH_WORD = 0
DATA_FIRST_WORD = 1

# Word offsets inside one record.
RECORD_SIZE = 0
SHADER_ID = 1
INSTRUCTION_INDEX = 2
STAGE = 3
STAGE_WORD_0 = 4
STAGE_WORD_1 = 5
ERROR_CODE = 6
DESCRIPTOR_INDEX = 7
ARRAY_LENGTH = 8

COMMON_WORDS = ERROR_CODE + 1
# The instruction index of a record about an instruction the pass made (it has no origin).
NO_INSTRUCTION_INDEX = 0xFFFF_FFFF


class Stage(IntEnum):
    """Stage codes: the SPIR-V execution model number of the entry point's stage (seed 000's
    graphics and compute codes are those numbers too)."""

    VERTEX = 0
    TESSELLATION_CONTROL = 1
    TESSELLATION_EVALUATION = 2
    GEOMETRY = 3
    FRAGMENT = 4
    COMPUTE = 5
    RAY_GENERATION = 5313
    INTERSECTION = 5314
    ANY_HIT = 5315
    CLOSEST_HIT = 5316
    MISS = 5317
    CALLABLE = 5318
    TASK = 5364
    MESH = 5365


RAY_TRACING_STAGES = frozenset(
    {
        Stage.RAY_GENERATION,
        Stage.INTERSECTION,
        Stage.ANY_HIT,
        Stage.CLOSEST_HIT,
        Stage.MISS,
        Stage.CALLABLE,
    }
)


# What the two stage-specific words hold, per stage (seed 000's table; where the seed says
# "unused" we put something useful there, and the decoder reads it back from here):
#   Vertex                  VertexIndex, InstanceIndex
#   TessellationControl     InvocationId, PrimitiveId
#   TessellationEvaluation  PrimitiveId, 0
#   Geometry                PrimitiveId, InvocationId
#   Fragment                FragCoord.x, FragCoord.y (float bits)
#   Compute                 GlobalInvocationId.x, GlobalInvocationId.y | GlobalInvocationId.z << 16
#   Ray tracing stages      LaunchIdKHR.x, LaunchIdKHR.y | LaunchIdKHR.z << 16
#   Task, Mesh              WorkgroupId.x | LocalInvocationIndex << 22,
#                           WorkgroupId.y | WorkgroupId.z << 16
# (a task or mesh dispatch has at most maxMeshWorkGroupTotalCount groups, 2^22 on every
# implementation we know, so x fits its 22 bits; a workgroup has at most 1024 invocations.)
COMPUTE_YZ_SHIFT = 16
COMPUTE_YZ_MASK = 0xFFFF
WORKGROUP_X_MASK = 0x3F_FFFF
LOCAL_INDEX_SHIFT = 22
LOCAL_INDEX_MASK = 0x3FF


def pack_compute_yz(y: int, z: int) -> int:
    """Stage word 1 of a compute record: y and z, 16 bits each (enough for any real dispatch)."""
    return (y & COMPUTE_YZ_MASK) | (z & COMPUTE_YZ_MASK) << COMPUTE_YZ_SHIFT


def unpack_compute_yz(word: int) -> tuple[int, int]:
    return word & COMPUTE_YZ_MASK, word >> COMPUTE_YZ_SHIFT & COMPUTE_YZ_MASK


def pack_workgroup_x(x: int, local_index: int) -> int:
    """Stage word 0 of a task or mesh record: the workgroup's x and the local invocation."""
    return (x & WORKGROUP_X_MASK) | (local_index & LOCAL_INDEX_MASK) << LOCAL_INDEX_SHIFT


def unpack_workgroup_x(word: int) -> tuple[int, int]:
    """(WorkgroupId.x, LocalInvocationIndex) of a task or mesh record's stage word 0."""
    return word & WORKGROUP_X_MASK, word >> LOCAL_INDEX_SHIFT & LOCAL_INDEX_MASK


class ErrorCode(IntEnum):
    INDEX_OUT_OF_BOUNDS = 0
    DESCRIPTOR_UNINITIALIZED = 1
    BUFFER_OUT_OF_BOUNDS = 2
    TEXEL_OUT_OF_BOUNDS = 3
    LOCAL_INDEX_OUT_OF_BOUNDS = 4
    ADDRESS_OUT_OF_BOUNDS = 5
    ADDRESS_MISALIGNED = 6
    DESCRIPTOR_MISMATCH = 7
    # Action parameters in GPU memory, checked by gpuav's validation dispatch
    # (gpuav.layer.action_checks); far from the shader checks' codes, which grow from 0.
    GROUP_COUNT = 0x20  # draw, axis (3: the total), group count, limit
    FIRST_INSTANCE = 0x21  # draw, firstInstance
    DRAW_COUNT_LIMIT = 0x22  # 0, count, maxDrawIndirectCount
    DRAW_COUNT_PAST_BUFFER = 0x23  # 0, count, maxDrawCount, commands the buffer holds
    INDEX_RANGE = 0x24  # draw, firstIndex, indexCount, indices bound
    VERTEX_RANGE = 0x25  # draw, first, count, vertices (instances) bound, 1 for instances
    VERTEX_INDEX_RANGE = 0x26  # draw, index position, index, vertexOffset, vertices, how many
    # Not an error: a debugPrintfEXT line (gpuav.instrument.printf), of variable length. Far
    # from the error codes, which grow from 0.
    DEBUG_PRINTF = 0x100


# Records of gpuav's validation dispatch, not of a shader of the app.
ACTION_CHECK_ERRORS = frozenset(
    {
        ErrorCode.GROUP_COUNT,
        ErrorCode.FIRST_INSTANCE,
        ErrorCode.DRAW_COUNT_LIMIT,
        ErrorCode.DRAW_COUNT_PAST_BUFFER,
        ErrorCode.INDEX_RANGE,
        ErrorCode.VERTEX_RANGE,
        ErrorCode.VERTEX_INDEX_RANGE,
    }
)

# Words that follow the error code, per error.
VALIDATION_WORDS: dict[ErrorCode, int] = {
    ErrorCode.INDEX_OUT_OF_BOUNDS: 3,  # descriptor index, array length, set and binding
    ErrorCode.DESCRIPTOR_UNINITIALIZED: 3,  # the same words
    # the same words, then the descriptor's state word and the bits the access forbids
    # there (gpuav.instrument.image_facts)
    ErrorCode.DESCRIPTOR_MISMATCH: 5,
    ErrorCode.BUFFER_OUT_OF_BOUNDS: 6,
    ErrorCode.TEXEL_OUT_OF_BOUNDS: 4,  # descriptor index, set and binding, texel, texel count
    ErrorCode.LOCAL_INDEX_OUT_OF_BOUNDS: 3,  # where, index, length (LOCAL_* below)
    ErrorCode.ADDRESS_OUT_OF_BOUNDS: 5,  # operand, address low and high, size, alignment
    ErrorCode.ADDRESS_MISALIGNED: 5,  # the same words
    **dict.fromkeys(ACTION_CHECK_ERRORS, 6),  # see the codes' comments
    ErrorCode.DEBUG_PRINTF: 1,  # at least: the format string's OpString id; arguments follow
}

# The descriptor errors' set and binding (set << SET_SHIFT | binding); NO_SET_BINDING where the
# variable has no decorations.
DESCRIPTOR_SET_BINDING = ARRAY_LENGTH + 1
NO_SET_BINDING = 0xFFFF_FFFF
# Errors whose words are (descriptor index, array length, set and binding...).
DESCRIPTOR_ERRORS = frozenset(
    {
        ErrorCode.INDEX_OUT_OF_BOUNDS,
        ErrorCode.DESCRIPTOR_UNINITIALIZED,
        ErrorCode.DESCRIPTOR_MISMATCH,
    }
)
# A mismatch record's state word and forbidden bits.
MISMATCH_WORD = DESCRIPTOR_SET_BINDING + 1
MISMATCH_FORBIDDEN = DESCRIPTOR_SET_BINDING + 2

# A printf record: the format string's id (of the original module) where the descriptor index
# of an error is, then each argument's words (gpuav.instrument.printf_arguments).
PRINTF_FORMAT_STRING = DESCRIPTOR_INDEX
MAX_PRINTF_RECORD_WORDS = 256
# The last word of Data counts the printf lines that did not fit; no record is written there.
RESERVED_TAIL_WORDS = 1

# The buffer-range error's words after the descriptor index.
RANGE_SET_BINDING = DESCRIPTOR_INDEX + 1  # set << 24 | STORAGE_BIT (storage buffer) | binding
RANGE_OFFSET = DESCRIPTOR_INDEX + 2  # the span's first byte, 32-bit wrapped
RANGE_SIZE = DESCRIPTOR_INDEX + 3
RANGE_BOUND = DESCRIPTOR_INDEX + 4  # bytes bound to the descriptor
RANGE_FLAGS = DESCRIPTOR_INDEX + 5
SET_SHIFT = 24
STORAGE_BIT = 1 << 23
BINDING_MASK = STORAGE_BIT - 1


def pack_set_binding(descriptor_set: int, binding: int) -> int:
    """The DESCRIPTOR_SET_BINDING word of a descriptor error."""
    return (descriptor_set << SET_SHIFT | binding) & 0xFFFF_FFFF


def unpack_set_binding(word: int) -> tuple[int, int] | None:
    """(set, binding) of a DESCRIPTOR_SET_BINDING word; None for NO_SET_BINDING."""
    if word == NO_SET_BINDING:
        return None
    return word >> SET_SHIFT, word & ((1 << SET_SHIFT) - 1)


# RANGE_FLAGS bits: an index was negative; the offset did not fit in 32 bits.
FLAG_NEGATIVE = 1
FLAG_WRAPPED = 2

# The local-array error (gpuav.instrument.local_arrays): which index of the access failed, in
# the descriptor index's place (so that one message folds every invocation of it), then the
# index (its low 32 bits) and the length it was compared with.
LOCAL_WHERE = DESCRIPTOR_INDEX  # the index's level in the chain | LOCAL_* flags
LOCAL_INDEX = DESCRIPTOR_INDEX + 1
LOCAL_LENGTH = DESCRIPTOR_INDEX + 2
LOCAL_LEVEL_MASK = 0xFFFF
LOCAL_SOURCE_POINTER = 1 << 29  # the index is in the source pointer of a memory copy
LOCAL_SIGNED = 1 << 30  # the index's type is signed
LOCAL_WIDE = 1 << 31  # a 64-bit index whose value does not fit in 32 bits

# The device-address errors (gpuav.instrument.device_addresses): which pointer operand of the
# instruction (1: the source of a memory copy) in the descriptor index's place, so that one
# message folds every invocation of it, then the address, the bytes accessed and the
# alignment the Aligned memory operand promised (0: none).
ADDRESS_OPERAND = DESCRIPTOR_INDEX
ADDRESS_LOW = DESCRIPTOR_INDEX + 1
ADDRESS_HIGH = DESCRIPTOR_INDEX + 2
ADDRESS_SIZE = DESCRIPTOR_INDEX + 3
ADDRESS_ALIGNMENT = DESCRIPTOR_INDEX + 4


def record_size(code: ErrorCode) -> int:
    return COMMON_WORDS + VALIDATION_WORDS[code]


MAX_RECORD_WORDS = max(
    record_size(code) for code in ErrorCode if code is not ErrorCode.DEBUG_PRINTF
)


@dataclass(frozen=True)
class ErrorRecord:
    """One decoded record. ``array_length`` is None for errors that carry no length."""

    shader_id: int
    instruction_index: int
    stage: Stage
    stage_words: tuple[int, int]
    error_code: ErrorCode
    descriptor_index: int
    array_length: int | None = None
    # The words after the array length of DESCRIPTOR_ERRORS (the set and binding), after the
    # descriptor index of the others.
    details: tuple[int, ...] = ()

    def encode(self) -> list[int]:
        words = [
            record_size(self.error_code),
            self.shader_id,
            self.instruction_index,
            int(self.stage),
            self.stage_words[0],
            self.stage_words[1],
            int(self.error_code),
            self.descriptor_index,
        ]
        if self.error_code in DESCRIPTOR_ERRORS:
            words.append(self.array_length if self.array_length is not None else 0)
            words.extend(self.details or (NO_SET_BINDING,))
        else:
            words.extend(self.details)
        if self.error_code is ErrorCode.DEBUG_PRINTF:
            words[RECORD_SIZE] = len(words)
        return words
