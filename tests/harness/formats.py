"""Image formats the harness knows how to upload and read back as numpy arrays.

Only plain colour formats are listed: tests need to compare texels, so each entry says how a
texel maps to a numpy dtype and a channel count.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import vulkan as vkapi


@dataclass(frozen=True)
class FormatInfo:
    """How a Vulkan format's texels look to numpy."""

    name: str
    vk_format: int
    dtype: np.dtype[np.generic]
    channels: int

    @property
    def texel_size(self) -> int:
        return self.dtype.itemsize * self.channels


def _info(name: str, dtype: type[np.generic], channels: int) -> FormatInfo:
    return FormatInfo(name, getattr(vkapi, f"VK_FORMAT_{name}"), np.dtype(dtype), channels)


FORMATS: dict[str, FormatInfo] = {
    info.name: info
    for info in (
        _info("R8G8B8A8_UNORM", np.uint8, 4),
        _info("R8G8B8A8_UINT", np.uint8, 4),
        _info("B8G8R8A8_UNORM", np.uint8, 4),
        _info("R8_UNORM", np.uint8, 1),
        _info("R32_SFLOAT", np.float32, 1),
        _info("R32_UINT", np.uint32, 1),
        _info("R32_SINT", np.int32, 1),
        _info("R32G32_SFLOAT", np.float32, 2),
        _info("R32G32B32_SFLOAT", np.float32, 3),
        _info("R32G32B32A32_SFLOAT", np.float32, 4),
        _info("R32G32B32A32_UINT", np.uint32, 4),
        _info("R32G32B32A32_SINT", np.int32, 4),
        _info("R16G16B16A16_SFLOAT", np.float16, 4),
    )
}
_BY_VALUE = {info.vk_format: info for info in FORMATS.values()}


def format_info(fmt: str | int) -> FormatInfo:
    """Accept ``"R32_UINT"``, ``"VK_FORMAT_R32_UINT"`` or the enum value."""
    if isinstance(fmt, str):
        key = fmt.upper().removeprefix("VK_FORMAT_")
        if key not in FORMATS:
            raise KeyError(f"format {fmt!r} is not in the harness format table")
        return FORMATS[key]
    if fmt not in _BY_VALUE:
        raise KeyError(f"format {fmt} is not in the harness format table")
    return _BY_VALUE[fmt]
