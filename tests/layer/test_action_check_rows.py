"""The rows of the indirect and vertex-fetch checks (``gpuav.layer.action_check_rows``): kept
per bound state only while the buffers keep their sizes, windows that bind whole buffers so
that actions share a dispatch, and the words a bound state gives its draws."""

from __future__ import annotations

from gpuav.instrument.record import ErrorCode
from gpuav.layer import action_check_parameters as P
from gpuav.layer.action_check_rows import (
    ActionRows,
    BoundIndexBuffer,
    DeviceLimits,
    Fetch,
    IndirectRow,
    RowCache,
    Window,
    compute_fetch,
    draw_indexed_rows,
    draw_rows,
    indirect_row,
    window,
)
from gpuav.layer.buffers import BufferTable
from gpuav.layer.vertex_input import Attribute, BoundVertexBuffer, VertexInput

R32G32_SFLOAT = 103
LIMITS = DeviceLimits(
    compute_groups=(65535, 65535, 65535),
    task_groups=(1, 1, 1, 1),
    mesh_groups=(1, 1, 1, 1),
    max_draw_indirect_count=1 << 20,
    first_instance=False,
    storage_alignment=16,
    max_storage_range=1 << 16,
)
VERTEX_INPUT = VertexInput({0: 8}, frozenset(), (Attribute(0, 0, R32G32_SFLOAT, 0, 8),))
VERTEX_BUFFER, INDEX_BUFFER, INDIRECT_BUFFER = 0x100, 0x200, 0x300


def _fetch(sizes: dict[int, int], index_offset: int = 0) -> Fetch:
    return compute_fetch(
        LIMITS,
        VERTEX_INPUT,
        {0: BoundVertexBuffer(VERTEX_BUFFER, 0)},
        BoundIndexBuffer(INDEX_BUFFER, index_offset, 1),  # VK_INDEX_TYPE_UINT32
        sizes.get,
    )


def test_a_window_binds_the_whole_buffer_where_it_fits_so_offsets_share_it() -> None:
    assert window(LIMITS, INDIRECT_BUFFER, 0, 4096) == (Window(INDIRECT_BUFFER, 0, 4096), 0)
    assert window(LIMITS, INDIRECT_BUFFER, 2000, 4096) == (Window(INDIRECT_BUFFER, 0, 4096), 500)
    # Past maxStorageBufferRange the window starts at the aligned offset.
    big = (1 << 16) + 64
    assert window(LIMITS, INDIRECT_BUFFER, 1000, big) == (
        Window(INDIRECT_BUFFER, 992, big - 992),
        2,
    )


def test_a_bound_state_gives_its_draws_capacities_and_the_index_window() -> None:
    fetch = _fetch({VERTEX_BUFFER: 24, INDEX_BUFFER: 40}, index_offset=8)
    assert fetch.row[P.P_VERTEX_CAPACITY] == 3
    assert fetch.row[P.P_INSTANCE_CAPACITY] == P.UNLIMITED
    assert fetch.row[P.P_INDEX_CAPACITY] == 8
    assert fetch.row[P.P_INDEX_FIRST_ELEMENT] == 2
    assert fetch.indices == Window(INDEX_BUFFER, 0, 40)
    assert fetch.facts.index_capacity == 8


def test_indexed_indirect_rows_scan_indices_and_plain_indirect_rows_do_not() -> None:
    sizes = {VERTEX_BUFFER: 24, INDEX_BUFFER: 40, INDIRECT_BUFFER: 40}
    indexed = indirect_row(LIMITS, _fetch(sizes), P.KIND_DRAW_INDEXED, INDIRECT_BUFFER, 20, 1, 20,
                           0, 0, None, sizes.get)  # fmt: skip
    assert indexed is not None
    assert indexed.row[P.P_GROUPS] == P.SCAN_WORKGROUPS
    assert indexed.row[P.P_FLAGS] & P.FLAG_SCAN_INDICES
    assert indexed.row[P.P_FLAGS] & P.FLAG_FIRST_INSTANCE
    assert (indexed.row[P.P_FIRST_WORD], indexed.row[P.P_DRAWS_IN_BUFFER]) == (5, 1)
    groups = indirect_row(LIMITS, None, P.KIND_GROUPS, INDIRECT_BUFFER, 0, 1, 0, 0, 0, None,
                          sizes.get)  # fmt: skip
    assert groups is not None
    assert groups.row[P.P_GROUPS] == 1
    assert groups.indices is None
    assert groups.row[P.P_LIMIT_X : P.P_LIMIT_TOTAL + 1] == (65535, 65535, 65535, P.UNLIMITED)
    unknown = indirect_row(LIMITS, None, P.KIND_GROUPS, 0x999, 0, 1, 0, 0, 0, None, sizes.get)
    assert unknown is None


