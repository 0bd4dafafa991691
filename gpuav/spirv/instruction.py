"""One SPIR-V instruction: its opcode, its operand words, and where it came from.

Operands stay as raw words so that reading and writing are cheap and exact; typed views
(strings, enumerants) are decoded on demand. ``origin`` is the instruction's index in the
module it was read from (None for instructions a pass added): it is the "instruction index"
that error records carry and the anchor of source-line lookup.
"""

from __future__ import annotations

from array import array

from gpuav.spirv.grammar import OPCODE_NAMES, RESULT_INDEX, TYPE_INDEX


class Instruction:
    __slots__ = ("opcode", "operands", "origin")

    def __init__(self, opcode: int, operands: list[int], origin: int | None = None) -> None:
        self.opcode = opcode
        self.operands = operands
        self.origin = origin

    @property
    def result_id(self) -> int | None:
        index = RESULT_INDEX.get(self.opcode)
        return None if index is None else self.operands[index]

    @property
    def type_id(self) -> int | None:
        index = TYPE_INDEX.get(self.opcode)
        return None if index is None else self.operands[index]

    @property
    def name(self) -> str:
        return OPCODE_NAMES.get(self.opcode, f"Op{self.opcode}")

    @property
    def word_count(self) -> int:
        return len(self.operands) + 1

    def words(self) -> list[int]:
        return [(len(self.operands) + 1) << 16 | self.opcode, *self.operands]

    def string(self, start: int = 0) -> str:
        """The literal string whose first word is operand ``start``."""
        return decode_string(self.operands, start)[0]

    def __repr__(self) -> str:
        return f"Instruction({self.name}, {self.operands}, origin={self.origin})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instruction):
            return NotImplemented
        return self.opcode == other.opcode and self.operands == other.operands

    __hash__ = None  # type: ignore[assignment]  # mutable


def encode_string(text: str) -> list[int]:
    """UTF-8, nul-terminated, padded with zeros to a whole word (SPIR-V 2.2.1)."""
    data = text.encode("utf-8") + b"\0"
    data += b"\0" * (-len(data) % 4)
    return array("I", data).tolist() if _LITTLE else _swapped(array("I", data))


def decode_string(words: list[int], start: int) -> tuple[str, int]:
    """(text, index of the first word after the string); ValueError if it never terminates."""
    data = array("I", words[start:])
    if not _LITTLE:
        data.byteswap()
    raw = data.tobytes()
    end = raw.find(b"\0")
    if end < 0:
        raise ValueError("string has no terminating nul")
    return raw[:end].decode("utf-8", errors="replace"), start + end // 4 + 1


def string_end(words: list[int], start: int) -> int:
    """Index of the first word after the string at ``start``; ValueError if it never ends."""
    data = array("I", words[start:])
    if not _LITTLE:
        data.byteswap()
    end = data.tobytes().find(b"\0")
    if end < 0:
        raise ValueError("string has no terminating nul")
    return start + end // 4 + 1


def _swapped(words: array[int]) -> list[int]:
    words.byteswap()
    return words.tolist()


_LITTLE = array("I", b"\x01\x00\x00\x00")[0] == 1
