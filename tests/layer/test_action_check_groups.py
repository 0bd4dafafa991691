"""How the rows of a validation dispatch share out into groups of WINDOW_SLOTS windows
(``action_check_groups``): a row goes where its windows already are, a window read twice
takes one slot, and a row that no longer fits starts a group."""

from __future__ import annotations

from gpuav.layer.action_check_groups import RowGroup, RowGroups
from gpuav.layer.action_check_parameters import WINDOW_SLOTS
from gpuav.layer.action_check_rows import Window

CHUNK = (1, 4096)


def _windows(count: int) -> list[Window]:
    return [Window(buffer, 0, 256) for buffer in range(1, count + 1)]


def test_a_window_read_twice_takes_one_slot() -> None:
    group = RowGroup()
    filled = _windows(WINDOW_SLOTS - 1)
    for window in filled:
        group.slots((None, None, window))
    shared = Window(99, 0, 256)
    assert group.fits((shared, shared, None))
    assert not group.fits((shared, Window(100, 0, 256), None))
    assert group.slots((shared, shared, None)) == [WINDOW_SLOTS - 1, WINDOW_SLOTS - 1, 0]


def test_rows_go_where_their_windows_are_until_a_group_is_full() -> None:
    groups = RowGroups()
    meshes = _windows(WINDOW_SLOTS + 5)
    places = [groups.place((None, None, window), CHUNK, 1) for window in meshes]
    assert len(groups.groups) == 2
    first, second = groups.groups
    assert [w.buffer for w in first.windows] == list(range(1, WINDOW_SLOTS + 1))
    assert [slots for _, slots in places[:3]] == [[0, 0, 0], [0, 0, 1], [0, 0, 2]]
    assert places[WINDOW_SLOTS][1] == [0, 0, 0]  # the first of the second group
    # A mesh drawn again is placed with its window, in the group that holds it.
    rows, slots = groups.place((None, None, meshes[3]), CHUNK, 1)
    assert rows is first.rows[CHUNK, 1] and slots == [0, 0, 3]
    rows, slots = groups.place((None, None, meshes[-1]), CHUNK, 1)
    assert rows is second.rows[CHUNK, 1] and slots == [0, 0, 4]