def test_kept_fetches_are_used_again_only_while_their_buffers_keep_their_sizes() -> None:
    cache = RowCache()
    sizes = {VERTEX_BUFFER: 24, INDEX_BUFFER: 40}
    made: list[Fetch] = []

    def compute() -> Fetch:
        made.append(_fetch(sizes))
        return made[-1]

    key = ("pipeline", "bound state")
    buffers = [VERTEX_BUFFER, INDEX_BUFFER]
    assert cache.kept_fetch(key, 0) is None
    first = cache.fetch(key, 0, buffers, sizes.get, compute)
    assert cache.kept_fetch(key, 0) is first  # no buffer made or destroyed since
    # Another buffer made: the sizes are looked at again, and they did not change.
    assert cache.kept_fetch(key, 1) is None
    assert cache.fetch(key, 1, buffers, sizes.get, compute) is first
    assert cache.kept_fetch(key, 1) is first
    assert len(made) == 1
    # The vertex buffer destroyed and made again, larger, under the same handle.
    sizes[VERTEX_BUFFER] = 80
    assert cache.kept_fetch(key, 3) is None
    again = cache.fetch(key, 3, buffers, sizes.get, compute)
    assert len(made) == 2
    assert (first.row[P.P_VERTEX_CAPACITY], again.row[P.P_VERTEX_CAPACITY]) == (3, 10)
    cache.clear()
    cache.fetch(key, 3, buffers, sizes.get, compute)
    assert len(made) == 3


def test_a_buffer_made_or_destroyed_moves_the_generation_kept_fetches_are_trusted_at() -> None:
    table = BufferTable()
    before = table.generation
    table.create(VERTEX_BUFFER, 24, 0)
    made = table.generation
    table.destroy(VERTEX_BUFFER)
    table.create(VERTEX_BUFFER, 80, 0)  # the same handle, larger
    assert before < made < table.generation
    assert table.size_of(VERTEX_BUFFER) == 80


def test_direct_indexed_draws_scan_on_the_gpu_and_report_their_index_range_here() -> None:
    fetch = _fetch({VERTEX_BUFFER: 24, INDEX_BUFFER: 40})
    [(scan, indices)] = draw_indexed_rows(fetch, 10, 1, 0, -1, 0)
    assert indices == fetch.indices
    assert scan[P.P_KIND] == P.KIND_DIRECT_INDEXED
    assert scan[P.P_GROUPS] == 1  # 10 readable indices: one workgroup
    assert scan[P.P_DIRECT_VERTEX_OFFSET] == 0xFFFF_FFFF
    (report, none), (scan, _) = draw_indexed_rows(fetch, 100, 1, 4, 0, 0)
    assert none is None
    assert report[P.P_KIND] == P.KIND_REPORT
    assert report[P.P_REPORT_CODE] == ErrorCode.INDEX_RANGE
    assert report[P.P_REPORT_WORDS : P.P_REPORT_WORDS + 4] == (0, 4, 100, 10)
    assert scan[P.P_DIRECT_FIRST_INDEX] == 4


def test_direct_draws_inside_the_vertex_buffers_need_no_row() -> None:
    fetch = _fetch({VERTEX_BUFFER: 24, INDEX_BUFFER: 40})
    assert draw_rows(fetch, 3, 1, 0, 0) == ()
    [(report, _)] = draw_rows(fetch, 3, 1, 1, 0)
    assert report[P.P_REPORT_WORDS : P.P_REPORT_WORDS + 5] == (0, 1, 3, 3, 0)
    # Kept by their parameters in the fetch's state.
    made: list[ActionRows] = []

    def compute() -> ActionRows:
        made.append(draw_rows(fetch, 3, 1, 1, 0))
        return made[-1]

    for _ in range(3):
        assert RowCache.direct_rows(fetch, (0, 3, 1, 1, 0), compute) == made[0]
    assert len(made) == 1


def test_an_indirect_row_kept_for_one_fetch_is_not_used_for_a_fetch_computed_anew() -> None:
    """Fetches are keyed by identity: one computed again after a buffer changed size is another
    key even where it holds the same numbers, and a kept key keeps its fetch alive."""
    cache = RowCache()
    sizes = {VERTEX_BUFFER: 24, INDEX_BUFFER: 40, INDIRECT_BUFFER: 40}
    made: list[IndirectRow | None] = []

    def row_for(fetch: Fetch) -> IndirectRow | None:
        def compute() -> IndirectRow | None:
            made.append(indirect_row(LIMITS, fetch, P.KIND_DRAW_INDEXED, INDIRECT_BUFFER, 0, 1,
                                     20, 0, 0, None, sizes.get))  # fmt: skip
            return made[-1]

        key = (P.KIND_DRAW_INDEXED, INDIRECT_BUFFER, 0, 1, 20, 0, 0, None, fetch)
        return cache.indirect_row(key, (INDIRECT_BUFFER, 0), sizes.get, compute)

    first, again = _fetch(sizes), _fetch(sizes)
    assert row_for(first) is row_for(first)
    assert len(made) == 1
    row_for(again)
    assert len(made) == 2
