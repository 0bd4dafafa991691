"""``gpuav decode``: the messages for a dumped debug output buffer, without a Vulkan device.

The buffer file holds raw little-endian uint32 words (``DataWrittenLength`` then ``Data``),
as the layer's output block holds them; the shader is the original SPIR-V the records refer
to. Records name their shader by id: ``--shader-id`` says which id the given shader had; by
default every record is taken to come from it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gpuav.errors import EXIT_BAD_INPUT, DecodeError
from gpuav.report.context import ActionContext, ShaderContext
from gpuav.report.decode import (
    CORRUPT_OUTPUT_ID,
    OUTPUT_FULL_ID,
    decode_output_bytes,
    overflow_text,
)
from gpuav.report.messages import Message, compose_messages
from gpuav.spirv.reader import words_from_bytes


def add_decode_command(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    decode = subparsers.add_parser(
        "decode",
        help="print the messages for a dumped debug output buffer",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    decode.add_argument("buffer", type=Path, help="raw little-endian words: length, then Data")
    decode.add_argument("--shader", type=Path, required=True, help="the original SPIR-V")
    decode.add_argument("--shader-id", type=int, help="the shader id the layer gave it")
    decode.add_argument("--json", action="store_true", help="print JSON instead of text")
    decode.set_defaults(run=run_decode)


def run_decode(args: argparse.Namespace) -> int:
    """Decode the buffer and print one message per distinct error."""
    try:
        buffer = args.buffer.read_bytes()
        shader_words = tuple(words_from_bytes(args.shader.read_bytes()))
    except (OSError, DecodeError) as error:
        print(f"gpuav decode: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    decoded = decode_output_bytes(buffer)
    ids = (
        {args.shader_id}
        if args.shader_id is not None
        else {record.shader_id for record in decoded.records}
    )
    context = ActionContext(
        command_buffer=0,
        command_buffer_name=None,
        action_number=None,
        command=f"decoded from {args.buffer.name}",
        pipeline=0,
        pipeline_name=None,
        shaders=tuple(ShaderContext(id_, 0, None, 0, shader_words) for id_ in sorted(ids)),
    )
    messages = compose_messages(decoded.records, context)
    if args.json:
        document = {
            "written_length": decoded.written_length,
            "diagnostics": list(decoded.diagnostics),
            "dropped_records": decoded.dropped_records,
            "messages": [message_json(message) for message in messages],
        }
        print(json.dumps(document, indent=2))
        return 0
    for message in messages:
        print(f"gpuav: [{message.message_id}] {message.text}")
    if decoded.dropped_words:
        print(f"gpuav: [{OUTPUT_FULL_ID}] {overflow_text(decoded)}")
    for diagnostic in decoded.diagnostics:
        print(f"gpuav: [{CORRUPT_OUTPUT_ID}] {diagnostic}")
    if not messages and not decoded.diagnostics:
        print("gpuav decode: no error records")
    return 0


def message_json(message: Message) -> dict[str, Any]:
    """The message text and the facts behind it, for tools."""
    entry: dict[str, Any] = {
        "message_id": message.message_id,
        "severity": message.severity.value,
        "text": message.text,
        "count": message.count,
    }
    record = message.record
    if record is not None:
        entry.update(
            shader_id=record.shader_id,
            instruction_index=record.instruction_index,
            stage=record.stage.name.lower(),
            stage_words=list(record.stage_words),
            error_code=int(record.error_code),
            descriptor_index=record.descriptor_index,
            array_length=record.array_length,
        )
    location = message.location
    if location is not None:
        entry["source"] = {
            "file": location.file,
            "line": location.line,
            "column": location.column,
            "text": location.text,
        }
    descriptor = message.descriptor
    if descriptor is not None:
        entry["descriptor"] = {
            "name": descriptor.name,
            "set": descriptor.descriptor_set,
            "binding": descriptor.binding,
        }
    return entry
