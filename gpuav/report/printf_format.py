"""Format a ``debugPrintfEXT`` line on the host, as C's ``printf`` would, from raw bits.

The format language is ``NonSemantic.DebugPrintf``'s (the Khronos layer's documentation):
``%[flags][width][.precision][vN][l|ll|h|hh]conversion`` with the conversions
``d i u x X o c s f F e E g G a A`` and ``%%``. A ``vN`` conversion prints the N components of
a vector argument separated by ``", "``, each with the same specification. Every argument
is given as its SPIR-V type (kind and width) and raw bits, so the value is read exactly as
the shader held it (floats promoted to double, as C's varargs do); the conversion then says
how to show it (``%d`` of an unsigned argument shows its bits as signed, as C would).

Python's ``%`` operator is used only where it equals C (the decimal float conversions);
integers, ``%a``, NaN signs and ``%s``/``%c`` are done here.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

_SPEC = re.compile(
    r"%(?P<flags>[-+ #0]*)(?P<width>\d*)(?:\.(?P<precision>\d*))?"
    r"(?:v(?P<vector>[234]))?(?P<length>ll|l|hh|h)?(?P<conversion>[diuxXocsfFeEgGaA%])"
)
_SIGNED = frozenset("di")
_UNSIGNED = frozenset("uxXoc")
_FLOATS = frozenset("fFeEgGaA")
_HEX_DIGITS_OF_DOUBLE = 13  # 52 mantissa bits
VECTOR_SEPARATOR = ", "


class ScalarKind(Enum):
    SIGNED = "signed"
    UNSIGNED = "unsigned"
    FLOAT = "float"
    BOOL = "bool"


@dataclass(frozen=True)
class Argument:
    """One argument of a printf: the bits of each component (one for a scalar), or the text
    of an ``OpString`` argument (``%s``)."""

    kind: ScalarKind
    width: int = 32
    components: tuple[int, ...] = ()
    text: str | None = None


@dataclass(frozen=True)
class Conversion:
    """One ``%...`` of the format."""

    source: str  # the specification as written
    flags: str
    width: int | None
    precision: int | None
    vector: int  # components printed: 1 for a scalar conversion
    conversion: str


def parse_format(text: str) -> list[str | Conversion]:
    """Literal runs and conversions in order; ``%%`` becomes a literal ``%``, and a ``%`` that
    starts no valid conversion stays as written (C leaves it undefined)."""
    pieces: list[str | Conversion] = []
    literal: list[str] = []
    at = 0
    while at < len(text):
        percent = text.find("%", at)
        if percent < 0:
            literal.append(text[at:])
            break
        literal.append(text[at:percent])
        match = _SPEC.match(text, percent)
        if match is None:
            literal.append("%")
            at = percent + 1
            continue
        at = match.end()
        if match["conversion"] == "%":
            literal.append("%")
            continue
        if literal:
            pieces.append("".join(literal))
            literal = []
        precision = match["precision"]
        pieces.append(
            Conversion(
                source=match.group(0),
                flags=match["flags"],
                width=int(match["width"]) if match["width"] else None,
                precision=None if precision is None else int(precision or "0"),
                vector=int(match["vector"]) if match["vector"] else 1,
                conversion=match["conversion"],
            )
        )
    if literal and "".join(literal):
        pieces.append("".join(literal))
    return pieces


def format_printf(text: str, arguments: Sequence[Argument]) -> str:
    """The line ``text`` prints with ``arguments``; a conversion without an argument is left
    as written, arguments without a conversion are ignored."""
    out: list[str] = []
    remaining = iter(arguments)
    for piece in parse_format(text):
        if isinstance(piece, str):
            out.append(piece)
            continue
        argument = next(remaining, None)
        out.append(piece.source if argument is None else format_argument(piece, argument))
    return "".join(out)


def format_argument(spec: Conversion, argument: Argument) -> str:
    """One conversion of one argument (every component of a vector conversion)."""
    if argument.text is not None or spec.conversion == "s":
        return _pad(spec, _string(spec, argument), zero_allowed=False)
    components = argument.components[: spec.vector] if spec.vector > 1 else argument.components[:1]
    return VECTOR_SEPARATOR.join(_scalar(spec, argument, bits) for bits in components)


def _string(spec: Conversion, argument: Argument) -> str:
    if argument.text is not None:
        value = argument.text
    else:  # a number given to %s: what C cannot do; show the number
        value = ", ".join(
            str(_integer(argument, bits, signed=True)) for bits in argument.components
        )
    return value if spec.precision is None else value[: spec.precision]


def _scalar(spec: Conversion, argument: Argument, bits: int) -> str:
    conversion = spec.conversion
    if conversion in _FLOATS:
        return _float_text(spec, _float(argument, bits))
    if conversion == "c":
        return _pad(spec, chr(_integer(argument, bits, signed=False) & 0xFF), zero_allowed=False)
    return _integer_text(spec, _integer(argument, bits, signed=conversion in _SIGNED))


def _integer(argument: Argument, bits: int, *, signed: bool) -> int:
    """The argument as an integer: floats by their value (C would print garbage), others by
    their bits at the argument's width."""
    if argument.kind is ScalarKind.FLOAT:
        value = _float(argument, bits)
        return int(value) if math.isfinite(value) else 0
    width = argument.width
    bits &= (1 << width) - 1
    if signed and bits >> (width - 1):
        return bits - (1 << width)
    return bits


