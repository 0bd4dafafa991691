"""How the rows of one app command buffer's validation dispatch (``action_checks``) share out
into groups. A group binds one descriptor set, an array of up to ``WINDOW_SLOTS`` windows (the
indirect, count and index buffers its rows read), and each row names its slots. A renderer
that draws a hundred meshes, each with buffers of its own, so needs a few dispatches for each
output chunk its blocks lie in, not one per mesh.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuav.layer.action_check_parameters import WINDOW_SLOTS
from gpuav.layer.action_check_rows import Window

# An output chunk's buffer and bytes.
Chunk = tuple[int, int]
# What a row reads: its commands, count and indices windows (None: not read).
RowWindows = tuple[Window | None, Window | None, Window | None]


@dataclass(slots=True, eq=False)
class RowGroup:
    """Rows dispatched with one descriptor set: the windows in its slots, and the rows' words
    by the output chunk their blocks lie in and their workgroups per row (a dispatch each)."""

    windows: list[Window] = field(default_factory=list)
    rows: dict[tuple[Chunk, int], list[int]] = field(default_factory=dict)
    # Slots by window identity: each window lives in ``windows`` as long as the group does, so
    # its id is its own meanwhile.
    slots_of: dict[int, int] = field(default_factory=dict)

    def fits(self, windows: RowWindows) -> bool:
        """Whether the slots left hold what a row reads (a window read twice, a count in its
        commands' buffer, takes one). Runs per row placed: written out."""
        slots_of = self.slots_of
        new: list[int] = []
        for window in windows:
            if window is not None and id(window) not in slots_of and id(window) not in new:
                new.append(id(window))
        return len(self.windows) + len(new) <= WINDOW_SLOTS

    def slots(self, windows: RowWindows) -> list[int]:
        """The row's commands, count and indices slots (0 where it reads none), given where a
        window has none yet (``fits`` said there is room)."""
        found = [0, 0, 0]
        for at, window in enumerate(windows):
            if window is not None:
                slot = self.slots_of.get(id(window))
                if slot is None:
                    slot = self.slots_of[id(window)] = len(self.windows)
                    self.windows.append(window)
                found[at] = slot
        return found


@dataclass(slots=True)
class RowGroups:
    """One recording's groups, where each window went last, and what ``place`` gave each
    combination of windows, output chunk and workgroups per row (kept by their identities,
    ``action_checks._add_row``: the windows live in the groups, the chunks in the device)."""

    groups: list[RowGroup] = field(default_factory=list)
    homes: dict[int, RowGroup] = field(default_factory=dict)  # by window identity
    placed: dict[tuple[int, ...], tuple[list[int], list[int]]] = field(default_factory=dict)

    def place(self, windows: RowWindows, chunk: Chunk, columns: int) -> tuple[list[int], list[int]]:
        """The rows list of a group with room for the row, and its slots there."""
        group = self._group_for(windows)
        rows = group.rows.get((chunk, columns))
        if rows is None:
            rows = group.rows[chunk, columns] = []
        return rows, group.slots(windows)

    def _group_for(self, windows: RowWindows) -> RowGroup:
        """A group with room for the row: the one its first window went to, else the newest,
        else a new one."""
        commands, count, indices = windows
        first = commands if commands is not None else count if count is not None else indices
        home = None if first is None else self.homes.get(id(first))
        if home is not None and home.fits(windows):
            return home
        groups = self.groups
        if groups and groups[-1] is not home and groups[-1].fits(windows):
            home = groups[-1]
        else:
            home = RowGroup()
            groups.append(home)
        for window in windows:
            if window is not None:
                self.homes[id(window)] = home
        return home
