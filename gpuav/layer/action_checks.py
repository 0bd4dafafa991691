"""Parameters of draws and dispatches that live in GPU memory, checked by a validation dispatch
of gpuav's own (``shaders/action_checks.comp``): indirect commands (group counts, firstInstance,
draw counts, index ranges), and the index values of indexed draws against the vertices the bound
vertex buffers hold. Its records go into the action's own output block, so they are read back
and reported with that action.

Where the dispatch runs. A compute dispatch cannot be recorded inside a render pass, and one
recorded in the app's command buffer would disturb the app's bound compute pipeline, descriptor
sets and push constants. So each app command buffer with checks gets a command buffer of
gpuav's, recorded at its vkEndCommandBuffer, that gpuav submits right after it in the same
batch (``submit_infos``): a barrier makes the app's writes (earlier in submission order)
visible to the checks, and a barrier after them orders the app's later writes after the
checks' reads and makes the records visible to the host. The app's state and synchronization
are untouched; a correct program computes what it did.

What it costs. Recording an action appends one row of parameter words to a list; at
vkEndCommandBuffer the rows go into one storage buffer and one dispatch checks every action
that binds the same buffers (the same output chunk, indirect, count and index buffers: a
window binds a whole buffer where it can), each workgroup row checking one action. So a
command buffer costs a few descriptor writes and dispatches however many actions it checks,
and its gpuav command buffer, descriptor sets and row buffer are kept and reused when it is
recorded again.

What that reads: the indirect and index buffers as they stand when the app's command buffer
has finished. An app that rewrites an indirect or index buffer later in the same command
buffer, after the action used it, has the action checked against the later contents.
Host-known parameters of direct draws (vkCmdDraw's vertices and instances, vkCmdDrawIndexed's
index range) are checked when recorded; only a failing one costs a dispatch (``KIND_REPORT``)
that writes its record at each submission. An action without an indirect buffer, an index
buffer or vertex attributes costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from gpuav.instrument.record import ErrorCode
from gpuav.layer import action_check_parameters as P
from gpuav.layer.state import Action, CommandBufferState, DeviceState
from gpuav.layer.vertex_input import BoundVertexBuffer, Limit, VertexInput, limits

WHOLE_SIZE = 0xFFFF_FFFF_FFFF_FFFF
INDEX_TYPE_UINT16 = 0
INDEX_TYPE_UINT32 = 1
INDEX_TYPE_UINT8 = 1000265000
INDEX_BYTES = {INDEX_TYPE_UINT16: 2, INDEX_TYPE_UINT32: 4, INDEX_TYPE_UINT8: 1}
DRAW_COMMAND_BYTES = 16  # VkDrawIndirectCommand
DRAW_INDEXED_COMMAND_BYTES = 20  # VkDrawIndexedIndirectCommand
GROUPS_COMMAND_BYTES = 12  # VkDispatchIndirectCommand, VkDrawMeshTasksIndirectCommandEXT


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


# What one dispatch binds (its output chunk's buffer and the commands, count and indices
# windows) and its workgroups per row.
GroupKey = tuple[int, Window | None, Window | None, Window | None, int]


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


@dataclass(slots=True)
class CheckResources:
    """gpuav's Vulkan objects that run one app command buffer's checks, kept across its
    recordings: the command buffer, a descriptor set per group of rows, the row buffer."""

    command_buffer: int = 0
    descriptor_sets: list[int] = field(default_factory=list)
    rows: int = 0  # the row buffer
    rows_set: int = 0
    rows_capacity: int = 0  # rows it holds


class ActionCheckCalls(Protocol):
    """The Vulkan work of the checks (``native.validation_calls``)."""

    def record(
        self,
        pool_family: int,
        resources: CheckResources,
        groups: dict[GroupKey, list[int]],
        block_data_words: int,
    ) -> None:
        """(Re)record ``resources``' command buffer (allocating what it lacks) with a dispatch
        per group of rows (flat words, ``PARAMETER_WORDS`` a row)."""

    def release(self, resources: CheckResources) -> None:
        """Give back everything ``resources`` holds."""

    def destroy(self) -> None: ...


@dataclass
class ActionCheckDevice:
    """Per device: limits, pipelines' vertex input, command pools' queue families."""

    limits: DeviceLimits
    calls: ActionCheckCalls
    vertex_inputs: dict[int, VertexInput] = field(default_factory=dict)
    task_pipelines: set[int] = field(default_factory=set)
    pool_families: dict[int, int] = field(default_factory=dict)


@dataclass(slots=True)
class ActionCheckState:
    """Per command buffer: what is bound for fetching, the rows of the checks recorded, and
    gpuav's objects that run them."""

    vertex_buffers: dict[int, BoundVertexBuffer] = field(default_factory=dict)
    index_buffer: BoundIndexBuffer | None = None
    graphics_pipeline: int = 0
    rows: dict[GroupKey, list[int]] = field(default_factory=dict)
    facts: dict[int, FetchFacts] = field(default_factory=dict)  # by action number
    resources: CheckResources = field(default_factory=CheckResources)
    recorded: bool = False


