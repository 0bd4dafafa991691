"""Decode a debug output buffer into error records, never raising on corrupt data.

The buffer is seed 000's ``{uint DataWrittenLength; uint Data[];}``: records follow each other
in ``Data`` until a record size of 0 or the end of ``Data``. Shaders only write whole records,
so a size that no record kind has means the block is corrupt: reading stops there with a
diagnostic (we cannot know where the next record starts). A record with a plausible size but
an unknown stage or error code is skipped with a diagnostic, since its size is still trusted.
``DataWrittenLength`` larger than ``Data`` is the normal overflow case: later records were
dropped by the shaders, which ``dropped_words`` tells.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gpuav.instrument import record as layout
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage

WORD_MASK = 0xFFFFFFFF
# Message ids for what a buffer says besides its records.
CORRUPT_OUTPUT_ID = "GPUAV-corrupt-output"
OUTPUT_FULL_ID = "GPUAV-output-block-full"
MIN_RECORD_WORDS = min(layout.record_size(code) for code in ErrorCode)


@dataclass(frozen=True)
class DecodedBuffer:
    """``diagnostics`` say what was wrong with the buffer; an overflow is not wrong, and is
    told by ``dropped_words`` instead."""

    records: tuple[ErrorRecord, ...]
    diagnostics: tuple[str, ...]
    written_length: int
    dropped_words: int = 0
    # debugPrintfEXT lines, in the order written (never folded), and how many did not fit.
    printf_records: tuple[ErrorRecord, ...] = ()
    printf_dropped: int = 0

    @property
    def dropped_records(self) -> int:
        """About how many records the shaders could not write (sizes vary by error)."""
        return -(-self.dropped_words // layout.MAX_RECORD_WORDS)


def overflow_text(decoded: DecodedBuffer) -> str:
    """What an overflow means to the user: the messages are a sample of the errors."""
    dropped = decoded.dropped_records
    return (
        f"about {dropped} more error record{'s' if dropped != 1 else ''} did not fit after "
        f"the {len(decoded.records)} read; the messages are a sample of the errors"
    )


def words_from_bytes(data: bytes | bytearray | memoryview) -> list[int]:
    """Little-endian uint32 words; a trailing partial word is dropped (the caller says so)."""
    usable = len(data) - len(data) % 4
    return [int.from_bytes(data[at : at + 4], "little") for at in range(0, usable, 4)]


def decode_output_bytes(data: bytes | bytearray | memoryview) -> DecodedBuffer:
    """``decode_output_buffer`` for a dumped buffer (raw little-endian words)."""
    decoded = decode_output_buffer(words_from_bytes(data))
    if len(data) % 4:
        extra = f"buffer of {len(data)} bytes is not a whole number of words; ignored the tail"
        return DecodedBuffer(
            decoded.records,
            (*decoded.diagnostics, extra),
            decoded.written_length,
            decoded.dropped_words,
        )
    return decoded


def decode_output_buffer(words: Sequence[int], reserved_tail: int = 0) -> DecodedBuffer:
    """Records from ``{DataWrittenLength; Data[]}``; problems become diagnostics.
    ``reserved_tail``: the last words of Data hold no records (the layer's blocks keep
    ``record.RESERVED_TAIL_WORDS``, the count of printf lines that did not fit)."""
    if not words:
        return DecodedBuffer((), ("empty output buffer (no DataWrittenLength word)",), 0)
    written = int(words[layout.WRITTEN_LENGTH_WORD]) & WORD_MASK
    first = layout.DATA_FIRST_WORD
    data_length = max(len(words) - first - reserved_tail, 0)
    printf_dropped = int(words[-1]) & WORD_MASK if reserved_tail and data_length else 0
    records: list[ErrorRecord] = []
    diagnostics: list[str] = []
    position = 0
    # Words are read where needed: most blocks hold nothing, and the layer's are 4096 words.
    while position < data_length:
        size = int(words[first + position]) & WORD_MASK
        if size == 0:
            break
        largest = _largest(words, first + position, data_length - position)
        if not MIN_RECORD_WORDS <= size <= largest:
            diagnostics.append(
                f"corrupt record at Data[{position}]: size {size} is not between "
                f"{MIN_RECORD_WORDS} and {largest}; stopped reading"
            )
            break
        if position + size > data_length:
            diagnostics.append(
                f"corrupt record at Data[{position}]: size {size} runs past the end of Data "
                f"({data_length} words); stopped reading"
            )
            break
        start = first + position
        item = [int(word) & WORD_MASK for word in words[start : start + size]]
        decoded = _record(item, position, diagnostics)
        if decoded is not None:
            records.append(decoded)
        position += size
    if written < position:
        diagnostics.append(
            f"DataWrittenLength is {written} but records fill {position} words of Data"
        )
    dropped = written - position if written > data_length else 0
    printf = ErrorCode.DEBUG_PRINTF
    return DecodedBuffer(
        tuple(r for r in records if r.error_code is not printf),
        tuple(diagnostics),
        written,
        dropped,
        tuple(r for r in records if r.error_code is printf),
        printf_dropped,
    )


def _largest(words: Sequence[int], start: int, left: int) -> int:
    """The largest size the record at ``start`` may have: a printf record's is larger."""
    code = int(words[start + layout.ERROR_CODE]) & WORD_MASK if left > layout.ERROR_CODE else None
    if code == ErrorCode.DEBUG_PRINTF:
        return layout.MAX_PRINTF_RECORD_WORDS
    return layout.MAX_RECORD_WORDS


def _record(item: list[int], position: int, diagnostics: list[str]) -> ErrorRecord | None:
    """One record of a trusted size, or None (and a diagnostic) for one we cannot read."""
    try:
        stage = Stage(item[layout.STAGE])
    except ValueError:
        diagnostics.append(f"record at Data[{position}] has unknown stage {item[layout.STAGE]}")
        return None
    try:
        code = ErrorCode(item[layout.ERROR_CODE])
    except ValueError:
        diagnostics.append(
            f"record at Data[{position}] has unknown error code {item[layout.ERROR_CODE]}"
        )
        return None
    variable = code is ErrorCode.DEBUG_PRINTF and len(item) > layout.record_size(code)
    if len(item) != layout.record_size(code) and not variable:
        diagnostics.append(
            f"record at Data[{position}] has {len(item)} words; error {code.name} has "
            f"{layout.record_size(code)}"
        )
        return None
    has_length = code in layout.DESCRIPTOR_ERRORS
    first_detail = layout.ARRAY_LENGTH + 1 if has_length else layout.DESCRIPTOR_INDEX + 1
    details = tuple(item[first_detail:])
    if has_length and details == (layout.NO_SET_BINDING,):
        details = ()  # no set and binding: what ErrorRecord.encode writes for ()
    return ErrorRecord(
        shader_id=item[layout.SHADER_ID],
        instruction_index=item[layout.INSTRUCTION_INDEX],
        stage=stage,
        stage_words=(item[layout.STAGE_WORD_0], item[layout.STAGE_WORD_1]),
        error_code=code,
        descriptor_index=item[layout.DESCRIPTOR_INDEX],
        array_length=item[layout.ARRAY_LENGTH] if has_length else None,
        details=details,
    )
