"""The app's buffer views, for the texel count a texel buffer descriptor makes reachable."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache

import vulkan as vk

from gpuav.layer.buffers import BoundBuffer, BufferTable

_PACKED = re.compile(r"_(\d)?PACK(\d+)$")
_CHANNELS = re.compile(r"[RGBAX](\d+)")


def format_name(format_: int) -> str | None:
    """``R8G8B8A8_UNORM`` for VK_FORMAT_R8G8B8A8_UNORM; None for a value that is none."""
    return _FORMAT_NAMES.get(format_)


@cache
def texel_bytes(format_: int) -> int | None:
    """Bytes per texel of an uncompressed single-plane format (those texel buffers take),
    from its name: ``R32G32_SFLOAT`` 8, ``A2B10G10R10_UNORM_PACK32`` 4; None otherwise."""
    name = format_name(format_)
    if name is None or "PLANE" in name or "BLOCK" in name:
        return None
    packed = _PACKED.search(name)
    if packed:
        return int(packed.group(1) or 1) * int(packed.group(2)) // 8
    bits = sum(int(width) for width in _CHANNELS.findall(name.split("_")[0]))
    return bits // 8 if bits and bits % 8 == 0 else None


# VkFormat enumerants only (VK_FORMAT_FEATURE_* share the prefix, not the type). The package's
# namespace in its own order: dir() would sort its 7,000 names first.
_FORMAT_NAMES = {
    value: name.removeprefix("VK_FORMAT_")
    for name, value in vars(vk).items()
    if name.startswith("VK_FORMAT_")
    and not name.startswith("VK_FORMAT_FEATURE_")
    and isinstance(value, int)
}


@dataclass(frozen=True)
class BufferView:
    buffer: int
    format: int
    offset: int
    range: int


@dataclass(frozen=True)
class BoundTexels:
    """What a texel buffer descriptor was written with: a view of ``texel`` bytes per texel."""

    view: int
    bound: BoundBuffer
    texel: int


@dataclass
class BufferViewTable:
    live: dict[int, BufferView] = field(default_factory=dict)

    def create(self, handle: int, view: BufferView) -> None:
        self.live[handle] = view

    def destroy(self, handle: int) -> None:
        self.live.pop(handle, None)

    def bound(self, handle: int) -> BoundTexels | None:
        view = self.live.get(handle)
        texel = None if view is None else texel_bytes(view.format)
        if view is None or texel is None:
            return None
        return BoundTexels(handle, BoundBuffer(view.buffer, view.offset, view.range), texel)


def texel_count(buffers: BufferTable, texels: BoundTexels) -> int | None:
    available = buffers.effective_range(texels.bound)
    return None if available is None else available // texels.texel