def checks_of(state: CommandBufferState) -> ActionCheckState:
    if state.checks is None:
        state.checks = ActionCheckState()
    return state.checks


# -- binding ------------------------------------------------------------------------------------


def post_call_record_bind_vertex_buffers(
    state: CommandBufferState, first: int, buffers: Sequence[BoundVertexBuffer]
) -> None:
    bound = checks_of(state).vertex_buffers
    for binding, buffer in enumerate(buffers, first):
        bound[binding] = buffer


def post_call_record_bind_index_buffer(state: CommandBufferState, bound: BoundIndexBuffer) -> None:
    checks_of(state).index_buffer = bound


def post_call_record_bind_graphics_pipeline(state: CommandBufferState, pipeline: int) -> None:
    if state.checks is not None or state.device.action_checks is not None:
        checks_of(state).graphics_pipeline = pipeline


# -- windows and capacities ---------------------------------------------------------------------


def _size_of(device: DeviceState, buffer: int) -> int | None:
    tracker = device.descriptors
    return None if tracker is None else tracker.buffers.size_of(buffer)


def _window(limits_: DeviceLimits, buffer: int, offset: int, size: int) -> tuple[Window, int]:
    """The window that reads ``offset`` of the buffer, and that byte's word in it."""
    start = 0
    if size > limits_.max_storage_range:
        alignment = max(limits_.storage_alignment, 4)
        start = offset // alignment * alignment
    reach = min(size - start, limits_.max_storage_range) // 4 * 4
    return Window(buffer, start, max(reach, 4)), (offset - start) // 4