def _float(argument: Argument, bits: int) -> float:
    """The argument as a double: floats by their bits, integers by their value."""
    if argument.kind is not ScalarKind.FLOAT:
        return float(_integer(argument, bits, signed=argument.kind is ScalarKind.SIGNED))
    if argument.width == 64:
        return float(struct.unpack("<d", struct.pack("<Q", bits & (1 << 64) - 1))[0])
    if argument.width == 16:
        return float(struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0])
    return float(struct.unpack("<f", struct.pack("<I", bits & 0xFFFF_FFFF))[0])


def _sign(spec: Conversion, negative: bool) -> str:
    if negative:
        return "-"
    if "+" in spec.flags:
        return "+"
    return " " if " " in spec.flags else ""


def _integer_text(spec: Conversion, value: int) -> str:
    """C's d i u o x X: precision is the least number of digits (0 with 0 prints none)."""
    conversion = spec.conversion
    negative = value < 0
    magnitude = -value if negative else value
    base = {"o": 8, "x": 16, "X": 16}.get(conversion, 10)
    digits = "" if magnitude == 0 and spec.precision == 0 else _digits(magnitude, base)
    if conversion == "X":
        digits = digits.upper()
    if spec.precision is not None:
        digits = digits.rjust(spec.precision, "0")
    prefix = _sign(spec, negative) if conversion in _SIGNED else ""
    if "#" in spec.flags:
        if conversion == "o" and not digits.startswith("0"):
            digits = "0" + digits
        elif conversion in "xX" and magnitude:
            prefix = "0" + conversion
    # The 0 flag is ignored with a precision (C 7.21.6.1).
    return _pad(spec, digits, prefix, zero_allowed=spec.precision is None)


def _digits(value: int, base: int) -> str:
    if base == 10:
        return str(value)
    return format(value, "o" if base == 8 else "x")


def _float_text(spec: Conversion, value: float) -> str:
    conversion = spec.conversion
    negative = math.copysign(1.0, value) < 0
    upper = conversion.isupper()
    if not math.isfinite(value):
        word = "nan" if math.isnan(value) else "inf"
        return _pad(spec, word.upper() if upper else word, _sign(spec, negative), False)
    if conversion in "aA":
        prefix, body = _hex_float(abs(value), spec.precision, "#" in spec.flags)
        if upper:
            prefix, body = prefix.upper(), body.upper()
        return _pad(spec, body, _sign(spec, negative) + prefix, zero_allowed=True)
    precision = 6 if spec.precision is None else spec.precision
    alternate = "#" if "#" in spec.flags else ""
    body = f"%{alternate}.{precision}{conversion}" % abs(value)
    return _pad(spec, body, _sign(spec, negative), zero_allowed=True)


def _hex_float(value: float, precision: int | None, alternate: bool) -> tuple[str, str]:
    """glibc's ``%a`` of a double: ``0x1.8p+1``; the leading digit is 0 only for zero and
    subnormals, and rounding may carry it to 2 (``%.0a`` of 1.5 is ``0x2p+0``)."""
    bits = struct.unpack("<Q", struct.pack("<d", value))[0]
    exponent_bits = bits >> 52 & 0x7FF
    mantissa = bits & (1 << 52) - 1
    if exponent_bits == 0:
        lead, exponent = 0, 0 if mantissa == 0 else -1022
    else:
        lead, exponent = 1, exponent_bits - 1023
    fraction = f"{mantissa:013x}"
    if precision is None:
        fraction = fraction.rstrip("0")
    elif precision < _HEX_DIGITS_OF_DOUBLE:
        drop = 4 * (_HEX_DIGITS_OF_DOUBLE - precision)
        whole = (lead << 52 | mantissa) >> drop
        rest = (lead << 52 | mantissa) & (1 << drop) - 1
        half = 1 << (drop - 1)
        if rest > half or (rest == half and whole & 1):
            whole += 1
        lead, kept = whole >> (4 * precision), whole & (1 << (4 * precision)) - 1
        fraction = f"{kept:0{precision}x}" if precision else ""
    else:
        fraction = fraction.ljust(precision, "0")
    point = "." if fraction or alternate else ""
    return "0x", f"{lead:x}{point}{fraction}p{exponent:+d}"


def _pad(spec: Conversion, body: str, prefix: str = "", zero_allowed: bool = True) -> str:
    """Width: spaces on the left (right with ``-``), or zeros between sign/prefix and body."""
    width = spec.width or 0
    missing = width - len(prefix) - len(body)
    if missing <= 0:
        return prefix + body
    if "-" in spec.flags:
        return prefix + body + " " * missing
    if "0" in spec.flags and zero_allowed:
        return prefix + "0" * missing + body
    return " " * missing + prefix + body
