"""The facts behind a shader error message, as JSON-ready data (``gpuav run --json``).

Every fact the message text states is here as a value of its own, so tools need not parse the
text. The shape is version 1 of ``report_schema.json``; a change to it changes the version.
"""

from __future__ import annotations

import struct
from typing import Any

from gpuav.instrument.record import (
    BINDING_MASK,
    SET_SHIFT,
    ErrorCode,
    ErrorRecord,
    Stage,
    unpack_compute_yz,
    unpack_workgroup_x,
)
from gpuav.report.buffer_range_text import memory_fields
from gpuav.report.context import ActionContext, ShaderContext
from gpuav.report.descriptor_lookup import DescriptorVariable
from gpuav.report.shader_info import SourceLocation

STAGE_NAMES = {
    Stage.VERTEX: "vertex",
    Stage.TESSELLATION_CONTROL: "tessellation-control",
    Stage.TESSELLATION_EVALUATION: "tessellation-evaluation",
    Stage.GEOMETRY: "geometry",
    Stage.FRAGMENT: "fragment",
    Stage.COMPUTE: "compute",
    Stage.RAY_GENERATION: "ray-generation",
    Stage.INTERSECTION: "intersection",
    Stage.ANY_HIT: "any-hit",
    Stage.CLOSEST_HIT: "closest-hit",
    Stage.MISS: "miss",
    Stage.CALLABLE: "callable",
    Stage.TASK: "task",
    Stage.MESH: "mesh",
}


def _float(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits & 0xFFFFFFFF))[0])


def invocation_fields(record: ErrorRecord) -> dict[str, Any]:
    """The stage and the invocation's built-ins, named (record.py's stage-word table)."""
    first, second = record.stage_words
    stage = record.stage
    values: dict[str, Any]
    if stage is Stage.VERTEX:
        values = {"vertex_index": first, "instance_index": second}
    elif stage is Stage.TESSELLATION_CONTROL:
        values = {"invocation_id": first, "primitive_id": second}
    elif stage is Stage.TESSELLATION_EVALUATION:
        values = {"primitive_id": first}
    elif stage is Stage.GEOMETRY:
        values = {"primitive_id": first, "invocation_id": second}
    elif stage is Stage.FRAGMENT:
        values = {"fragment_coord": [_float(first), _float(second)]}
    elif stage in (Stage.TASK, Stage.MESH):
        x, local = unpack_workgroup_x(first)
        values = {
            "workgroup_id": [x, *unpack_compute_yz(second)],
            "local_invocation_index": local,
        }
    elif stage is not Stage.COMPUTE:  # the ray-tracing stages
        values = {"launch_id": [first, *unpack_compute_yz(second)]}
    else:
        values = {"global_invocation_id": [first, *unpack_compute_yz(second)]}
    return {"stage": STAGE_NAMES.get(stage, str(stage)), **values}


def _handle_and_name(handle: int, name: str | None) -> dict[str, Any] | None:
    return {"handle": handle, "name": name} if handle else None


def message_fields(
    record: ErrorRecord,
    count: int,
    context: ActionContext,
    shader: ShaderContext | None,
    location: SourceLocation | None,
    descriptor: DescriptorVariable | None,
) -> dict[str, Any]:
    """The structured fields of one shader error message (see the module docstring)."""
    site = context.recorded_at
    return {
        "error": {
            "code": record.error_code.name.lower().replace("_", "-"),
            "descriptor_index": record.descriptor_index,
            "array_length": record.array_length,
            "details": list(record.details),
        },
        "action": {
            "command": context.command,
            "index": context.action_number,
            "command_buffer": _handle_and_name(context.command_buffer, context.command_buffer_name),
        },
        "pipeline": _handle_and_name(context.pipeline, context.pipeline_name),
        "shader": {
            "id": record.shader_id,
            "module": _handle_and_name(shader.shader_module, shader.shader_module_name)
            if shader is not None
            else None,
            "instruction_index": record.instruction_index,
        },
        "invocation": invocation_fields(record),
        "invocations": count,
        "source": None
        if location is None
        else {
            "file": location.file,
            "line": location.line,
            "column": location.column or None,
            "text": location.text.strip() if location.text is not None else None,
        },
        "descriptor": None
        if descriptor is None
        else {
            "name": descriptor.name,
            "set": descriptor.descriptor_set,
            "binding": descriptor.binding,
            "index": record.descriptor_index,
        },
        "recorded_at": None
        if site is None
        else {"file": site.file, "line": site.line, "function": site.function},
        "labels": list(context.labels),
        "memory": _memory(record, context),
    }


def _memory(record: ErrorRecord, context: ActionContext) -> dict[str, Any] | None:
    """Buffer-range and texel errors: the bytes or texel, the range, the buffer."""
    if record.error_code not in (ErrorCode.BUFFER_OUT_OF_BOUNDS, ErrorCode.TEXEL_OUT_OF_BOUNDS):
        return None
    set_binding = record.details[0] if record.details else 0
    descriptor = context.buffer_descriptor(
        set_binding >> SET_SHIFT, set_binding & BINDING_MASK, record.descriptor_index
    )
    return memory_fields(record, descriptor)
