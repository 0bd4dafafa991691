"""What a device-address record means to a person: which bytes, and where they lie against the
buffer they fall in or are nearest to ("12 bytes after the end of buffer 'particles' (0x…,
4096 bytes at 0x…)"), or that the buffer was destroyed (a use after free).

The record gives the address, the bytes accessed and the alignment the access promised; the
layer adds the buffer from its table of live and recently destroyed buffers at read-back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuav.instrument.record import ErrorCode, ErrorRecord

# The Khronos layer's ids (1.4.309): it has no VUID for the range.
OUT_OF_BOUNDS_ID = "UNASSIGNED-Device address out of bounds"
MISALIGNED_ID = "VUID-RuntimeSpirv-PhysicalStorageBuffer64-06315"


@dataclass(frozen=True)
class AddressedBuffer:
    """A buffer with a device address, live or destroyed, as the layer tracked it."""

    handle: int
    address: int
    size: int
    destroyed: bool = False
    name: str | None = None

    @property
    def end(self) -> int:
        return self.address + self.size

    def distance(self, address: int, size: int) -> int:
        """Bytes between ``[address, address + size)`` and the buffer (0: they overlap)."""
        if address + size <= self.address:
            return self.address - (address + size)
        return max(address - self.end, 0)

    def describe(self) -> str:
        name = f" '{self.name}'" if self.name else ""
        return f"buffer{name} (0x{self.handle:x}, {self.size} bytes at 0x{self.address:x})"


@dataclass(frozen=True)
class AddressFacts:
    """The numbers of one device-address record."""

    misaligned: bool
    operand: int  # 1: the source pointer of a memory copy
    address: int
    size: int
    alignment: int

    @classmethod
    def of(cls, record: ErrorRecord) -> AddressFacts:
        # A record built by hand may lack words; decoded ones never do.
        low, high, size, alignment = (*record.details, 0, 0, 0, 0)[:4]
        return cls(
            record.error_code is ErrorCode.ADDRESS_MISALIGNED,
            record.descriptor_index,
            low | high << 32,
            size,
            alignment,
        )

    def message_id(self) -> str:
        return MISALIGNED_ID if self.misaligned else OUT_OF_BOUNDS_ID


def relation(facts: AddressFacts, buffer: AddressedBuffer | None) -> tuple[str, int | None]:
    """(how the access lies against ``buffer``, the distance in bytes where one applies)."""
    if buffer is None:
        return "unknown", None
    start, end = facts.address, facts.address + facts.size
    if buffer.destroyed:
        return "use-after-free", start - buffer.address
    if start >= buffer.end:
        return "after-end", start - buffer.end
    if start < buffer.address:
        return "before-start", buffer.address - start
    return "past-end", end - buffer.end


def address_text(facts: AddressFacts, buffer: AddressedBuffer | None, access: str) -> str:
    """The message's first sentence."""
    plural = "s" if facts.size != 1 else ""
    what = f"{facts.size} byte{plural} at 0x{facts.address:x}"
    if facts.misaligned:
        return (
            f"Misaligned device address {access}: {what}, which is not a multiple of the "
            f"{facts.alignment} bytes its Aligned memory operand promises "
            f"({facts.address % max(facts.alignment, 1)} bytes past one)."
        )
    kind, distance = relation(facts, buffer)
    if buffer is None:
        where = "in no buffer with a device address that gpuav knows"
    elif kind == "use-after-free":
        where = f"at offset {distance} of {buffer.describe()}, which was destroyed (use after free)"
    elif kind == "after-end":
        where = f"{distance} bytes after the end of {buffer.describe()}"
    elif kind == "before-start":
        where = f"{distance} bytes before the start of {buffer.describe()}"
    else:
        offset = facts.address - buffer.address
        where = f"at offset {offset} of {buffer.describe()}, {distance} of its bytes past the end"
    return f"Out-of-bounds device address {access}: {what}, {where}."


def address_fields(facts: AddressFacts, buffer: AddressedBuffer | None) -> dict[str, Any]:
    """The facts for the JSON report's "error" object."""
    kind, distance = relation(facts, buffer)
    return {
        "address": {
            "address": facts.address,
            "size": facts.size,
            "alignment": facts.alignment or None,
            "source_pointer": facts.operand == 1,
            "relation": "misaligned" if facts.misaligned else kind,
            "distance": None if facts.misaligned else distance,
            "buffer": None
            if buffer is None
            else {
                "handle": buffer.handle,
                "name": buffer.name,
                "address": buffer.address,
                "size": buffer.size,
                "destroyed": buffer.destroyed,
            },
        }
    }


ADDRESS_ERRORS = frozenset({ErrorCode.ADDRESS_OUT_OF_BOUNDS, ErrorCode.ADDRESS_MISALIGNED})
