"""What a checked action needs from the state its command buffer has bound: the facts its
messages name (``FetchFacts``), the windows its check binds, and the words of its row in the
validation dispatch (``action_check_parameters``). Renderers record the same draws over the
same buffers every frame, so these are computed once per distinct state and kept per device
(``RowCache``); recording a draw then costs a few dictionary look-ups and a row copy.

A kept entry is used again only while the buffers it was computed from have the sizes they had
(a buffer destroyed and made again under the same handle is computed anew where its size
differs, and where it does not, every number is the same); destroying a pipeline drops every
entry, since its handle may come back with another vertex input.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gpuav.instrument.record import ErrorCode
from gpuav.layer import action_check_parameters as P
from gpuav.layer.vertex_input import BoundVertexBuffer, Limit, VertexInput, limits

WHOLE_SIZE = 0xFFFF_FFFF_FFFF_FFFF
INDEX_TYPE_UINT16 = 0
INDEX_TYPE_UINT32 = 1
INDEX_TYPE_UINT8 = 1000265000
INDEX_BYTES = {INDEX_TYPE_UINT16: 2, INDEX_TYPE_UINT32: 4, INDEX_TYPE_UINT8: 1}
DRAW_COMMAND_BYTES = 16  # VkDrawIndirectCommand
DRAW_INDEXED_COMMAND_BYTES = 20  # VkDrawIndexedIndirectCommand
GROUPS_COMMAND_BYTES = 12  # VkDispatchIndirectCommand, VkDrawMeshTasksIndirectCommandEXT
COMMAND_BYTES = {
    P.KIND_GROUPS: GROUPS_COMMAND_BYTES,
    P.KIND_DRAW: DRAW_COMMAND_BYTES,
    P.KIND_DRAW_INDEXED: DRAW_INDEXED_COMMAND_BYTES,
}
# Entries kept per device (and direct draws per fetch) before all are dropped (an app that
# never draws the same twice).
MAX_ENTRIES = 4096


@dataclass(frozen=True)
class DeviceLimits:
    """What the checks compare with: the device's limits and the features the app enabled."""

    compute_groups: tuple[int, int, int]
    task_groups: tuple[int, int, int, int]  # x, y, z, total
    mesh_groups: tuple[int, int, int, int]
    max_draw_indirect_count: int
    first_instance: bool  # drawIndirectFirstInstance enabled
    storage_alignment: int
    max_storage_range: int


@dataclass(frozen=True, slots=True)
class Window:
    """A storage-buffer view of app memory, bound from ``offset`` for ``range`` bytes: the
    whole buffer where it fits in maxStorageBufferRange, so that every action reading the
    buffer shares one binding."""

    buffer: int
    offset: int
    range: int


@dataclass(frozen=True)
class BoundIndexBuffer:
    buffer: int
    offset: int
    index_type: int
    size: int = WHOLE_SIZE  # vkCmdBindIndexBuffer2's size


@dataclass(frozen=True)
class FetchFacts:
    """What bounds a draw's fetches, for its messages."""

    vertex: Limit | None
    instance: Limit | None
    index: BoundIndexBuffer | None
    index_capacity: int | None
    indirect: Window | None = None
    indirect_offset: int = 0  # as the app gave it
    group_kind: str = "compute"  # which limits a group-count check used: compute, task, mesh


# The rows of one action (but their block words), each with the index window it binds.
ActionRows = tuple[tuple[tuple[int, ...], "Window | None"], ...]


@dataclass(frozen=True, slots=True, eq=False)
class Fetch:
    """A draw's facts in one bound state, its index window, the row words every draw there
    shares (capacities, the bound offset's index element, index type and restart flags), and
    the rows of the direct draws recorded in it, by their parameters. Compared and hashed by
    identity: a key that holds one keeps it, and tells it from a fetch computed anew."""

    facts: FetchFacts
    indices: Window | None
    row: tuple[int, ...]
    draws: dict[tuple[int, ...], ActionRows] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class IndirectRow:
    """One indirect action's row (but its block word), the windows it binds, its facts."""

    row: tuple[int, ...]
    commands: Window
    count: Window | None
    indices: Window | None
    facts: FetchFacts


