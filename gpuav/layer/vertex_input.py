"""How many vertices and instances the bound vertex buffers hold for a pipeline's attributes.

A graphics pipeline's vertex input state (bindings with stride and input rate, attributes with
binding, format and offset) and the buffers bound with vkCmdBindVertexBuffers(2) decide how far
a draw may fetch (VUID-vkCmdDraw-None-02721 and its siblings): an attribute at ``offset`` of
``size`` bytes, in a binding of ``stride`` with ``available`` bytes from the bound offset, can
be fetched for vertices (or instances) ``0 .. (available - offset - size) // stride``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import vulkan as vk

UNLIMITED = 0xFFFF_FFFF
WHOLE_SIZE = 0xFFFF_FFFF_FFFF_FFFF
INPUT_RATE_INSTANCE = 1

_PACKED = re.compile(r"_PACK(8|16|32)$")
_COMPONENT_BITS = re.compile(r"[RGBAXDS](\d+)")


@cache
def format_bytes() -> dict[int, int]:
    """Bytes of one element of each uncompressed, single-plane VkFormat, from the names the
    ``vulkan`` package defines (``R32G32_SFLOAT``: 8; ``A2B10G10R10_UNORM_PACK32``: 4)."""
    sizes: dict[int, int] = {}
    for name, value in vars(vk).items():
        if not name.startswith("VK_FORMAT_") or "BLOCK" in name or "PLANE" in name:
            continue
        if not isinstance(value, int) or value <= 0:
            continue
        body = name.removeprefix("VK_FORMAT_").split("_")[0]
        packed = _PACKED.search(name.removesuffix("_KHR").removesuffix("_EXT"))
        if packed:
            sizes[value] = int(packed.group(1)) // 8
            continue
        bits = [int(b) for b in _COMPONENT_BITS.findall(body)]
        if bits and sum(bits) % 8 == 0:
            sizes[value] = sum(bits) // 8
    return sizes


@dataclass(frozen=True)
class Attribute:
    location: int
    binding: int
    format: int
    offset: int
    size: int  # bytes fetched (0: a format gpuav does not know)


@dataclass(frozen=True)
class VertexInput:
    """A pipeline's vertex input state; ``dynamic``: set by commands gpuav does not track
    (VK_DYNAMIC_STATE_VERTEX_INPUT_EXT), so no capacity is computed."""

    strides: dict[int, int]
    instance_rate: frozenset[int]  # bindings of VK_VERTEX_INPUT_RATE_INSTANCE
    attributes: tuple[Attribute, ...]
    primitive_restart: bool = False
    dynamic_stride: bool = False
    dynamic: bool = False


@dataclass(frozen=True)
class BoundVertexBuffer:
    buffer: int
    offset: int
    size: int = WHOLE_SIZE  # vkCmdBindVertexBuffers2's pSizes
    stride: int | None = None  # vkCmdBindVertexBuffers2's pStrides (dynamic stride)


@dataclass(frozen=True)
class Limit:
    """The attribute that allows the fewest vertices (or instances), and through which buffer."""

    capacity: int
    attribute: Attribute
    bound: BoundVertexBuffer
    available: int
    stride: int


def _capacity(attribute: Attribute, available: int, stride: int) -> int:
    end = attribute.offset + attribute.size
    if available < end:
        return 0
    if stride == 0:
        return UNLIMITED
    return min((available - end) // stride + 1, UNLIMITED)


def limits(
    vertex_input: VertexInput,
    bound: dict[int, BoundVertexBuffer],
    size_of: Callable[[int], int | None],
) -> tuple[Limit | None, Limit | None]:
    """(per-vertex limit, per-instance limit); None where nothing limits, or where gpuav
    cannot tell (an unknown format or buffer, a binding with nothing bound)."""
    found: list[Limit | None] = [None, None]
    if vertex_input.dynamic:
        return None, None
    for attribute in vertex_input.attributes:
        buffer = bound.get(attribute.binding)
        size = None if buffer is None else size_of(buffer.buffer)
        if buffer is None or size is None or not attribute.size:
            continue
        stride = vertex_input.strides.get(attribute.binding, 0)
        if buffer.stride is not None:
            stride = buffer.stride
        elif vertex_input.dynamic_stride:
            continue
        available = max(size - buffer.offset, 0)
        if buffer.size != WHOLE_SIZE:
            available = min(available, buffer.size)
        capacity = _capacity(attribute, available, stride)
        rate = 1 if attribute.binding in vertex_input.instance_rate else 0
        current = found[rate]
        if capacity < UNLIMITED and (current is None or capacity < current.capacity):
            found[rate] = Limit(capacity, attribute, buffer, available, stride)
    return found[0], found[1]
