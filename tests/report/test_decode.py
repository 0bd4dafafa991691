"""The output-buffer decoder: complete records in order, diagnostics for anything else."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuav.instrument import record as layout
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage, pack_compute_yz
from gpuav.report.decode import decode_output_buffer, decode_output_bytes, overflow_text

WORD = st.integers(min_value=0, max_value=2**32 - 1)
# Drawing whole records is slow in hypothesis; a few hundred lists of them cover the layout.
RECORD_LISTS = settings(max_examples=min(settings().max_examples, 300))

BOUNDS = ErrorRecord(
    7, 108, Stage.FRAGMENT, (0x43D1C000, 0x437E8000), ErrorCode.INDEX_OUT_OF_BOUNDS, 6, 6
)
UNINITIALIZED = ErrorRecord(
    3,
    40,
    Stage.COMPUTE,
    (5, pack_compute_yz(2, 1)),
    ErrorCode.DESCRIPTOR_UNINITIALIZED,
    3,
    8,
    (layout.pack_set_binding(1, 2),),
)


def buffer(records: list[ErrorRecord], data_words: int, written: int | None = None) -> list[int]:
    data = [word for item in records for word in item.encode()]
    assert len(data) <= data_words
    return [len(data) if written is None else written, *data, *[0] * (data_words - len(data))]


def test_records_in_order_until_a_zero_size() -> None:
    decoded = decode_output_buffer(buffer([BOUNDS, UNINITIALIZED, BOUNDS], 64))
    assert decoded.records == (BOUNDS, UNINITIALIZED, BOUNDS)
    assert decoded.diagnostics == ()
    assert decoded.written_length == 30


def test_record_sizes_follow_the_layout() -> None:
    assert len(BOUNDS.encode()) == 10 == layout.record_size(ErrorCode.INDEX_OUT_OF_BOUNDS)
    assert len(UNINITIALIZED.encode()) == 10
    (decoded,) = decode_output_buffer(buffer([UNINITIALIZED], 10)).records
    assert (decoded.array_length, decoded.details) == (8, (1 << 24 | 2,))
    assert layout.unpack_set_binding(decoded.details[0]) == (1, 2)
    assert BOUNDS.encode()[layout.DESCRIPTOR_SET_BINDING] == layout.NO_SET_BINDING


def test_overflow_keeps_the_records_that_fit_and_says_so() -> None:
    decoded = decode_output_buffer(buffer([BOUNDS, BOUNDS], 20, written=45))
    assert decoded.records == (BOUNDS, BOUNDS)
    assert decoded.diagnostics == ()
    assert decoded.dropped_words == 45 - 20
    assert overflow_text(decoded) == (
        "about 2 more error records did not fit after the 2 read; the messages are a sample "
        "of the errors"
    )


def test_buffer_filled_exactly_ends_without_a_zero() -> None:
    decoded = decode_output_buffer(buffer([BOUNDS, BOUNDS], 20))
    assert decoded.records == (BOUNDS, BOUNDS) and decoded.diagnostics == ()


def test_empty_and_unwritten_buffers() -> None:
    assert decode_output_buffer([]).diagnostics == (
        "empty output buffer (no DataWrittenLength word)",
    )
    assert decode_output_buffer([0]) == decode_output_buffer([0, 0, 0])
    assert decode_output_buffer([0, 0, 0]).records == ()
    assert decode_output_buffer([0, 0, 0]).diagnostics == ()


def test_corrupt_sizes_stop_reading_with_a_diagnostic() -> None:
    good = BOUNDS.encode()
    too_small = decode_output_buffer([20, *good, 3, 0, 0, 0, *[0] * 8])
    assert too_small.records == (BOUNDS,)
    assert too_small.diagnostics == (
        "corrupt record at Data[10]: size 3 is not between 8 and "
        f"{layout.MAX_RECORD_WORDS}; stopped reading",
    )
    too_large = decode_output_buffer([9, 1000, *good[1:]])
    assert too_large.records == ()
    assert f"size 1000 is not between 8 and {layout.MAX_RECORD_WORDS}" in too_large.diagnostics[0]
    truncated = decode_output_buffer([6, *good[:6]])
    assert truncated.diagnostics == (
        "corrupt record at Data[0]: size 10 runs past the end of Data (6 words); stopped reading",
    )


def test_records_beyond_the_written_length_are_read_but_noted() -> None:
    decoded = decode_output_buffer([5, *BOUNDS.encode(), 0])
    assert decoded.records == (BOUNDS,)
    assert decoded.diagnostics == ("DataWrittenLength is 5 but records fill 10 words of Data",)


def test_unknown_stage_or_code_and_wrong_size_skip_one_record() -> None:
    bad_stage = [*BOUNDS.encode()]
    bad_stage[layout.STAGE] = 9
    bad_code = [*BOUNDS.encode()]
    bad_code[layout.ERROR_CODE] = 0x1F
    short = [*BOUNDS.encode()[:9]]
    short[layout.RECORD_SIZE] = 9  # an out-of-bounds error needs 10 words
    words = [0, *bad_stage, *bad_code, *short, *UNINITIALIZED.encode()]
    words[0] = len(words) - 1
    decoded = decode_output_buffer(words)
    assert decoded.records == (UNINITIALIZED,)
    assert decoded.diagnostics == (
        "record at Data[0] has unknown stage 9",
        "record at Data[10] has unknown error code 31",
        "record at Data[20] has 9 words; error INDEX_OUT_OF_BOUNDS has 10",
    )


def test_bytes_are_little_endian_and_a_partial_word_is_reported() -> None:
    words = buffer([BOUNDS], 12)
    data = struct.pack(f"<{len(words)}I", *words)
    assert decode_output_bytes(data).records == (BOUNDS,)
    partial = decode_output_bytes(data + b"\x01\x02")
    assert partial.records == (BOUNDS,)
    assert partial.diagnostics[-1].startswith("buffer of 54 bytes is not a whole number")


RECORDS = (
    st.builds(
        ErrorRecord,
        shader_id=WORD,
        instruction_index=WORD,
        stage=st.sampled_from(Stage),
        stage_words=st.tuples(WORD, WORD),
        error_code=st.sampled_from(
            [ErrorCode.INDEX_OUT_OF_BOUNDS, ErrorCode.DESCRIPTOR_UNINITIALIZED]
        ),
        descriptor_index=WORD,
        array_length=WORD,
        details=st.just(()) | st.tuples(WORD.filter(lambda word: word != layout.NO_SET_BINDING)),
    )
    | st.builds(
        ErrorRecord,
        shader_id=WORD,
        instruction_index=WORD,
        stage=st.sampled_from(Stage),
        stage_words=st.tuples(WORD, WORD),
        error_code=st.just(ErrorCode.DESCRIPTOR_MISMATCH),
        descriptor_index=WORD,
        array_length=WORD,
        details=st.tuples(WORD, WORD, WORD),
    )
    | st.builds(
        ErrorRecord,
        shader_id=WORD,
        instruction_index=WORD,
        stage=st.sampled_from(Stage),
        stage_words=st.tuples(WORD, WORD),
        error_code=st.just(ErrorCode.TEXEL_OUT_OF_BOUNDS),
        descriptor_index=WORD,
        details=st.tuples(WORD, WORD, WORD),
    )
)


@RECORD_LISTS
@given(st.lists(RECORDS, max_size=12), st.integers(min_value=0, max_value=20))
def test_encode_then_decode_is_identity(records: list[ErrorRecord], spare: int) -> None:
    size = sum(len(item.encode()) for item in records)
    decoded = decode_output_buffer(buffer(records, size + spare))
    assert decoded.records == tuple(records)
    assert decoded.diagnostics == ()


@RECORD_LISTS
@given(st.lists(RECORDS, min_size=1, max_size=8), st.integers(min_value=1, max_value=100))
def test_overflowed_buffers_keep_every_complete_record(
    records: list[ErrorRecord], dropped: int
) -> None:
    size = sum(len(item.encode()) for item in records)
    decoded = decode_output_buffer(buffer(records, size, written=size + dropped))
    assert decoded.records == tuple(records)
    assert decoded.diagnostics == () and decoded.dropped_words == dropped


@given(st.binary(max_size=400))
def test_any_bytes_decode_without_raising(data: bytes) -> None:
    decoded = decode_output_bytes(data)
    assert all(isinstance(item, ErrorRecord) for item in decoded.records)
    assert all(isinstance(text, str) for text in decoded.diagnostics)


@given(st.lists(st.integers(min_value=-(2**40), max_value=2**40), max_size=80))
def test_any_word_list_decodes_without_raising(words: list[int]) -> None:
    decoded = decode_output_buffer(words)
    assert len(decoded.records) * layout.COMMON_WORDS <= max(len(words) - 1, 0)


@RECORD_LISTS
@given(st.lists(RECORDS, min_size=1, max_size=6), st.data())
def test_a_corrupted_word_never_raises(records: list[ErrorRecord], data: st.DataObject) -> None:
    words = buffer(records, sum(len(item.encode()) for item in records) + 4)
    at = data.draw(st.integers(min_value=0, max_value=len(words) - 1))
    words[at] = data.draw(WORD)
    decoded = decode_output_buffer(words)
    # Records before the corrupted one are untouched.
    before = 0
    prefix = []
    for item in records:
        before += len(item.encode())
        if before >= at:
            break
        prefix.append(item)
    assert decoded.records[: len(prefix)] == tuple(prefix)
