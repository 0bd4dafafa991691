"""How the disassembler spells literal operands: numbers by their type, and strings.

The spelling follows spirv-dis (SPIRV-Tools), so that our text can be compared with its
output: 32- and 64-bit floats in shortest-round-trip-safe ``%g`` form (9 and 17 significant
digits) when zero or normal, otherwise, and for 16-bit floats always, in C99 hex-float form
(``0x1.8p+128``); integers in decimal, signed or not as the type says.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Sequence
from typing import Final

# width -> (exponent bits, fraction bits) of the IEEE 754 binary formats SPIR-V names.
_IEEE_LAYOUT: Final = {16: (5, 10), 32: (8, 23), 64: (11, 52)}
_LITTLE: Final = array("I", b"\x01\x00\x00\x00")[0] == 1


def combine_words(words: Sequence[int]) -> int:
    """The unsigned value of a multi-word literal (low-order word first, SPIR-V 2.2.1)."""
    value = 0
    for shift, word in enumerate(words):
        value |= word << (32 * shift)
    return value


def format_integer(words: Sequence[int], width: int, signed: bool) -> str:
    value = combine_words(words)
    if width and width < 32 * len(words):
        value &= (1 << width) - 1
    else:
        width = 32 * len(words)
    if signed and value >> (width - 1):
        value -= 1 << width
    return str(value)


def format_float(words: Sequence[int], width: int) -> str:
    """A float constant; widths without an IEEE layout print their bits in decimal."""
    bits = combine_words(words)
    layout = _IEEE_LAYOUT.get(width)
    if layout is None:
        return str(bits)
    exponent_bits, fraction_bits = layout
    exponent = (bits >> fraction_bits) & ((1 << exponent_bits) - 1)
    fraction = bits & ((1 << fraction_bits) - 1)
    is_zero = exponent == 0 and fraction == 0
    is_normal = 0 < exponent < (1 << exponent_bits) - 1
    if width != 16 and (is_zero or is_normal):
        if width == 32:
            value = struct.unpack("<f", struct.pack("<I", bits))[0]
            return f"{value:.9g}"
        return f"{struct.unpack('<d', struct.pack('<Q', bits))[0]:.17g}"
    return hex_float(bits, exponent_bits, fraction_bits)


def hex_float(bits: int, exponent_bits: int, fraction_bits: int) -> str:
    """C99 hex form with a normalised leading 1; infinities and NaNs show their raw exponent."""
    sign = "-" if bits >> (exponent_bits + fraction_bits) & 1 else ""
    exponent = (bits >> fraction_bits) & ((1 << exponent_bits) - 1)
    fraction = bits & ((1 << fraction_bits) - 1)
    bias = (1 << (exponent_bits - 1)) - 1
    if exponent == 0 and fraction == 0:
        return f"{sign}0x0p+0"
    if exponent == 0:  # subnormal: move the highest set bit into the implicit position
        top = fraction.bit_length() - 1
        power = 1 - bias - fraction_bits + top
        fraction = (fraction - (1 << top)) << (fraction_bits - top)
    else:
        power = exponent - bias
    nibbles = (fraction_bits + 3) // 4
    fraction <<= nibbles * 4 - fraction_bits
    digits = f"{fraction:0{nibbles}x}".rstrip("0")
    mantissa = f"0x1.{digits}" if digits else "0x1"
    return f"{sign}{mantissa}p{'+' if power >= 0 else ''}{power}"


def string_at(operands: Sequence[int], start: int) -> tuple[str, int]:
    """(text, index of the word after it) for the literal string at ``start``.

    Bytes that are not UTF-8 survive as surrogate escapes, so that writing the text with
    ``errors="surrogateescape"`` gives back the module's exact bytes.
    """
    data = array("I", operands[start:])
    if not _LITTLE:
        data.byteswap()
    raw = data.tobytes()
    end = raw.find(b"\0")
    if end < 0:
        end = len(raw)
    return raw[:end].decode("utf-8", errors="surrogateescape"), start + end // 4 + 1


def quote_string(text: str) -> str:
    """Double-quoted with ``"`` and ``\\`` escaped; newlines and tabs stay as they are."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class NumericTypes:
    """Integer and float types seen so far, to spell constants and switch literals."""

    def __init__(self) -> None:
        self.integers: dict[int, tuple[int, bool]] = {}  # type id -> (width, signed)
        self.floats: dict[int, int] = {}  # type id -> width

    def note_integer(self, type_id: int, width: int, signedness: int) -> None:
        self.integers[type_id] = (width, signedness != 0)

    def note_float(self, type_id: int, width: int) -> None:
        self.floats[type_id] = width

    def format(self, type_id: int | None, words: Sequence[int]) -> str:
        """A literal of type ``type_id``; unknown types print their bits unsigned."""
        integer = self.integers.get(type_id) if type_id is not None else None
        if integer is not None:
            return format_integer(words, integer[0], integer[1])
        width = self.floats.get(type_id) if type_id is not None else None
        if width is not None:
            return format_float(words, width)
        return str(combine_words(words))
