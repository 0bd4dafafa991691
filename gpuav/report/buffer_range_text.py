"""What a buffer-range or texel record means to a person: which buffer, which bytes (or
texel), how far out.

The record gives the descriptor (set, binding, index), the access's first byte and size, and
the range the shader compared them with; the layer adds what the descriptor was written with
(buffer handle and name, offset, range as written, the buffer's size) where it tracks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuav.instrument import record as layout
from gpuav.instrument.record import ErrorCode, ErrorRecord

WHOLE_SIZE = 0xFFFF_FFFF_FFFF_FFFF
# VUIDs of the action commands (vkCmdDraw-..., vkCmdDispatch-...) for each buffer kind.
_VUID_SUFFIX = {True: "storageBuffers-06936", False: "uniformBuffers-06935"}
# ... and where a shader object (VK_EXT_shader_object) made the access.
_SHADER_OBJECT_VUID_SUFFIX = {True: "None-08613", False: "None-08612"}
_DYNAMIC_TYPES = frozenset({8, 9})


@dataclass(frozen=True)
class BufferDescriptor:
    """A buffer descriptor of the action's bound sets, as the layer tracked it."""

    descriptor_type: int
    buffer: int  # 0 when the layer did not see it written
    buffer_name: str | None
    offset: int
    range: int
    buffer_size: int | None
    view: int = 0  # the VkBufferView of a texel buffer descriptor
    view_name: str | None = None
    texel_bytes: int = 0


@dataclass(frozen=True)
class RangeFacts:
    """The numbers of one buffer-range record."""

    descriptor_set: int
    binding: int
    index: int
    storage: bool  # a storage buffer in the shader (else a uniform buffer)
    offset: int  # signed when an index was negative, else as computed (32-bit)
    size: int
    bound: int
    negative: bool
    wrapped: bool

    @classmethod
    def of(cls, record: ErrorRecord) -> RangeFacts:
        # A record built by hand may lack words; decoded ones never do.
        set_binding, offset, size, bound, flags = (*record.details, 0, 0, 0, 0, 0)[:5]
        negative = bool(flags & layout.FLAG_NEGATIVE)
        if negative and offset >= 1 << 31:
            offset -= 1 << 32
        return cls(
            set_binding >> layout.SET_SHIFT,
            set_binding & layout.BINDING_MASK,
            record.descriptor_index,
            bool(set_binding & layout.STORAGE_BIT),
            offset,
            size,
            bound,
            negative,
            wrapped=bool(flags & layout.FLAG_WRAPPED) and not negative,
        )

    @property
    def past_end(self) -> int:
        """How many of the access's bytes lie past the bound range."""
        return max(0, min(self.size, self.offset + self.size - self.bound))


TEXEL_MESSAGE_ID = "GPUAV-texel-buffer-out-of-bounds"  # the spec has no VUID for it


@dataclass(frozen=True)
class TexelFacts:
    """The numbers of one texel record."""

    descriptor_set: int
    binding: int
    index: int
    storage: bool
    texel: int  # as the shader gave it, signed
    texels: int

    @classmethod
    def of(cls, record: ErrorRecord) -> TexelFacts:
        set_binding, texel, texels = (*record.details, 0, 0, 0)[:3]
        return cls(
            set_binding >> layout.SET_SHIFT,
            set_binding & layout.BINDING_MASK,
            record.descriptor_index,
            bool(set_binding & layout.STORAGE_BIT),
            texel - (1 << 32) if texel >= 1 << 31 else texel,
            texels,
        )


def texel_text(facts: TexelFacts, access: str) -> str:
    kind = "storage" if facts.storage else "uniform"
    where = f"set {facts.descriptor_set}, binding {facts.binding}, index {facts.index}"
    return (
        f"Out-of-bounds {kind} texel buffer {access}: texel {facts.texel} of the view at "
        f"descriptor ({where}), which holds {facts.texels} texel"
        f"{'s' if facts.texels != 1 else ''} (valid: 0 to {facts.texels - 1})."
    )


