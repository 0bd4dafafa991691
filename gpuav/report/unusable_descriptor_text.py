"""Messages about descriptors a shader used that were not valid (VUID-...-None-08114): never
written, or naming a resource that was destroyed (or whose memory was freed) since. The record
says which descriptor (set, binding, index) and the array's length; the layer says, at
read-back, whether the descriptor's resource is gone and which one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FALLBACK_ID = "GPUAV-descriptor-uninitialized"


@dataclass(frozen=True)
class RetiredResource:
    """The object whose destruction retired a descriptor, and the object the descriptor names
    when that is another (a view of a destroyed image, a buffer on freed memory)."""

    type_name: str  # VkImageView, VkSampler, VkBuffer, VkBufferView, VkImage, VkDeviceMemory
    handle: int
    name: str | None = None
    named_type_name: str = ""
    named: int = 0
    named_name: str | None = None

    @property
    def verb(self) -> str:
        return "freed" if self.type_name == "VkDeviceMemory" else "destroyed"


def message_id(command: str, descriptor_buffer: bool = False) -> str:
    """The action command's VUID (08116 for a descriptor in a descriptor buffer, which must be
    valid where dynamically used); a generic id off any known command."""
    if not command.startswith("vkCmd"):
        return FALLBACK_ID
    return f"VUID-{command}-None-{'08116' if descriptor_buffer else '08114'}"


def _object(type_name: str, handle: int, name: str | None) -> str:
    return f"{type_name} '{name}' (0x{handle:x})" if name else f"{type_name} (0x{handle:x})"


def unusable_text(index: int, length: int | None, retired: RetiredResource | None) -> str:
    """The message's first sentence."""
    subject = f"Descriptor index {index}"
    if length == 1 and index == 0:
        subject = "The descriptor"  # not an array
    elif length is not None:
        subject += f" used to index descriptor array of length {length}"
    if retired is None:
        return f"{subject} is uninitialized."
    gone = _object(retired.type_name, retired.handle, retired.name)
    if not retired.named:
        return f"{subject} names {gone}, which was {retired.verb}."
    named = _object(retired.named_type_name, retired.named, retired.named_name)
    return f"{subject} names {named}, whose {gone} was {retired.verb}."


def unusable_detail(retired: RetiredResource | None) -> str:
    """The line after the descriptor's: what was wrong with it, and what gpuav did."""
    if retired is None:
        return (
            "It was never written (vkUpdateDescriptorSets, a copy, an update template, or "
            "vkGetDescriptorEXT into a descriptor buffer) when the command buffer was "
            "submitted; the access was skipped."
        )
    return f"The {retired.type_name} was {retired.verb} before the submit; the access was skipped."


def unusable_fields(retired: RetiredResource | None) -> dict[str, Any]:
    """The JSON error object's facts: why the descriptor was not valid."""
    if retired is None:
        return {"reason": "unwritten"}
    fields: dict[str, Any] = {
        "reason": retired.verb,
        "object": {"type": retired.type_name, "handle": retired.handle, "name": retired.name},
    }
    if retired.named:
        fields["named"] = {
            "type": retired.named_type_name,
            "handle": retired.named,
            "name": retired.named_name,
        }
    return fields
