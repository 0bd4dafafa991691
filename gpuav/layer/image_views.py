"""The app's images, image views and samplers, for the fact bits of the descriptors that name
them (``gpuav.instrument.image_facts``): which view type, format class, sample count and
component width a shader finds at the index it uses, and whether a sampler has unnormalized
coordinates. Messages about a descriptor that does not fit its access describe its objects
from here too."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuav.instrument import image_facts
from gpuav.instrument.descriptor_state import ACCESSIBLE
from gpuav.layer.buffer_views import format_name
from gpuav.layer.resource_lifetimes import IMAGE, IMAGE_VIEW, SAMPLER

ASPECT_STENCIL = 0x4
REMAINING = 0xFFFF_FFFF  # VK_REMAINING_MIP_LEVELS, VK_REMAINING_ARRAY_LAYERS
_SAMPLE_COUNT_NAMES = {1 << k: f"VK_SAMPLE_COUNT_{1 << k}_BIT" for k in range(7)}
_ONE_LEVEL_VIEW_TYPES = (0, 1)  # 1D and 2D: what an unnormalized sampler may sample


@dataclass(frozen=True)
class ImageInfo:
    format: int
    samples: int
    levels: int
    layers: int


@dataclass(frozen=True)
class ViewInfo:
    image: int
    view_type: int
    format: int
    aspect: int
    levels: int  # VK_REMAINING_MIP_LEVELS stays as given
    layers: int


def numeric_class(format_: int, aspect: int) -> int:
    """FLOAT, SINT or UINT of a format seen through ``aspect`` (0: unknown format)."""
    name = format_name(format_)
    if name is None:
        return 0
    if aspect & ASPECT_STENCIL and name.endswith("S8_UINT"):
        return image_facts.UINT
    if name.startswith("D") and name[1].isdigit():
        return image_facts.FLOAT  # the depth aspect of a depth or depth/stencil format
    if "_UINT" in name:
        return image_facts.UINT
    if "_SINT" in name:
        return image_facts.SINT
    return image_facts.FLOAT


def _wide(format_: int) -> bool | None:
    name = format_name(format_)
    return None if name is None else "64" in name.split("_")[0]


@dataclass
class ImageTable:
    images: dict[int, ImageInfo] = field(default_factory=dict)
    views: dict[int, ViewInfo] = field(default_factory=dict)
    unnormalized: set[int] = field(default_factory=set)  # samplers

    def create_image(self, handle: int, image: ImageInfo) -> None:
        self.images[handle] = image

    def create_view(self, handle: int, view: ViewInfo) -> None:
        self.views[handle] = view

    def create_sampler(self, handle: int, unnormalized: bool) -> None:
        if unnormalized:
            self.unnormalized.add(handle)

    def forget(self, kind: str, handle: int) -> None:
        """``handle`` (of a resource_lifetimes kind) was destroyed."""
        if kind == IMAGE:
            self.images.pop(handle, None)
        elif kind == IMAGE_VIEW:
            self.views.pop(handle, None)
        elif kind == SAMPLER:
            self.unnormalized.discard(handle)

    def word(self, named: tuple[tuple[str, int], ...]) -> int:
        """The state word of an image, sampler or combined descriptor naming ``named``."""
        word = ACCESSIBLE
        view_handle = next((h for kind, h in named if kind == IMAGE_VIEW), 0)
        view = self.views.get(view_handle)
        if view is not None:
            image = self.images.get(view.image)
            samples = None if image is None else image.samples
            word = image_facts.view_word(
                view.view_type,
                numeric_class(view.format, view.aspect),
                samples,
                _wide(view.format),
            )
        if any(kind == SAMPLER and h in self.unnormalized for kind, h in named):
            word |= image_facts.UNNORMALIZED
            if view is not None and not self._unnormalized_fits(view):
                word |= image_facts.UNNORMALIZED_VIEW
        return word

    def _unnormalized_fits(self, view: ViewInfo) -> bool:
        """Whether an unnormalized sampler may sample ``view``: 1D or 2D, one level, one
        layer (VUID-...-None-08609, -unnormalizedCoordinates-09635)."""
        image = self.images.get(view.image)
        levels, layers = view.levels, view.layers
        if image is not None:
            levels = image.levels if levels == REMAINING else levels
            layers = image.layers if layers == REMAINING else layers
        return view.view_type in _ONE_LEVEL_VIEW_TYPES and levels == 1 and layers == 1

    def describe_view(self, handle: int) -> str | None:
        """``VK_IMAGE_VIEW_TYPE_2D, VK_FORMAT_R8G8B8A8_UINT, of an image with
        VK_SAMPLE_COUNT_4_BIT``, or None for a view the table does not know."""
        view = self.views.get(handle)
        if view is None:
            return None
        parts = [
            image_facts.VIEW_TYPE_NAMES[view.view_type]
            if 0 <= view.view_type < image_facts.VIEW_TYPE_COUNT
            else f"view type {view.view_type}",
            f"VK_FORMAT_{format_name(view.format) or view.format}",
        ]
        image = self.images.get(view.image)
        if image is not None:
            samples = _SAMPLE_COUNT_NAMES.get(image.samples, str(image.samples))
            parts.append(f"of an image with {samples}")
        return ", ".join(parts)