def message_id(command: str, storage: bool, shader_object: bool = False) -> str:
    """The action command's VUID for the buffer kind; a generic id off any known command."""
    if command.startswith("vkCmd"):
        suffixes = _SHADER_OBJECT_VUID_SUFFIX if shader_object else _VUID_SUFFIX
        return f"VUID-{command}-{suffixes[storage]}"
    return f"GPUAV-{'storage' if storage else 'uniform'}-buffer-out-of-bounds"


def range_text(facts: RangeFacts, access: str) -> str:
    """The message's first sentence: what the access did and how far out it went."""
    kind = "storage" if facts.storage else "uniform"
    where = f"set {facts.descriptor_set}, binding {facts.binding}, index {facts.index}"
    bytes_ = f"{facts.size} byte{'s' if facts.size != 1 else ''}"
    if facts.negative:
        position = f"at offset {facts.offset} (a negative index)"
        outcome = f"{-facts.offset} bytes before the start of the {facts.bound} bytes bound"
    elif facts.wrapped:
        position = "at an offset of 4 GiB or more"
        outcome = f"far past the {facts.bound} bytes bound"
    else:
        position = f"at offset {facts.offset}"
        last = facts.offset + facts.size - 1
        outcome = (
            f"bytes [{facts.offset}, {last}] of which {facts.past_end} lie past the end of "
            f"the {facts.bound} bytes bound"
        )
    return (
        f"Out-of-bounds {kind} buffer {access}: {bytes_} {position} of the buffer at "
        f"descriptor ({where}): {outcome}."
    )


def descriptor_line(descriptor: BufferDescriptor | None) -> str | None:
    """The bound buffer as the app wrote it, for the message's details."""
    if descriptor is None or not descriptor.buffer:
        return None
    name = f" '{descriptor.buffer_name}'" if descriptor.buffer_name else ""
    if descriptor.view:
        view_name = f" '{descriptor.view_name}'" if descriptor.view_name else ""
        written = "VK_WHOLE_SIZE" if descriptor.range == WHOLE_SIZE else str(descriptor.range)
        return (
            f"Buffer view{view_name} (0x{descriptor.view:x}) of buffer{name} "
            f"(0x{descriptor.buffer:x}): offset {descriptor.offset}, range {written}, "
            f"{descriptor.texel_bytes} bytes per texel."
        )
    written = "VK_WHOLE_SIZE" if descriptor.range == WHOLE_SIZE else str(descriptor.range)
    size = "" if descriptor.buffer_size is None else f", buffer size {descriptor.buffer_size}"
    dynamic = (
        " (plus the dynamic offset of the bind)"
        if descriptor.descriptor_type in _DYNAMIC_TYPES
        else ""
    )
    return (
        f"Buffer{name} (0x{descriptor.buffer:x}): written with offset {descriptor.offset}"
        f"{dynamic}, range {written}{size}."
    )


def memory_fields(record: ErrorRecord, descriptor: BufferDescriptor | None) -> dict[str, Any]:
    """The numbers of a buffer-range or texel record as JSON-ready data."""
    bound: dict[str, Any] | None = None
    if descriptor is not None and descriptor.buffer:
        bound = {
            "handle": descriptor.buffer,
            "name": descriptor.buffer_name,
            "offset": descriptor.offset,
            "range": None if descriptor.range == WHOLE_SIZE else descriptor.range,
            "size": descriptor.buffer_size,
            "view": descriptor.view or None,
            "view_name": descriptor.view_name,
        }
    if record.error_code is ErrorCode.TEXEL_OUT_OF_BOUNDS:
        texel = TexelFacts.of(record)
        return {
            "kind": f"{'storage' if texel.storage else 'uniform'}-texel-buffer",
            "set": texel.descriptor_set,
            "binding": texel.binding,
            "index": texel.index,
            "texel": texel.texel,
            "texels": texel.texels,
            "buffer": bound,
        }
    facts = RangeFacts.of(record)
    return {
        "kind": f"{'storage' if facts.storage else 'uniform'}-buffer",
        "set": facts.descriptor_set,
        "binding": facts.binding,
        "index": facts.index,
        "offset": None if facts.wrapped else facts.offset,
        "size": facts.size,
        "bound": facts.bound,
        "past_end": None if facts.negative or facts.wrapped else facts.past_end,
        "negative_index": facts.negative,
        "buffer": bound,
    }