def _commands_in(size: int, offset: int, stride: int, command_bytes: int, window: Window) -> int:
    """Commands that lie wholly inside the buffer (and the window)."""
    end = min(size, window.offset + window.range)
    if end < offset + command_bytes:
        return 0
    if stride == 0:
        return P.UNLIMITED
    return min((end - offset - command_bytes) // stride + 1, P.UNLIMITED)


def _fetch_facts(device: DeviceState, checks: ActionCheckState, indexed: bool) -> FetchFacts:
    engine = device.action_checks
    vertex_input = None if engine is None else engine.vertex_inputs.get(checks.graphics_pipeline)
    vertex = instance = None
    if vertex_input is not None:
        vertex, instance = limits(
            vertex_input, checks.vertex_buffers, lambda handle: _size_of(device, handle)
        )
    index = checks.index_buffer if indexed else None
    capacity = None
    if index is not None:
        size = _size_of(device, index.buffer)
        if size is not None and index.index_type in INDEX_BYTES:
            available = max(size - index.offset, 0)
            if index.size != WHOLE_SIZE:
                available = min(available, index.size)
            capacity = available // INDEX_BYTES[index.index_type]
    return FetchFacts(vertex, instance, index, capacity)


def _set_capacities(row: list[int], facts: FetchFacts) -> None:
    vertex, instance, indices = facts.vertex, facts.instance, facts.index_capacity
    row[P.P_VERTEX_CAPACITY] = P.UNLIMITED if vertex is None else vertex.capacity
    row[P.P_INSTANCE_CAPACITY] = P.UNLIMITED if instance is None else instance.capacity
    row[P.P_INDEX_CAPACITY] = P.UNLIMITED if indices is None else min(indices, P.UNLIMITED)


def _index_window(device: DeviceState, facts: FetchFacts) -> tuple[Window | None, int, int]:
    """The index buffer's window, the bound offset's element in it, and the type's flags."""
    index = facts.index
    engine = device.action_checks
    size = None if index is None else _size_of(device, index.buffer)
    if index is None or size is None or engine is None or not facts.index_capacity:
        return None, 0, 0
    window, _ = _window(engine.limits, index.buffer, index.offset, size)
    element_bytes = INDEX_BYTES[index.index_type]
    first = (index.offset - window.offset) // element_bytes
    flags = {2: P.FLAG_INDEX16, 1: P.FLAG_INDEX8}.get(element_bytes, 0)
    return window, first, flags


# -- actions ------------------------------------------------------------------------------------


def _add_row(
    state: CommandBufferState,
    action: Action,
    row: list[int],
    commands: Window | None = None,
    count: Window | None = None,
    indices: Window | None = None,
) -> None:
    """Queue the action's row for the dispatch of the group that binds what it reads."""
    block = action.block
    row[P.P_BLOCK_WORD] = block.word_offset
    columns = 1 if row[P.P_GROUPS] <= 1 else P.SCAN_WORKGROUPS
    key = (block.chunk.handles.buffer, commands, count, indices, columns)
    rows = checks_of(state).rows
    group = rows.get(key)
    if group is None:
        rows[key] = row
    else:
        group += row


def _new_row(kind: int, flags: int = 0, groups: int = 1) -> list[int]:
    row = [0] * P.PARAMETER_WORDS
    row[P.P_KIND] = kind
    row[P.P_FLAGS] = flags
    row[P.P_GROUPS] = groups
    return row


def record_indirect(
    state: CommandBufferState,
    action: Action,
    kind: int,
    buffer: int,
    offset: int,
    draw_count: int,
    stride: int,
    count_buffer: int = 0,
    count_offset: int = 0,
    task: bool | None = None,
) -> None:
    """An indirect draw, dispatch or mesh-task draw (``task``: whether a task shader runs)."""
    device = state.device
    engine = device.action_checks
    size = _size_of(device, buffer)
    if engine is None or size is None:
        return
    limits_ = engine.limits
    command_bytes = {
        P.KIND_GROUPS: GROUPS_COMMAND_BYTES,
        P.KIND_DRAW: DRAW_COMMAND_BYTES,
        P.KIND_DRAW_INDEXED: DRAW_INDEXED_COMMAND_BYTES,
    }[kind]
    if draw_count <= 1:
        stride = command_bytes
    commands, first_word = _window(limits_, buffer, offset, size)
    row = _new_row(kind)
    row[P.P_FIRST_WORD] = first_word
    row[P.P_STRIDE_WORDS] = stride // 4
    row[P.P_DRAW_COUNT] = draw_count
    row[P.P_DRAWS_IN_BUFFER] = _commands_in(size, offset, stride, command_bytes, commands)
    row[P.P_MAX_DRAW_INDIRECT_COUNT] = limits_.max_draw_indirect_count
    flags = 0
    count = None
    if count_buffer:
        count_size = _size_of(device, count_buffer)
        if count_size is None:
            return
        count, row[P.P_COUNT_WORD] = _window(limits_, count_buffer, count_offset, count_size)
        flags |= P.FLAG_COUNT_BUFFER
    indices = None
    if kind == P.KIND_GROUPS:
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
    else:
        if not limits_.first_instance:
            flags |= P.FLAG_FIRST_INSTANCE
        indexed = kind == P.KIND_DRAW_INDEXED
        checks = checks_of(state)
        fetched = _fetch_facts(device, checks, indexed)
        facts = FetchFacts(
            fetched.vertex, fetched.instance, fetched.index, fetched.index_capacity, commands,
            offset,
        )  # fmt: skip
        _set_capacities(row, facts)
        if indexed:
            indices, row[P.P_INDEX_FIRST_ELEMENT], index_flags = _index_window(device, facts)
            flags |= index_flags
            if indices is not None and facts.vertex is not None:
                flags |= P.FLAG_SCAN_INDICES
                row[P.P_GROUPS] = P.SCAN_WORKGROUPS
            flags |= _restart_flag(device, checks)
    row[P.P_FLAGS] = flags
    _add_row(state, action, row, commands, count, indices)
    _remember(checks_of(state), action, facts)


def _restart_flag(device: DeviceState, checks: ActionCheckState) -> int:
    engine = device.action_checks
    vertex_input = None if engine is None else engine.vertex_inputs.get(checks.graphics_pipeline)
    return P.FLAG_RESTART if vertex_input is not None and vertex_input.primitive_restart else 0


def _report(state: CommandBufferState, action: Action, code: ErrorCode, *values: int) -> None:
    row = _new_row(P.KIND_REPORT, int(code))
    padded = (*values, 0, 0, 0, 0, 0, 0)[:6]
    row[P.P_REPORT_WORDS : P.P_REPORT_WORDS + 6] = [v & 0xFFFF_FFFF for v in padded]
    _add_row(state, action, row)


def _past(first: int, count: int, capacity: int) -> bool:
    return count > 0 and first + count > capacity


def record_draw(
    state: CommandBufferState,
    action_of: Callable[[], Action | None],
    vertex_count: int,
    instance_count: int,
    first_vertex: int,
    first_instance: int,
) -> None:
    """vkCmdDraw: its vertices and instances against the vertex buffers (host-side); only a
    draw that fails gets an output block and a row that writes its records."""
    checks = state.checks
    if checks is None or not checks.vertex_buffers or not vertex_count or not instance_count:
        return
    facts = _fetch_facts(state.device, checks, indexed=False)
    failing = []
    if facts.vertex is not None and _past(first_vertex, vertex_count, facts.vertex.capacity):
        failing.append((first_vertex, vertex_count, facts.vertex.capacity, 0))
    instance = facts.instance
    if instance is not None and _past(first_instance, instance_count, instance.capacity):
        failing.append((first_instance, instance_count, instance.capacity, 1))
    action = action_of() if failing else None
    if action is None:
        return
    for first, count, capacity, instances in failing:
        _report(state, action, ErrorCode.VERTEX_RANGE, 0, first, count, capacity, instances)
    _remember(checks, action, facts)


def _remember(checks: ActionCheckState, action: Action, facts: FetchFacts) -> None:
    if action.number is not None:
        checks.facts[action.number] = facts


def wants_indexed_check(state: CommandBufferState) -> bool:
    """Whether a vkCmdDrawIndexed needs a check at all (an index buffer is bound)."""
    checks = state.checks
    return checks is not None and checks.index_buffer is not None


def record_draw_indexed(
    state: CommandBufferState,
    action: Action,
    index_count: int,
    instance_count: int,
    first_index: int,
    vertex_offset: int,
    first_instance: int,
) -> None:
    """vkCmdDrawIndexed: its index range and instances (host-side), its index values (GPU)."""
    checks = checks_of(state)
    device = state.device
    if not index_count or not instance_count or device.action_checks is None:
        return
    facts = _fetch_facts(device, checks, indexed=True)
    _remember(checks, action, facts)
    if facts.index_capacity is not None and _past(first_index, index_count, facts.index_capacity):
        _report(state, action, ErrorCode.INDEX_RANGE, 0, first_index, index_count,
                facts.index_capacity)  # fmt: skip
    instance = facts.instance
    if instance is not None and _past(first_instance, instance_count, instance.capacity):
        _report(state, action, ErrorCode.VERTEX_RANGE, 0, first_instance, instance_count,
                instance.capacity, 1)  # fmt: skip
    if facts.vertex is None:
        return
    indices, first, flags = _index_window(device, facts)
    if indices is None:
        return
    readable = max(min(index_count, (facts.index_capacity or 0) - first_index), 0)
    groups = min(P.SCAN_WORKGROUPS, -(-readable // P.WORKGROUP_SIZE))
    if not groups:
        return
    row = _new_row(P.KIND_DIRECT_INDEXED, flags | _restart_flag(device, checks), groups)
    row[P.P_INDEX_FIRST_ELEMENT] = first
    row[P.P_DIRECT_FIRST_INDEX] = first_index
    row[P.P_DIRECT_INDEX_COUNT] = index_count
    row[P.P_DIRECT_VERTEX_OFFSET] = vertex_offset & 0xFFFF_FFFF
    _set_capacities(row, facts)
    _add_row(state, action, row, indices=indices)


# -- command buffer life cycle -----------------------------------------------------------------


def pre_call_record_end_command_buffer(state: CommandBufferState) -> None:
    """Record gpuav's command buffer for this one's checks."""
    checks = state.checks
    device = state.device
    engine = device.action_checks
    if checks is None or engine is None or not checks.rows or device.output is None:
        return
    family = engine.pool_families.get(state.pool, 0)
    engine.calls.record(family, checks.resources, checks.rows, device.output.data_words)
    checks.recorded = True


def reset(state: CommandBufferState, freed: bool = False) -> None:
    """The app's command buffer is reset, begun again or freed: its gpuav objects are kept for
    its next recording, or given back when it is freed."""
    checks = state.checks
    if checks is None:
        return
    resources = checks.resources
    engine = state.device.action_checks
    if freed:
        if engine is not None:
            engine.calls.release(resources)
        state.checks = None
        return
    state.checks = ActionCheckState(resources=resources)


def validation_command_buffers(device: DeviceState, handle: int) -> list[int]:
    """gpuav's command buffers to submit right after the app's ``handle``: its own checks and
    those of the secondaries it executes."""
    state = device.command_buffers.get(handle)
    if state is None:
        return []
    found = []
    for member in (state, *state.executed):
        checks = member.checks
        if checks is not None and checks.recorded and checks.resources.command_buffer:
            found.append(checks.resources.command_buffer)
    return found
