"""Messages about a descriptor that does not fit the instruction using it: the image view's
type, format or sample count against the shader's image type, or an unnormalized sampler
where the instruction needs normalized coordinates. The record carries the descriptor's fact
bits and the bits the access forbade (``gpuav.instrument.image_facts``); the layer describes
the view and sampler found there at read-back."""

from __future__ import annotations

from gpuav.instrument.image_facts import Mismatch

FALLBACK_ID = "GPUAV-descriptor-mismatch"


def message_id(command: str, mismatches: list[Mismatch]) -> str:
    """The first broken rule's VUID, in the action command's form where it has one."""
    if not mismatches:
        return FALLBACK_ID
    vuid = mismatches[0].vuid
    if vuid.startswith("VUID-"):
        return vuid
    return f"VUID-{command}-{vuid}" if command.startswith("vkCmd") else FALLBACK_ID


def fit_text(index: int, length: int | None, mismatches: list[Mismatch]) -> str:
    """The message's first sentences."""
    subject = f"Descriptor index {index}"
    if length == 1 and index == 0:
        subject = "The descriptor"
    elif length is not None:
        subject += f" used to index descriptor array of length {length}"
    reasons = " ".join(m.text for m in mismatches) or "(the record names no broken rule)"
    return f"{subject} does not fit the instruction using it: {reasons}"


def fit_detail(objects: str | None) -> str:
    """The line after the descriptor's: what it names, and what gpuav did."""
    found = f"It holds {objects}. " if objects else ""
    return f"{found}gpuav skipped the access (a read gives zero)."
