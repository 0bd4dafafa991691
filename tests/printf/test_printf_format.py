"""Host formatting of debugPrintfEXT lines, checked against the C library's own snprintf.

Each scalar conversion is formatted by gpuav.report.printf_format and by glibc's snprintf
(through ctypes) with the same specification and value: the two must agree character for
character, over hand-picked edge cases and over random flags, widths, precisions and values.
"""

from __future__ import annotations

import ctypes
import math
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuav.report.printf_format import (
    Argument,
    ScalarKind,
    format_printf,
    parse_format,
)

LIBC = ctypes.CDLL(None)


def c_format(spec: str, value: object) -> str:
    buffer = ctypes.create_string_buffer(4096)
    LIBC.snprintf(buffer, len(buffer), spec.encode(), value)
    return buffer.value.decode("latin-1")


def f32(value: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", value))[0])


def f64(value: float) -> int:
    return int(struct.unpack("<Q", struct.pack("<d", value))[0])


def as_f32(value: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def signed(value: int, width: int = 32) -> Argument:
    return Argument(ScalarKind.SIGNED, width, (value & (1 << width) - 1,))


def unsigned(value: int, width: int = 32) -> Argument:
    return Argument(ScalarKind.UNSIGNED, width, (value,))


def floating(value: float, width: int = 32) -> Argument:
    return Argument(ScalarKind.FLOAT, width, (f64(value) if width == 64 else f32(value),))


INT_CASES = [
    ("%d", -5), ("%i", 42), ("%5d", -5), ("%-5d|", 7), ("%05d", -42), ("%+d", 3),
    ("% d", 3), ("%+ d", 3), ("%.3d", 7), ("%.0d", 0), ("%8.3d", -7), ("%-+8.3d|", 7),
    ("%08.3d", 7), ("%d", -(2**31)), ("%d", 2**31 - 1),
]  # fmt: skip
UINT_CASES = [
    ("%u", 4294967295), ("%x", 255), ("%X", 255), ("%#x", 255), ("%#X", 0), ("%#x", 0),
    ("%o", 8), ("%#o", 8), ("%#o", 0), ("%#.0o", 0), ("%.0x", 0), ("%08x", 0xBEEF),
    ("%-8X|", 0xBEEF), ("%#010x", 0xBEEF), ("%+u", 5), ("% u", 5), ("%c", 65), ("%3c", 66),
    ("%-3c|", 67), ("%.5x", 0xAB), ("%#.5x", 0xAB),
]  # fmt: skip
FLOAT_CASES = [
    ("%f", 3.1415), ("%F", 3.1415), ("%.2f", 2.675), ("%10.3f", -1.5), ("%-10.3f|", 1.5),
    ("%+f", 1.0), ("% f", 1.0), ("%010.2f", -3.25), ("%.0f", 2.5), ("%#.0f", 2.5),
    ("%e", 12345.678), ("%E", 0.000123), ("%.3e", -1.0), ("%12.4e", 6.02e23), ("%g", 100000.0),
    ("%g", 1000000.0), ("%g", 0.0001), ("%g", 0.00001), ("%G", 1e-10), ("%#g", 1.0),
    ("%.3g", 3.14159), ("%.0g", 0.5), ("%a", 1.0), ("%a", 0.0), ("%a", -0.0), ("%A", 255.5),
    ("%a", 0.1), ("%.2a", 0.1), ("%.0a", 1.5), ("%.0a", 1.0), ("%#.0a", 1.0), ("%12a", 1.5),
    ("%-12a|", 1.5), ("%012a", -1.5), ("%+a", 2.0), ("%.20a", 1.0), ("%f", math.inf),
    ("%F", -math.inf), ("%5f", math.inf), ("%05f", math.inf), ("%e", math.nan),
    ("%E", -math.nan), ("%a", math.inf), ("%f", -0.0), ("%g", -0.0), ("%a", 5e-324),
    ("%a", 2.2250738585072014e-308), ("%.1a", 1.96875), ("%f", 1e300),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "value"), INT_CASES)
def test_signed_conversions_equal_c(spec: str, value: int) -> None:
    assert format_printf(spec, [signed(value)]) == c_format(spec, ctypes.c_int(value))


@pytest.mark.parametrize(("spec", "value"), UINT_CASES)
def test_unsigned_conversions_equal_c(spec: str, value: int) -> None:
    assert format_printf(spec, [unsigned(value)]) == c_format(spec, ctypes.c_uint(value))


@pytest.mark.parametrize(("spec", "value"), FLOAT_CASES)
def test_double_conversions_equal_c(spec: str, value: float) -> None:
    assert format_printf(spec, [floating(value, 64)]) == c_format(spec, ctypes.c_double(value))


SINGLE_CASES = [(s, v) for s, v in FLOAT_CASES if not math.isfinite(v) or abs(v) < 3e38]


@pytest.mark.parametrize(("spec", "value"), SINGLE_CASES)
def test_float_arguments_are_promoted_to_double(spec: str, value: float) -> None:
    single = as_f32(value) if math.isfinite(value) else value
    assert format_printf(spec, [floating(value)]) == c_format(spec, ctypes.c_double(single))


def test_half_float_argument() -> None:
    bits = int(struct.unpack("<H", struct.pack("<e", 1.5))[0])
    assert format_printf("%f", [Argument(ScalarKind.FLOAT, 16, (bits,))]) == "1.500000"


@pytest.mark.parametrize(
    ("spec", "value", "c_value"),
    [
        ("%lu", 2**64 - 1, ctypes.c_ulonglong(2**64 - 1)),
        ("%lx", 0x123456789ABCDEF0, ctypes.c_ulonglong(0x123456789ABCDEF0)),
        ("%lX", 0xFEDCBA9876543210, ctypes.c_ulonglong(0xFEDCBA9876543210)),
        ("%#lx", 1 << 40, ctypes.c_ulonglong(1 << 40)),
        ("%020lu", 1 << 63, ctypes.c_ulonglong(1 << 63)),
        ("%lo", 1 << 40, ctypes.c_ulonglong(1 << 40)),
    ],
)
def test_64_bit_unsigned(spec: str, value: int, c_value: object) -> None:
    assert format_printf(spec, [unsigned(value, 64)]) == c_format(spec, c_value)


@pytest.mark.parametrize("value", [-1, -(2**63), 2**63 - 1, 123456789012345])
@pytest.mark.parametrize("spec", ["%ld", "%li", "%+25ld", "%-25ld|", "%.20ld"])
def test_64_bit_signed(spec: str, value: int) -> None:
    assert format_printf(spec, [signed(value, 64)]) == c_format(spec, ctypes.c_longlong(value))


def test_signed_conversion_of_unsigned_bits_reinterprets() -> None:
    """%d of a uint holding 0xFFFFFFFF prints -1, as C's varargs would."""
    assert format_printf("%d %u", [unsigned(0xFFFFFFFF), signed(-1)]) == "-1 4294967295"


def test_narrow_signed_integers_sign_extend() -> None:
    assert format_printf("%d", [Argument(ScalarKind.SIGNED, 16, (0xFFFE,))]) == "-2"
    assert format_printf("%d", [Argument(ScalarKind.SIGNED, 8, (0x80,))]) == "-128"


def test_vectors_join_components_like_the_khronos_layer() -> None:
    vec3 = Argument(ScalarKind.FLOAT, 32, tuple(f32(v) for v in (1.0, 2.5, -3.0)))
    assert format_printf("pos = %v3f", [vec3]) == "pos = 1.000000, 2.500000, -3.000000"
    assert format_printf("%.1v3f", [vec3]) == "1.0, 2.5, -3.0"
    ivec2 = Argument(ScalarKind.SIGNED, 32, (5, 0xFFFFFFFF))
    assert format_printf("%v2d", [ivec2]) == "5, -1"
    uvec4 = Argument(ScalarKind.UNSIGNED, 32, (1, 2, 3, 4))
    assert format_printf("%v4u", [uvec4]) == "1, 2, 3, 4"
    assert format_printf("%04v4x", [uvec4]) == "0001, 0002, 0003, 0004"
    u64vec2 = Argument(ScalarKind.UNSIGNED, 64, (1 << 40, 7))
    assert format_printf("%v2lu", [u64vec2]) == "1099511627776, 7"
    assert format_printf("%v2lx", [u64vec2]) == "10000000000, 7"


def test_strings_and_percent() -> None:
    text = Argument(ScalarKind.UNSIGNED, text="hello")
    assert format_printf("%s!", [text]) == "hello!"
    assert format_printf("[%8s]", [text]) == "[   hello]"
    assert format_printf("[%-8s]", [text]) == "[hello   ]"
    assert format_printf("[%.3s]", [text]) == "[hel]"
    assert format_printf("100%% %d%%", [signed(5)]) == "100% 5%"


def test_missing_and_extra_arguments() -> None:
    assert format_printf("%d and %d", [signed(1)]) == "1 and %d"
    assert format_printf("just text", [signed(1)]) == "just text"
    assert format_printf("%", []) == "%"
    assert format_printf("50%!", []) == "50%!"


def test_parse_keeps_each_specification() -> None:
    pieces = parse_format("a %-08.3v4lx b")
    assert pieces[0] == "a "
    spec = pieces[1]
    assert not isinstance(spec, str)
    assert (spec.flags, spec.width, spec.precision, spec.vector, spec.conversion) == (
        "-0",
        8,
        3,
        4,
        "x",
    )
    assert pieces[2] == " b"


_flags = st.text(alphabet="-+ #0", max_size=3)
_width = st.one_of(st.just(""), st.integers(1, 25).map(str))
_precision = st.one_of(st.just(""), st.just("."), st.integers(0, 20).map(lambda p: f".{p}"))


@given(_flags, _width, _precision, st.sampled_from("di"), st.integers(-(2**31), 2**31 - 1))
def test_random_signed_equals_c(
    flags: str, width: str, precision: str, conversion: str, value: int
) -> None:
    spec = f"%{flags}{width}{precision}{conversion}"
    assert format_printf(spec, [signed(value)]) == c_format(spec, ctypes.c_int(value))


@given(_flags, _width, _precision, st.sampled_from("uxXo"), st.integers(0, 2**64 - 1))
def test_random_unsigned_64_equals_c(
    flags: str, width: str, precision: str, conversion: str, value: int
) -> None:
    spec = f"%{flags}{width}{precision}l{conversion}"
    expected = c_format(spec, ctypes.c_ulonglong(value))
    assert format_printf(spec, [unsigned(value, 64)]) == expected


@given(
    _flags,
    _width,
    _precision,
    st.sampled_from("fFeEgGaA"),
    st.floats(allow_nan=True, allow_infinity=True),
)
def test_random_doubles_equal_c(
    flags: str, width: str, precision: str, conversion: str, value: float
) -> None:
    spec = f"%{flags}{width}{precision}{conversion}"
    if conversion in "fF" and abs(value) > 1e60:
        value = math.copysign(1e60, value)  # keep C's 300-digit expansions out of the buffer
    expected = c_format(spec, ctypes.c_double(value))
    assert format_printf(spec, [floating(value, 64)]) == expected
