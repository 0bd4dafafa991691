"""One message per debugPrintfEXT line: the formatted text, prefixed with where it came from.

A printf record names its DebugPrintf instruction by its index in the original module; from
the original words (kept per shader for error messages) this module finds the format string
and the type of each argument (``printf_arguments``, the shapes the pass wrote them by), reads
the argument words back and formats the line (``printf_format``). Every record is a line:
unlike errors, nothing is folded. The text is

``DEBUG-PRINTF in Dispatch Index 0 (vkCmdDispatch), Command buffer (0x55d1), Compute, global
invocation (3, 0, 0), shader.comp line 12 | x = 3``

the part after `` | `` being exactly what the shader printed, its newlines too. Programs that
show the Khronos layer's printf lines find them the way they find its: taichi prints what
follows the last ``|`` of an INFO validation message that contains ``DEBUG-PRINTF``.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuav.instrument.printf_arguments import (
    FIRST_ARGUMENT_OPERAND,
    FORMAT_OPERAND,
    ArgumentShape,
    argument_shape,
    is_printf,
    printf_set_ids,
)
from gpuav.instrument.record import ErrorRecord, Stage, unpack_compute_yz, unpack_workgroup_x
from gpuav.report.context import ActionContext
from gpuav.report.messages import action_kind
from gpuav.report.printf_format import Argument, ScalarKind, format_printf
from gpuav.report.shader_info import ShaderInfo, shader_info
from gpuav.spirv.grammar import RESULT_INDEX, TYPE_INDEX, Op
from gpuav.spirv.instruction import Instruction, decode_string

PRINTF_MESSAGE_ID = "GPUAV-debug-printf"
PRINTF_FULL_ID = "GPUAV-printf-buffer-full"
SEPARATOR = " | "
TEXT_PREFIX = "DEBUG-PRINTF in "
CACHED_SHADERS = 64


@dataclass(frozen=True)
class PrintfSiteInfo:
    """What the host needs to format the lines of one DebugPrintf instruction."""

    format: str
    shapes: tuple[ArgumentShape, ...]


@dataclass(frozen=True)
class PrintfLine:
    """A message (``message_id``, ``severity``, ``text``) and its parts, for JSON."""

    text: str
    printed: str  # what the shader printed, as formatted
    record: ErrorRecord
    message_id: str = PRINTF_MESSAGE_ID
    severity: str = "info"
    fields: Mapping[str, Any] = field(default_factory=dict)


@functools.lru_cache(maxsize=CACHED_SHADERS)
def printf_sites(info: ShaderInfo) -> Mapping[int, PrintfSiteInfo]:
    """Instruction index -> format and argument shapes, for every DebugPrintf of a shader."""
    module = info.module
    if module is None:
        return {}
    sets = printf_set_ids(module.ext_inst_imports)
    if not sets:
        return {}
    definitions: dict[int, Instruction] = {}
    types: dict[int, int] = {}
    for instruction in info.instructions:
        result_at = RESULT_INDEX.get(instruction.opcode)
        if result_at is None:
            continue
        definitions[instruction.operands[result_at]] = instruction
        type_at = TYPE_INDEX.get(instruction.opcode)
        if type_at is not None:
            types[instruction.operands[result_at]] = instruction.operands[type_at]
    sites = {}
    for position, instruction in enumerate(info.instructions):
        if not is_printf(instruction, sets):
            continue
        format_string = definitions.get(instruction.operands[FORMAT_OPERAND])
        text = ""
        if format_string is not None and format_string.opcode == Op.String:
            text = decode_string(format_string.operands, 1)[0]
        shapes = tuple(
            argument_shape(argument, definitions, types)
            for argument in instruction.operands[FIRST_ARGUMENT_OPERAND:]
        )
        sites[position] = PrintfSiteInfo(text, shapes)
    return sites


def read_arguments(shapes: Sequence[ArgumentShape], words: Sequence[int]) -> list[Argument]:
    """The arguments from a record's words, each as its shape says it was written (a short
    record reads zeros)."""
    arguments = []
    at = 0
    for shape in shapes:
        if shape.text is not None:
            arguments.append(Argument(ScalarKind.UNSIGNED, text=shape.text))
            continue
        per_component = 2 if shape.width == 64 else 1
        components = []
        for _ in range(shape.components):
            parts = [int(words[k]) if k < len(words) else 0 for k in range(at, at + per_component)]
            components.append(sum(part << (32 * k) for k, part in enumerate(parts)))
            at += per_component
        kind = ScalarKind.UNSIGNED if shape.kind is ScalarKind.BOOL else shape.kind
        arguments.append(Argument(kind, shape.width, tuple(components)))
    return arguments


def _float(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits & 0xFFFF_FFFF))[0])


def invocation_text(record: ErrorRecord) -> str:
    """The stage and which invocation printed, from the stage words (record.py's table)."""
    first, second = record.stage_words
    stage = record.stage
    if stage is Stage.VERTEX:
        return f"Vertex, vertex index {first}, instance {second}"
    if stage is Stage.TESSELLATION_CONTROL:
        return f"Tessellation Control, invocation {first}, primitive {second}"
    if stage is Stage.TESSELLATION_EVALUATION:
        return f"Tessellation Evaluation, primitive {first}"
    if stage is Stage.GEOMETRY:
        return f"Geometry, primitive {first}, invocation {second}"
    if stage is Stage.FRAGMENT:
        return f"Fragment, fragment ({_float(first):g}, {_float(second):g})"
    y, z = unpack_compute_yz(second)
    name = stage.name.replace("_", " ").title()  # RAY_GENERATION: Ray Generation
    if stage in (Stage.TASK, Stage.MESH):
        x, local = unpack_workgroup_x(first)
        return f"{name}, workgroup ({x}, {y}, {z}), local invocation {local}"
    if stage is not Stage.COMPUTE:  # the ray-tracing stages
        return f"{name}, launch ({first}, {y}, {z})"
    return f"Compute, global invocation ({first}, {y}, {z})"


def action_text(context: ActionContext) -> str:
    """``Dispatch Index 0 (vkCmdDispatch), Command buffer (name)(0x55d1)``."""
    if context.action_number is None:
        action = f"Action {context.command}"
    else:
        kind = action_kind(context.command, context.bind_point)
        action = f"{kind} Index {context.action_number} ({context.command})"
    if not context.command_buffer:
        return action
    name = context.command_buffer_name
    handle = f"0x{context.command_buffer:x}"
    return f"{action}, Command buffer {f'({name})' if name else ''}({handle})"


def compose_printf_line(
    record: ErrorRecord, context: ActionContext, info: ShaderInfo | None
) -> PrintfLine:
    index = record.instruction_index
    site = printf_sites(info).get(index) if info is not None else None
    if site is None:
        printed = f"(no debugPrintfEXT at instruction {index} of shader {record.shader_id})"
    else:
        printed = format_printf(site.format, read_arguments(site.shapes, list(record.details)))
    location = info.location(index) if info is not None else None
    if location is not None:
        file = f"{location.file} " if location.file else ""
        source = f"{file}line {location.line}"
    else:
        source = f"SPIR-V instruction {index}"
    where = f"{TEXT_PREFIX}{action_text(context)}, {invocation_text(record)}, {source}"
    # The keys and shapes of gpuav run --json's message facts (report_schema.json).
    buffer = context.command_buffer
    fields = {
        "action": {
            "command": context.command,
            "index": context.action_number,
            "command_buffer": {"handle": buffer, "name": context.command_buffer_name}
            if buffer
            else None,
        },
        "shader": {"id": record.shader_id, "instruction_index": index},
        "invocation": {"stage": record.stage.name.lower().replace("_", "-")},
        "source": None
        if location is None
        else {"file": location.file, "line": location.line, "column": location.column or None},
    }
    return PrintfLine(f"{where}{SEPARATOR}{printed}", printed, record, fields=fields)


def compose_printf_lines(
    records: Sequence[ErrorRecord], context: ActionContext
) -> list[PrintfLine]:
    """One line per record, in the order the shaders wrote them."""
    infos: dict[int, ShaderInfo | None] = {}
    lines = []
    for record in records:
        if record.shader_id not in infos:
            shader = context.shader(record.shader_id)
            infos[record.shader_id] = shader_info(shader.words) if shader is not None else None
        lines.append(compose_printf_line(record, context, infos[record.shader_id]))
    return lines


def dropped_text(context: ActionContext, dropped: int, buffer_bytes: int) -> str:
    """The once-per-action warning for lines that did not fit."""
    lines = "line" if dropped == 1 else "lines"
    return (
        f"{dropped} debugPrintfEXT {lines} of {action_text(context)} did not fit in its "
        f"printf buffer of {buffer_bytes} bytes and {'was' if dropped == 1 else 'were'} lost; "
        "raise GPUAV_PRINTF_BUFFER_SIZE (gpuav_gpu_assisted.printf_buffer_size) to keep them. "
        "Error records written after the buffer filled, if any, were lost too."
    )
