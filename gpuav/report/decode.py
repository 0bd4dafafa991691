"""Decode an output block into error records, never raising on corrupt data.

Simple version written by the layer's author so that the read-back path works end to end;
the report side owns this module and may replace it (keeping ``decode_output_buffer``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuav.instrument import record as layout
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage


@dataclass(frozen=True)
class DecodedBuffer:
    records: tuple[ErrorRecord, ...]
    diagnostics: tuple[str, ...]
    written_length: int


def decode_output_buffer(words: Sequence[int]) -> DecodedBuffer:
    """Records from ``{DataWrittenLength; Data[]}``; problems become diagnostics."""
    if not words:
        return DecodedBuffer((), ("empty output buffer",), 0)
    written = int(words[layout.WRITTEN_LENGTH_WORD])
    data = [int(word) for word in words[layout.DATA_FIRST_WORD :]]
    records: list[ErrorRecord] = []
    diagnostics: list[str] = []
    position = 0
    while position < len(data):
        size = data[position]
        if size == 0:
            break
        if size < layout.COMMON_WORDS or position + size > len(data):
            diagnostics.append(f"record at word {position} has impossible size {size}")
            break
        item = data[position : position + size]
        try:
            code = ErrorCode(item[layout.ERROR_CODE])
            stage = Stage(item[layout.STAGE])
        except ValueError:
            diagnostics.append(
                f"record at word {position} has unknown stage {item[layout.STAGE]} "
                f"or error code {item[layout.ERROR_CODE]}"
            )
            position += size
            continue
        if size != layout.record_size(code):
            diagnostics.append(f"record at word {position} has size {size} for error {code.name}")
            position += size
            continue
        records.append(
            ErrorRecord(
                shader_id=item[layout.SHADER_ID],
                instruction_index=item[layout.INSTRUCTION_INDEX],
                stage=stage,
                stage_words=(item[layout.STAGE_WORD_0], item[layout.STAGE_WORD_1]),
                error_code=code,
                descriptor_index=item[layout.DESCRIPTOR_INDEX],
                array_length=item[layout.ARRAY_LENGTH]
                if code is ErrorCode.INDEX_OUT_OF_BOUNDS
                else None,
            )
        )
        position += size
    if written > len(data):
        diagnostics.append(
            f"shaders tried to write {written} words into {len(data)}; later errors were dropped"
        )
    return DecodedBuffer(tuple(records), tuple(diagnostics), written)