SizeOf = Callable[[int], int | None]


def window(limits_: DeviceLimits, buffer: int, offset: int, size: int) -> tuple[Window, int]:
    """The window that reads ``offset`` of the buffer, and that byte's word in it."""
    start = 0
    if size > limits_.max_storage_range:
        alignment = max(limits_.storage_alignment, 4)
        start = offset // alignment * alignment
    reach = min(size - start, limits_.max_storage_range) // 4 * 4
    return Window(buffer, start, max(reach, 4)), (offset - start) // 4


def commands_in(size: int, offset: int, stride: int, command_bytes: int, window_: Window) -> int:
    """Commands that lie wholly inside the buffer (and the window)."""
    end = min(size, window_.offset + window_.range)
    if end < offset + command_bytes:
        return 0
    if stride == 0:
        return P.UNLIMITED
    return min((end - offset - command_bytes) // stride + 1, P.UNLIMITED)


def report_row(code: ErrorCode, *values: int) -> tuple[int, ...]:
    """A row that writes a record the host found (``KIND_REPORT``)."""
    row = [0] * P.PARAMETER_WORDS
    row[P.P_KIND] = P.KIND_REPORT
    row[P.P_REPORT_CODE] = int(code)
    row[P.P_GROUPS] = 1
    padded = (*values, 0, 0, 0, 0, 0, 0)[:6]
    row[P.P_REPORT_WORDS : P.P_REPORT_WORDS + 6] = [v & 0xFFFF_FFFF for v in padded]
    return tuple(row)


def _past(first: int, count: int, capacity: int) -> bool:
    return count > 0 and first + count > capacity


def draw_rows(
    fetch: Fetch,
    vertex_count: int,
    instance_count: int,
    first_vertex: int,
    first_instance: int,
    draw: int = 0,
) -> ActionRows:
    """vkCmdDraw's vertices and instances against the vertex buffers, checked here: a row
    for each that reaches past them (``draw``: which of a multi-draw's draws)."""
    rows: list[tuple[tuple[int, ...], Window | None]] = []
    vertex, instance = fetch.facts.vertex, fetch.facts.instance
    if vertex is not None and _past(first_vertex, vertex_count, vertex.capacity):
        rows.append((report_row(ErrorCode.VERTEX_RANGE, draw, first_vertex, vertex_count,
                                vertex.capacity, 0), None))  # fmt: skip
    if instance is not None and _past(first_instance, instance_count, instance.capacity):
        rows.append((report_row(ErrorCode.VERTEX_RANGE, draw, first_instance, instance_count,
                                instance.capacity, 1), None))  # fmt: skip
    return tuple(rows)


def draw_indexed_rows(
    fetch: Fetch,
    index_count: int,
    instance_count: int,
    first_index: int,
    vertex_offset: int,
    first_instance: int,
    draw: int = 0,
) -> ActionRows:
    """vkCmdDrawIndexed's index range and instances, checked here (a row for each that
    fails), and a row that scans its index values on the GPU (``draw``: which of a
    multi-draw's draws)."""
    facts = fetch.facts
    rows: list[tuple[tuple[int, ...], Window | None]] = []
    capacity = facts.index_capacity
    if capacity is not None and _past(first_index, index_count, capacity):
        rows.append((report_row(ErrorCode.INDEX_RANGE, draw, first_index, index_count,
                                capacity), None))  # fmt: skip
    instance = facts.instance
    if instance is not None and _past(first_instance, instance_count, instance.capacity):
        rows.append((report_row(ErrorCode.VERTEX_RANGE, draw, first_instance, instance_count,
                                instance.capacity, 1), None))  # fmt: skip
    readable = max(min(index_count, (capacity or 0) - first_index), 0)
    groups = min(P.SCAN_WORKGROUPS, -(-readable // P.WORKGROUP_SIZE))
    if facts.vertex is not None and fetch.indices is not None and groups:
        row = list(fetch.row)
        row[P.P_KIND] = P.KIND_DIRECT_INDEXED
        row[P.P_GROUPS] = groups
        row[P.P_DIRECT_FIRST_INDEX] = first_index
        row[P.P_DIRECT_INDEX_COUNT] = index_count
        row[P.P_DIRECT_VERTEX_OFFSET] = vertex_offset & 0xFFFF_FFFF
        rows.append((tuple(row), fetch.indices))
    return tuple(rows)


def compute_fetch(
    limits_: DeviceLimits,
    vertex_input: VertexInput | None,
    vertex_buffers: dict[int, BoundVertexBuffer],
    index: BoundIndexBuffer | None,
    size_of: SizeOf,
) -> Fetch:
    """``index``: the bound index buffer of an indexed draw (None for the others)."""
    vertex = instance = None
    if vertex_input is not None:
        vertex, instance = limits(vertex_input, vertex_buffers, size_of)
    capacity = None
    size = None if index is None else size_of(index.buffer)
    if index is not None and size is not None and index.index_type in INDEX_BYTES:
        available = max(size - index.offset, 0)
        if index.size != WHOLE_SIZE:
            available = min(available, index.size)
        capacity = available // INDEX_BYTES[index.index_type]
    row = [0] * P.PARAMETER_WORDS
    row[P.P_VERTEX_CAPACITY] = P.UNLIMITED if vertex is None else vertex.capacity
    row[P.P_INSTANCE_CAPACITY] = P.UNLIMITED if instance is None else instance.capacity
    row[P.P_INDEX_CAPACITY] = P.UNLIMITED if capacity is None else min(capacity, P.UNLIMITED)
    indices = None
    if index is not None and size is not None and capacity:
        indices, _ = window(limits_, index.buffer, index.offset, size)
        element_bytes = INDEX_BYTES[index.index_type]
        row[P.P_INDEX_FIRST_ELEMENT] = (index.offset - indices.offset) // element_bytes
        flags = {2: P.FLAG_INDEX16, 1: P.FLAG_INDEX8}.get(element_bytes, 0)
        if vertex_input is not None and vertex_input.primitive_restart:
            flags |= P.FLAG_RESTART
        row[P.P_FLAGS] = flags
    return Fetch(FetchFacts(vertex, instance, index, capacity), indices, tuple(row))


def indirect_row(
    limits_: DeviceLimits,
    fetch: Fetch | None,
    kind: int,
    buffer: int,
    offset: int,
    draw_count: int,
    stride: int,
    count_buffer: int,
    count_offset: int,
    task: bool | None,
    size_of: SizeOf,
) -> IndirectRow | None:
    """The row of an indirect draw, dispatch or mesh-task draw (``fetch``: the bound state of
    a draw; ``task``: whether a task shader runs); None where a buffer is not known."""
    size = size_of(buffer)
    count_size = size_of(count_buffer) if count_buffer else 0
    if size is None or count_size is None:
        return None
    command_bytes = COMMAND_BYTES[kind]
    if draw_count <= 1:
        stride = command_bytes
    commands, first_word = window(limits_, buffer, offset, size)
    row = [0] * P.PARAMETER_WORDS if fetch is None else list(fetch.row)
    row[P.P_KIND] = kind
    row[P.P_GROUPS] = 1
    row[P.P_FIRST_WORD] = first_word
    row[P.P_STRIDE_WORDS] = stride // 4
    row[P.P_DRAW_COUNT] = draw_count
    row[P.P_DRAWS_IN_BUFFER] = commands_in(size, offset, stride, command_bytes, commands)
    row[P.P_MAX_DRAW_INDIRECT_COUNT] = limits_.max_draw_indirect_count
    count = None
    if count_buffer:
        count, row[P.P_COUNT_WORD] = window(limits_, count_buffer, count_offset, count_size)
        row[P.P_FLAGS] |= P.FLAG_COUNT_BUFFER
    if fetch is None:
        x, y, z, total = (
            (*limits_.compute_groups, P.UNLIMITED)
            if task is None
            else limits_.task_groups
            if task
            else limits_.mesh_groups
        )
        row[P.P_LIMIT_X : P.P_LIMIT_TOTAL + 1] = [x, y, z, total]
        kind_name = "compute" if task is None else "task" if task else "mesh"
        facts = FetchFacts(None, None, None, None, commands, offset, kind_name)
        return IndirectRow(tuple(row), commands, count, None, facts)
    if not limits_.first_instance:
        row[P.P_FLAGS] |= P.FLAG_FIRST_INSTANCE
    known = fetch.facts
    facts = FetchFacts(
        known.vertex, known.instance, known.index, known.index_capacity, commands, offset
    )
    indices = fetch.indices  # None but for indexed draws
    if indices is not None and known.vertex is not None:
        row[P.P_FLAGS] |= P.FLAG_SCAN_INDICES
        row[P.P_GROUPS] = P.SCAN_WORKGROUPS
    return IndirectRow(tuple(row), commands, count, indices, facts)


@dataclass
class RowCache:
    """Per device: fetches by bound state and indirect rows by their parameters, each with
    the sizes of the buffers it was computed from."""

    # key -> (the buffer table's generation when last found valid, sizes, fetch)
    fetches: dict[object, tuple[int, tuple[int | None, ...], Fetch]] = field(default_factory=dict)
    indirect: dict[object, tuple[tuple[int | None, ...], IndirectRow | None]] = field(
        default_factory=dict
    )

    def kept_fetch(self, key: object, generation: int) -> Fetch | None:
        """The fetch kept for ``key`` while no buffer was made or destroyed since it was last
        found valid (``generation``: ``BufferTable.generation``): no size is looked up."""
        kept = self.fetches.get(key)
        return kept[2] if kept is not None and kept[0] == generation else None

    def fetch(
        self,
        key: object,
        generation: int,
        buffers: list[int],
        size_of: SizeOf,
        compute: Callable[[], Fetch],
    ) -> Fetch:
        sizes = tuple(map(size_of, buffers))
        kept = self.fetches.get(key)
        if kept is not None and kept[1] == sizes:
            self.fetches[key] = (generation, sizes, kept[2])
            return kept[2]
        if len(self.fetches) >= MAX_ENTRIES:
            self.clear()
        made = compute()
        self.fetches[key] = (generation, sizes, made)
        return made

    @staticmethod
    def direct_rows(
        fetch: Fetch, parameters: tuple[int, ...], compute: Callable[[], ActionRows]
    ) -> ActionRows:
        """The rows of a direct draw with these parameters in the fetch's state."""
        kept = fetch.draws.get(parameters)
        if kept is None:
            if len(fetch.draws) >= MAX_ENTRIES:
                fetch.draws.clear()
            kept = fetch.draws[parameters] = compute()
        return kept

    def indirect_row(
        self,
        key: object,
        buffers: tuple[int, int],
        size_of: SizeOf,
        compute: Callable[[], IndirectRow | None],
    ) -> IndirectRow | None:
        sizes = (size_of(buffers[0]), size_of(buffers[1]) if buffers[1] else 0)
        kept = self.indirect.get(key)
        if kept is not None and kept[0] == sizes:
            return kept[1]
        if len(self.indirect) >= MAX_ENTRIES:
            self.clear()
        made = compute()
        self.indirect[key] = (sizes, made)
        return made

    def clear(self) -> None:
        self.fetches.clear()
        self.indirect.clear()
