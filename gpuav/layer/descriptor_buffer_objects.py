"""What the descriptors in descriptor buffers name, and which of those objects are gone
(VK_EXT_descriptor_buffer, issue 16; VUID-vkCmd*-None-08116: a descriptor must be valid where
it is used, so one naming a destroyed buffer or image view, or a buffer on freed memory, may
not be).

Descriptor bytes are the driver's: a buffer descriptor is known by the address and range it
was got with, an image descriptor by the view. A buffer is found from its address range only
when it goes (descriptor addresses are kept sorted, so a destroy costs a search, not a scan);
a buffer bound where a gone one was, or a view made with a gone one's handle, makes the bytes
naming it usable again.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from dataclasses import dataclass, field

from gpuav.layer.buffers import BufferTable
from gpuav.layer.resource_lifetimes import ResourceLifetimes, Retired

# Past this many, descriptors are not remembered (what they name is then not checked).
MAX_REMEMBERED = 1 << 16


@dataclass
class DescribedObjects:
    buffers: BufferTable
    lifetimes: ResourceLifetimes
    addresses: list[tuple[int, bytes]] = field(default_factory=list)  # sorted by address
    addressed: set[bytes] = field(default_factory=set)
    views: dict[bytes, tuple[int, ...]] = field(default_factory=dict)  # bytes -> image views
    view_handles: set[int] = field(default_factory=set)
    gone_views: dict[int, Retired] = field(default_factory=dict)
    gone_bytes: dict[bytes, Retired] = field(default_factory=dict)  # buffer descriptors

    def note(self, contents: bytes, address: int, views: tuple[int, ...]) -> bool:
        """vkGetDescriptorEXT returned ``contents`` for a descriptor of a buffer at ``address``
        (0: none) or of these image views; True when that changes what the bytes name."""
        changed = self.gone_bytes.pop(contents, None) is not None
        if address and contents not in self.addressed and len(self.addressed) < MAX_REMEMBERED:
            self.addressed.add(contents)
            insort(self.addresses, (address, contents))
        if views and self.views.get(contents) != views and len(self.views) < MAX_REMEMBERED:
            self.views[contents] = views
            self.view_handles.update(views)
            changed = True
        return changed

    def gone(self, handle: int, kind: str) -> bool:
        """``handle`` is about to be destroyed or freed, with what hangs on it (a buffer on
        freed memory, a view of a destroyed image); True when some descriptor named one."""
        pending, affected = [handle], []
        while pending:
            current = pending.pop()
            affected.append(current)
            pending.extend(self.lifetimes.children.get(current, ()))
        changed = False
        for gone in affected:
            named = (self.lifetimes.kind_of(gone), gone) if gone != handle else ("", 0)
            reason = Retired(kind, handle, *named)
            if gone in self.view_handles:
                self.gone_views[gone] = reason
                changed = True
            for contents in self._within(gone):
                self.gone_bytes[contents] = reason
                changed = True
        return changed

    def made(self, handle: int) -> bool:
        """A buffer bound to memory, or an image view made; True when that makes descriptors
        usable again."""
        changed = self.gone_views.pop(handle, None) is not None
        for contents in self._within(handle):
            changed = self.gone_bytes.pop(contents, None) is not None or changed
        return changed

    def reason(self, contents: bytes) -> Retired | None:
        """Why the descriptor of these bytes names something gone; None when it does not."""
        found = self.gone_bytes.get(contents)
        if found is None:
            for view in self.views.get(contents, ()):
                found = self.gone_views.get(view) or found
        return found

    @property
    def any_gone(self) -> bool:
        return bool(self.gone_bytes or self.gone_views)

    def _within(self, buffer: int) -> list[bytes]:
        """The remembered buffer descriptors whose address lies in live ``buffer``."""
        facts = self.buffers.live.get(buffer)
        if facts is None or not facts.address or not self.addresses:
            return []
        start = bisect_left(self.addresses, (facts.address, b""))
        end = facts.address + facts.size
        found = []
        for index in range(start, len(self.addresses)):
            address, contents = self.addresses[index]
            if address >= end:
                break
            found.append(contents)
        return found
