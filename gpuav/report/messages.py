"""Compose validation messages from decoded records and the action's context.

A message has every field of seed 000's report (command buffer, draw or dispatch number,
pipeline, shader module, instruction index, stage and its words, the error, the source
line) plus the debug-utils names and the descriptor variable with its set and binding. The
first line says what went wrong and where in the source; indented lines follow with the
rest, so the text reads well on a console and in a debug-utils callback alike.

Records of one action that differ only in the invocation are one message with a count.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from gpuav.instrument.image_facts import Mismatch, mismatches
from gpuav.instrument.record import (
    DESCRIPTOR_ERRORS,
    RAY_TRACING_STAGES,
    VALIDATION_WORDS,
    ErrorCode,
    ErrorRecord,
    Stage,
    unpack_compute_yz,
    unpack_set_binding,
    unpack_workgroup_x,
)
from gpuav.report.address_text import AddressFacts, address_fields, address_text
from gpuav.report.buffer_range_text import (
    TEXEL_MESSAGE_ID,
    RangeFacts,
    TexelFacts,
    descriptor_line,
    range_text,
    texel_text,
)
from gpuav.report.buffer_range_text import message_id as buffer_message_id
from gpuav.report.context import ActionContext, ShaderContext
from gpuav.report.descriptor_fit_text import fit_detail, fit_text
from gpuav.report.descriptor_fit_text import message_id as fit_message_id
from gpuav.report.descriptor_lookup import DescriptorVariable
from gpuav.report.local_array_text import MESSAGE_ID as LOCAL_MESSAGE_ID
from gpuav.report.local_array_text import local_message
from gpuav.report.message_fields import message_fields
from gpuav.report.shader_info import ShaderInfo, SourceLocation, shader_info
from gpuav.report.unusable_descriptor_text import (
    RetiredResource,
    unusable_detail,
    unusable_fields,
    unusable_text,
)
from gpuav.report.unusable_descriptor_text import message_id as unusable_message_id
from gpuav.spirv.grammar import OPCODE_NAMES, Op

INDENT = "  "


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Message:
    """What the layer delivers (id, severity, text) and, for tools, the facts behind it."""

    message_id: str
    severity: Severity
    text: str
    record: ErrorRecord | None = None
    count: int = 1  # records folded into this message
    location: SourceLocation | None = None
    descriptor: DescriptorVariable | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)  # message_fields: for JSON


MESSAGE_IDS = {
    ErrorCode.INDEX_OUT_OF_BOUNDS: "GPUAV-descriptor-index-out-of-bounds",
}
_ACCESS_WORDS = {
    Op.Load: "read",
    Op.Store: "write",
    Op.CopyMemory: "copy",
    Op.ImageFetch: "fetch",
    Op.ImageRead: "read",
    Op.ImageWrite: "write",
    Op.ImageTexelPointer: "atomic",
}
STAGE_NAMES = {
    Stage.VERTEX: "Vertex",
    Stage.TESSELLATION_CONTROL: "Tessellation Control",
    Stage.TESSELLATION_EVALUATION: "Tessellation Evaluation",
    Stage.GEOMETRY: "Geometry",
    Stage.FRAGMENT: "Fragment",
    Stage.COMPUTE: "Compute",
    Stage.RAY_GENERATION: "Ray Generation",
    Stage.INTERSECTION: "Intersection",
    Stage.ANY_HIT: "Any Hit",
    Stage.CLOSEST_HIT: "Closest Hit",
    Stage.MISS: "Miss",
    Stage.CALLABLE: "Callable",
    Stage.TASK: "Task",
    Stage.MESH: "Mesh",
}


def _float(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0])


def _object(kind: str, name: str | None, handle: int) -> str:
    return f"{kind} ({name})(0x{handle:x})" if name else f"{kind} (0x{handle:x})"


def stage_text(record: ErrorRecord) -> str:
    """The stage and which invocation it was, from the stage words (record.py's table)."""
    first, second = record.stage_words
    stage = record.stage
    if stage is Stage.VERTEX:
        words = f"Vertex index = {first}. Instance index = {second}."
    elif stage is Stage.TESSELLATION_CONTROL:
        words = f"Invocation ID = {first}. Primitive ID = {second}."
    elif stage is Stage.TESSELLATION_EVALUATION:
        words = f"Primitive ID = {first}."
    elif stage is Stage.GEOMETRY:
        words = f"Primitive ID = {first}. Invocation ID = {second}."
    elif stage is Stage.FRAGMENT:
        words = f"Fragment coord (x,y) = ({_float(first):g}, {_float(second):g})."
    elif stage in RAY_TRACING_STAGES:
        y, z = unpack_compute_yz(second)
        words = f"Launch ID (x, y, z) = ({first}, {y}, {z})."
    elif stage in (Stage.TASK, Stage.MESH):
        x, local = unpack_workgroup_x(first)
        y, z = unpack_compute_yz(second)
        words = f"Workgroup ID (x, y, z) = ({x}, {y}, {z}). Local invocation index = {local}."
    else:
        y, z = unpack_compute_yz(second)
        words = f"Global invocation ID (x, y, z) = ({first}, {y}, {z})."
    return f"Stage = {STAGE_NAMES[stage]}. {words}"


def _access_word(info: ShaderInfo | None, index: int) -> str:
    if info is None or not 0 <= index < len(info.instructions):
        return "access"
    opcode = info.instructions[index].opcode
    return _ACCESS_WORDS.get(
        opcode, "atomic" if OPCODE_NAMES.get(opcode, "").startswith("OpAtomic") else "access"
    )


def error_text(
    record: ErrorRecord, descriptor: DescriptorVariable | None, context: ActionContext
) -> str:
    if record.error_code is ErrorCode.INDEX_OUT_OF_BOUNDS:
        return (
            f"Index of {record.descriptor_index} used to index descriptor array of length "
            f"{record.array_length}."
        )
    size = record.array_length
    if size is None and descriptor is not None and descriptor.descriptor_set is not None:
        key = (descriptor.descriptor_set, descriptor.binding or 0)
        size = context.binding_sizes.get(key)
    return unusable_text(record.descriptor_index, size, _retired(record, context))


def _failed_descriptor(record: ErrorRecord) -> tuple[int, int] | None:
    """(set, binding) of the descriptor whose index failed, where the record says."""
    if record.error_code not in DESCRIPTOR_ERRORS or not record.details:
        return None
    return unpack_set_binding(record.details[0])


def _mismatches(record: ErrorRecord) -> list[Mismatch]:
    """What a mismatch record's descriptor broke (its words after the set and binding)."""
    if len(record.details) < 3:
        return []
    return mismatches(record.details[1], record.details[2])


def _retired(record: ErrorRecord, context: ActionContext) -> RetiredResource | None:
    where = _failed_descriptor(record) or unusable_buffer(record)
    if where is None:
        return None
    return context.retired_descriptor(*where, record.descriptor_index)


def unusable_buffer(record: ErrorRecord) -> tuple[int, int] | None:
    """(set, binding) of a buffer or texel buffer descriptor that may not be used: its range
    check failed against the range 0 that the state gives such a descriptor."""
    if len(record.details) < VALIDATION_WORDS.get(record.error_code, 0) - 1:
        return None  # not a record the shader wrote
    if record.error_code is ErrorCode.BUFFER_OUT_OF_BOUNDS:
        facts = RangeFacts.of(record)
        return (facts.descriptor_set, facts.binding) if facts.bound == 0 else None
    if record.error_code is ErrorCode.TEXEL_OUT_OF_BOUNDS:
        texel = TexelFacts.of(record)
        return (texel.descriptor_set, texel.binding) if texel.texels == 0 else None
    return None


def _where(location: SourceLocation | None, info: ShaderInfo | None, index: int) -> str:
    """The end of the first line: the source position, or why there is none."""
    if info is None:
        return "(unknown shader)"
    if location is not None:
        place = (
            f"{location.file} line {location.line}" if location.file else f"line {location.line}"
        )
        return f"At {place}" + (f", column {location.column}." if location.column else ".")
    if info.error is not None:
        return "(the shader's SPIR-V could not be read)"
    if info.instruction_text(index) is None:
        return f"(instruction index {index} is outside the shader)"
    return f"At SPIR-V instruction {index} (the shader has no source line information)."


def _source_lines(
    location: SourceLocation | None, info: ShaderInfo | None, index: int
) -> list[str]:
    if info is None:
        return []
    if location is not None:
        if location.text is None:
            return [f"{location.line}: (the shader does not embed this source line)"]
        return [f"{location.line}: {location.text.strip()}"]
    text = info.instruction_text(index)
    if text is None:
        if info.error is not None:
            return [info.error]
        return [f"The shader has {len(info.instructions)} instructions."]
    return [
        f"SPIR-V: {text}",
        "Compile the shader with debug information (-g) for its source line.",
    ]


def _shader_lines(shader: ShaderContext | None, record: ErrorRecord) -> str:
    if shader is None:
        return f"Unknown shader id {record.shader_id} (not a shader of this pipeline)."
    if not shader.shader_module:
        return "Shader Module (none: code given in the pipeline create info)."
    return _object("Shader Module", shader.shader_module_name, shader.shader_module) + "."


_GRAPHICS, _RAY_TRACING = 0, 1000165000  # VkPipelineBindPoint


def action_kind(command: str, bind_point: int | None = None) -> str:
    """What the action is called before its number, as the Khronos layer calls it; a command
    that draws or dispatches alike is named by the bind point it ran at."""
    if "Draw" in command or bind_point == _GRAPHICS:
        return "Draw"
    return "Ray Trace" if "TraceRays" in command or bind_point == _RAY_TRACING else "Dispatch"


def _action_text(context: ActionContext) -> str:
    if context.action_number is None:
        return f"Action: {context.command}."
    kind = action_kind(context.command, context.bind_point)
    return f"{kind} Index {context.action_number} ({context.command})."


def _add_after_descriptor(details: list[str], line: str | None) -> None:
    """The bound buffer's line goes right after the shader's descriptor line."""
    if line is None:
        return
    at = next((k + 1 for k, text in enumerate(details) if text.startswith("Descriptor:")), 0)
    details.insert(at, line)


def compose_message(
    record: ErrorRecord, count: int, context: ActionContext, info: ShaderInfo | None
) -> Message:
    """One message for ``record`` and ``count - 1`` more invocations with the same error."""
    shader = context.shader(record.shader_id)
    index = record.instruction_index
    location = info.location(index) if info is not None else None
    empty_buffer = unusable_buffer(record)
    wanted = _failed_descriptor(record) or empty_buffer
    descriptor = info.descriptor(index, wanted) if info is not None else None
    details = _source_lines(location, info, index)
    if descriptor is not None:
        details.append(f"Descriptor: {descriptor.describe()}.")
    # Handles of 0: decoded offline (gpuav decode), no Vulkan objects to name.
    action = _action_text(context)
    if context.command_buffer:
        cmd = _object("Command buffer", context.command_buffer_name, context.command_buffer)
        action = f"{cmd}. {action}"
    details.append(action)
    if context.recorded_at is not None:
        details.append(f"Recorded at {context.recorded_at.describe()}.")
    if context.labels:
        details.append(f"Labels: {' > '.join(context.labels)}.")
    if shader is not None and shader.shader_object:
        name, handle = shader.shader_object_name, shader.shader_object
        details.append(_object("Shader Object", name, handle) + ".")
    elif context.pipeline or shader is None:
        pipeline = _object("Pipeline", context.pipeline_name, context.pipeline)
        details.append(f"{pipeline}. {_shader_lines(shader, record)}")
    details += [
        f"Shader Instruction Index = {index}.",
        stage_text(record),
    ]
    if count > 1:
        more = count - 1
        details.append(f"(and {more} more invocation{'s' if more > 1 else ''} with this error)")
    message_id = MESSAGE_IDS.get(record.error_code, "")
    severity = Severity.ERROR
    error_fields: dict[str, Any] = {}
    if record.error_code is ErrorCode.DESCRIPTOR_UNINITIALIZED or empty_buffer is not None:
        retired = _retired(record, context)
        in_buffer = (wanted or (-1, 0))[0] in context.descriptor_buffer_sets
        message_id = unusable_message_id(context.command, in_buffer)
        if empty_buffer is None:
            problem = error_text(record, descriptor, context)
        else:
            size = context.binding_sizes.get(empty_buffer)
            problem = unusable_text(record.descriptor_index, size, retired)
        _add_after_descriptor(details, unusable_detail(retired))
        error_fields = unusable_fields(retired)
    elif record.error_code is ErrorCode.DESCRIPTOR_MISMATCH:
        broken = _mismatches(record)
        message_id = fit_message_id(context.command, broken)
        problem = fit_text(record.descriptor_index, record.array_length, broken)
        where = _failed_descriptor(record)
        objects = (
            None if where is None else context.image_descriptor(*where, record.descriptor_index)
        )
        _add_after_descriptor(details, fit_detail(objects))
        error_fields = {"mismatches": [m.vuid for m in broken]}
    elif record.error_code is ErrorCode.BUFFER_OUT_OF_BOUNDS:
        facts = RangeFacts.of(record)
        bound = context.buffer_descriptor(facts.descriptor_set, facts.binding, facts.index)
        by_object = shader is not None and bool(shader.shader_object)
        message_id = buffer_message_id(context.command, facts.storage, by_object)
        severity = Severity.WARNING if context.robust(facts.storage) else Severity.ERROR
        problem = range_text(facts, _access_word(info, index))
        _add_after_descriptor(details, descriptor_line(bound))
        if context.robust(facts.storage):
            details.append(
                "Robust buffer access is on, so the access is defined (a read gives zero or "
                "in-range data, a write may be discarded), but it is almost always a bug."
            )
    elif record.error_code is ErrorCode.TEXEL_OUT_OF_BOUNDS:
        texel = TexelFacts.of(record)
        message_id = TEXEL_MESSAGE_ID
        severity = Severity.WARNING if context.robust(texel.storage) else Severity.ERROR
        problem = texel_text(texel, _access_word(info, index))
        _add_after_descriptor(
            details,
            descriptor_line(
                context.buffer_descriptor(texel.descriptor_set, texel.binding, texel.index)
            ),
        )
    elif record.error_code in (ErrorCode.ADDRESS_OUT_OF_BOUNDS, ErrorCode.ADDRESS_MISALIGNED):
        address = AddressFacts.of(record)
        buffer = context.address_buffer(address.address, address.size)
        message_id = address.message_id()
        problem = address_text(address, buffer, _access_word(info, index))
        error_fields = address_fields(address, buffer)
    elif record.error_code is ErrorCode.LOCAL_INDEX_OUT_OF_BOUNDS:
        local = local_message(record, info)
        message_id = LOCAL_MESSAGE_ID
        problem = local.problem
        after_source = len(_source_lines(location, info, index))
        details[after_source:after_source] = local.lines
        error_fields = local.error_fields
    else:
        problem = error_text(record, descriptor, context)
    first = f"{problem} {_where(location, info, index)}"
    text = "\n".join([first, *(INDENT + line for line in details)])
    fields = message_fields(record, count, context, shader, location, descriptor)
    fields["error"].update(error_fields)
    return Message(
        message_id,
        severity,
        text,
        record,
        count,
        location,
        descriptor,
        fields,
    )


def compose_messages(records: Sequence[ErrorRecord], context: ActionContext) -> list[Message]:
    """One message per distinct (shader, instruction, error, descriptor index), in order."""
    groups: dict[tuple[int, int, ErrorCode, int], list[ErrorRecord]] = {}
    for record in records:
        key = (
            record.shader_id,
            record.instruction_index,
            record.error_code,
            record.descriptor_index,
        )
        groups.setdefault(key, []).append(record)
    infos: dict[int, ShaderInfo | None] = {}
    messages = []
    for group in groups.values():
        shader_id = group[0].shader_id
        if shader_id not in infos:
            shader = context.shader(shader_id)
            infos[shader_id] = shader_info(shader.words) if shader is not None else None
        messages.append(compose_message(group[0], len(group), context, infos[shader_id]))
    return messages
