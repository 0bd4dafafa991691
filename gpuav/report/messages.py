"""Compose validation messages from decoded records and the action's context.

Simple version written by the layer's author (fields of seed 000's message, without the
source-line lookup); the report side owns this module and may replace it, keeping
``compose_messages(records, action_context) -> list[Message]``.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage
from gpuav.report.context import ActionContext


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Message:
    message_id: str
    severity: Severity
    text: str


MESSAGE_IDS = {
    ErrorCode.INDEX_OUT_OF_BOUNDS: "UNASSIGNED-Descriptor index out of bounds",
    ErrorCode.DESCRIPTOR_UNINITIALIZED: "UNASSIGNED-Descriptor uninitialized",
}
STAGE_NAMES = {
    Stage.VERTEX: "Vertex",
    Stage.TESSELLATION_CONTROL: "Tessellation Control",
    Stage.TESSELLATION_EVALUATION: "Tessellation Eval",
    Stage.GEOMETRY: "Geometry",
    Stage.FRAGMENT: "Fragment",
    Stage.COMPUTE: "Compute",
}


def _float(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0])


def _object(kind: str, name: str | None, handle: int) -> str:
    return f"{kind} ({name})(0x{handle:x})" if name else f"{kind} (0x{handle:x})"


def _stage_text(record: ErrorRecord) -> str:
    first, second = record.stage_words
    stage = record.stage
    if stage is Stage.VERTEX:
        return f"Vertex index = {first}. Instance index = {second}."
    if stage in (Stage.TESSELLATION_CONTROL, Stage.TESSELLATION_EVALUATION):
        return f"Invocation ID = {first}."
    if stage is Stage.GEOMETRY:
        return f"Primitive ID = {first}. Invocation ID = {second}."
    if stage is Stage.FRAGMENT:
        return f"Fragment coord (x,y) = ({_float(first):g}, {_float(second):g})."
    return f"Global invocation ID (x) = {first}."


def _error_text(record: ErrorRecord) -> str:
    if record.error_code is ErrorCode.INDEX_OUT_OF_BOUNDS:
        return (
            f"Index of {record.descriptor_index} used to index descriptor array of length "
            f"{record.array_length}."
        )
    return f"Descriptor index {record.descriptor_index} is uninitialized."


def compose_messages(records: Sequence[ErrorRecord], context: ActionContext) -> list[Message]:
    """One message per distinct record."""
    messages: list[Message] = []
    seen: set[ErrorRecord] = set()
    action = "Draw" if "Draw" in context.command else "Dispatch"
    for record in records:
        if record in seen:
            continue
        seen.add(record)
        shader = context.shader(record.shader_id)
        parts = [
            _error_text(record),
            _object("Command buffer", context.command_buffer_name, context.command_buffer) + ".",
            f"{action} Index {context.action_number} ({context.command}).",
            _object("Pipeline", context.pipeline_name, context.pipeline) + ".",
        ]
        if shader is not None and not shader.shader_module:
            parts.append("Shader Module (none: code given in the pipeline create info).")
        elif shader is not None:
            parts.append(
                _object("Shader Module", shader.shader_module_name, shader.shader_module) + "."
            )
        else:
            parts.append(f"Unknown shader id {record.shader_id}.")
        parts.append(f"Shader Instruction Index = {record.instruction_index}.")
        parts.append(f"Stage = {STAGE_NAMES[record.stage]}.")
        parts.append(_stage_text(record))
        messages.append(Message(MESSAGE_IDS[record.error_code], Severity.ERROR, " ".join(parts)))
    return messages
