"""What a descriptor's resources hang on, so that destroying one retires the descriptors that
named it (VUID-...-None-08114: a descriptor whose resource is gone is not valid).

A descriptor names an image view, a sampler, a buffer or a buffer view. Those in turn hang on
their image or buffer, which hangs on its memory: destroying an image makes its views unusable,
freeing memory the images and buffers bound to it. ``ResourceLifetimes`` keeps that tree
(child -> parent) and the kind of each object it saw created, and tells, when one goes, which
objects went with it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

IMAGE = "image"
IMAGE_VIEW = "image view"
SAMPLER = "sampler"
BUFFER = "buffer"
BUFFER_VIEW = "buffer view"
MEMORY = "memory"
# The Vulkan type names messages use for each kind.
TYPE_NAMES = {
    IMAGE: "VkImage",
    IMAGE_VIEW: "VkImageView",
    SAMPLER: "VkSampler",
    BUFFER: "VkBuffer",
    BUFFER_VIEW: "VkBufferView",
    MEMORY: "VkDeviceMemory",
}


@dataclass(frozen=True)
class Retired:
    """Why a descriptor may no longer be used: ``handle`` (of ``kind``) was destroyed or
    freed; ``named`` is the object the descriptor names when that is another one (a view of
    a destroyed image), else 0."""

    kind: str
    handle: int
    named_kind: str = ""
    named: int = 0


@dataclass
class ResourceLifetimes:
    kinds: dict[int, str] = field(default_factory=dict)
    parents: dict[int, int] = field(default_factory=dict)
    children: dict[int, set[int]] = field(default_factory=dict)

    def created(self, handle: int, kind: str, parent: int = 0) -> None:
        """``handle`` exists now; ``parent`` is what it depends on (0: nothing known)."""
        self.kinds[handle] = kind
        self.attach(handle, parent)

    def attach(self, handle: int, parent: int) -> None:
        """``handle`` depends on ``parent`` now (memory bound to an image or buffer)."""
        if not handle or not parent:
            return
        previous = self.parents.get(handle)
        if previous is not None:
            self.children.get(previous, set()).discard(handle)
        self.parents[handle] = parent
        self.children.setdefault(parent, set()).add(handle)

    def kind_of(self, handle: int) -> str:
        return self.kinds.get(handle, "")

    def gone(self, handle: int, kind: str) -> list[tuple[int, Retired]]:
        """``handle`` was destroyed (or freed): it and every object depending on it, each
        with the reason, which names ``handle``. They are forgotten."""
        found: list[tuple[int, Retired]] = []
        pending = [handle]
        while pending:
            current = pending.pop()
            pending.extend(self.children.pop(current, ()))
            parent = self.parents.pop(current, None)
            if parent is not None and current == handle:
                self.children.get(parent, set()).discard(current)
            current_kind = self.kinds.pop(current, kind if current == handle else "")
            if current == handle:
                found.append((current, Retired(kind, handle)))
            else:
                found.append((current, Retired(kind, handle, current_kind, current)))
        return found
