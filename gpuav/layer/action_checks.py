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

What it costs. Recording an action appends one row of parameter words to a list (the words
a bound state gives every draw are kept per device: ``action_check_rows``); at
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
from dataclasses import dataclass, field, replace
from typing import Protocol

from gpuav.layer import action_check_parameters as P
from gpuav.layer.action_check_groups import Chunk, RowGroup, RowGroups
from gpuav.layer.action_check_rows import (
    ActionRows,
    BoundIndexBuffer,
    DeviceLimits,
    Fetch,
    FetchFacts,
    IndirectRow,
    RowCache,
    Window,
    compute_fetch,
    draw_indexed_rows,
    draw_rows,
    indirect_row,
)
from gpuav.layer.state import Action, CommandBufferState, DeviceState
from gpuav.layer.vertex_input import BoundVertexBuffer, VertexInput

__all__ = [
    "ActionCheckCalls",
    "ActionCheckDevice",
    "ActionCheckState",
    "BoundIndexBuffer",
    "CheckResources",
    "Chunk",
    "DeviceLimits",
    "FetchFacts",
    "RowGroup",
    "Window",
]

# The vertex buffers bound, (buffer, offset, size, stride or None) by binding, the index
# buffer, (buffer, offset, index type, size) or None, and a key that tells these bindings from
# any others (fetch_bindings: the bytes they were read from, which hash once).
BoundBuffers = tuple[
    dict[int, tuple[int, int, int, int | None]], tuple[int, int, int, int] | None, bytes
]


@dataclass(slots=True)
class CheckResources:
    """gpuav's Vulkan objects that run one app command buffer's checks, kept across its
    recordings: the command buffer, a descriptor set per group of rows, the row buffer."""

    command_buffer: int = 0
    descriptor_sets: list[int] = field(default_factory=list)
    # What each set was last written with, so that an unchanged one is not written again.
    written: list[object] = field(default_factory=list)
    rows: int = 0  # the row buffer
    rows_set: int = 0
    rows_capacity: int = 0  # rows it holds


class ActionCheckCalls(Protocol):
    """The Vulkan work of the checks (``native.validation_calls``)."""

    def record(
        self,
        pool_family: int,
        resources: CheckResources,
        groups: list[RowGroup],
        block_data_words: int,
        stamp_of: Callable[[int], object],
    ) -> None:
        """(Re)record ``resources``' command buffer (allocating what it lacks) with a dispatch
        per group of rows and workgroups per row (flat words, ``PARAMETER_WORDS`` a row);
        ``stamp_of`` tells an app buffer from one made again under its handle."""

    def release(self, resources: CheckResources) -> None:
        """Give back everything ``resources`` holds."""

    def destroy(self) -> None: ...


@dataclass
class ActionCheckDevice:
    """Per device: limits, pipelines' vertex input, command pools' queue families, the rows
    kept for the states draws were recorded in."""

    limits: DeviceLimits
    calls: ActionCheckCalls
    vertex_inputs: dict[int, VertexInput] = field(default_factory=dict)
    task_pipelines: set[int] = field(default_factory=set)
    pool_families: dict[int, int] = field(default_factory=dict)
    rows: RowCache = field(default_factory=RowCache)
    # The bindings read from fetch_bindings.c, by the bytes they were read from: many command
    # buffers bind the same buffers, and the same objects make their fetches' keys fast.
    bound_states: dict[bytes, BoundBuffers] = field(default_factory=dict)


@dataclass(slots=True)
class ActionCheckState:
    """Per command buffer: what is bound for fetching (and the fetches of that state, non-
    indexed and indexed, once known), the rows of the checks recorded, and gpuav's objects
    that run them."""

    # As bound: (buffer, offset, size, stride or None) by binding; (buffer, offset, index
    # type, size). Plain tuples, which compare and hash fast.
    vertex_buffers: dict[int, tuple[int, int, int, int | None]] = field(default_factory=dict)
    index_buffer: tuple[int, int, int, int] | None = None
    bound_key: bytes = b""  # the key of the two above (BoundBuffers)
    bound_changes: int = 0  # the change count the three above were taken at (take_bound_buffers)
    bound_noted: int = 0  # the process-wide count of binding changes when last looked at
    graphics_pipeline: int = 0
    # vkCmdSetVertexInputEXT's, for pipelines (and shader objects) whose vertex input is dynamic
    dynamic_vertex_input: VertexInput | None = None
    fetched: list[Fetch | None] = field(default_factory=lambda: [None, None])
    groups: RowGroups = field(default_factory=RowGroups)
    facts: dict[int, FetchFacts] = field(default_factory=dict)  # by action number
    resources: CheckResources = field(default_factory=CheckResources)
    recorded: bool = False
    # The group rows of the last row added, what found them (its output chunk, windows and
    # workgroups per row, compared by identity) and its slots: a draw like the last one skips
    # looking its windows up (``_add_row``).
    last_group: tuple[object, ...] | None = None


def checks_of(state: CommandBufferState) -> ActionCheckState:
    if state.checks is None:
        state.checks = ActionCheckState()
    return state.checks


# -- binding ------------------------------------------------------------------------------------


def take_bound_buffers(checks: ActionCheckState, changes: int, bound: BoundBuffers) -> None:
    """The buffers bound now, as of the bindings' change count ``changes``; a draw after a
    change computes its fetch anew."""
    vertex_buffers, index_buffer, key = bound
    checks.bound_changes = changes
    if checks.bound_key == key:
        return
    checks.bound_key = key
    if checks.vertex_buffers != vertex_buffers:
        checks.vertex_buffers = vertex_buffers
        checks.fetched = [None, None]
    if checks.index_buffer != index_buffer:
        checks.index_buffer = index_buffer
        checks.fetched[1] = None


def post_call_record_set_vertex_input(state: CommandBufferState, vertex_input: VertexInput) -> None:
    checks = checks_of(state)
    if checks.dynamic_vertex_input != vertex_input:
        checks.dynamic_vertex_input = vertex_input
        checks.fetched = [None, None]


def post_call_record_bind_graphics_pipeline(state: CommandBufferState, pipeline: int) -> None:
    checks = state.checks
    if checks is None:
        if state.device.action_checks is None:
            return
        checks = checks_of(state)
    if checks.graphics_pipeline != pipeline:
        checks.graphics_pipeline = pipeline
        checks.fetched = [None, None]


def forget_pipeline(engine: ActionCheckDevice, pipeline: int) -> None:
    """A destroyed pipeline's handle may come back with another vertex input."""
    engine.vertex_inputs.pop(pipeline, None)
    engine.task_pipelines.discard(pipeline)
    engine.rows.clear()


# -- fetches ------------------------------------------------------------------------------------


def _size_of(device: DeviceState) -> Callable[[int], int | None]:
    tracker = device.descriptors
    if tracker is None:
        return lambda handle: None
    return tracker.buffers.size_of


def _fetch(
    engine: ActionCheckDevice, device: DeviceState, checks: ActionCheckState, indexed: bool
) -> Fetch:
    """The fetch of a draw in the command buffer's bound state."""
    known = checks.fetched[indexed]
    if known is not None:
        return known
    return _fetch_anew(engine, device, checks, indexed)


def _fetch_anew(
    engine: ActionCheckDevice, device: DeviceState, checks: ActionCheckState, indexed: bool
) -> Fetch:
    """``_fetch`` after a binding changed: kept by bound state while no buffer was made or
    destroyed, else checked against the buffers' sizes or worked out."""
    pipeline = checks.graphics_pipeline
    input_key: tuple[object, ...] = ()
    dynamic = checks.dynamic_vertex_input
    if dynamic is not None:
        input_key = (tuple(sorted(dynamic.strides.items())), dynamic.instance_rate,
                     dynamic.attributes)  # fmt: skip
    key = (pipeline, checks.bound_key, indexed, input_key)
    tracker = device.descriptors
    generation = 0 if tracker is None else tracker.buffers.generation
    fetch = engine.rows.kept_fetch(key, generation) or _fetch_sized(
        engine, device, checks, indexed, key, generation
    )
    checks.fetched[indexed] = fetch
    return fetch


def _fetch_sized(
    engine: ActionCheckDevice,
    device: DeviceState,
    checks: ActionCheckState,
    indexed: bool,
    key: object,
    generation: int,
) -> Fetch:
    """``_fetch_anew``'s fetch where a buffer was made or destroyed since it was kept, or
    none was (apart: its closure's cells would cost every call)."""
    vertex_buffers = checks.vertex_buffers
    index = checks.index_buffer if indexed else None
    buffers = [binding[0] for binding in vertex_buffers.values()]
    if index is not None:
        buffers.append(index[0])
    size_of = _size_of(device)
    vertex_input = engine.vertex_inputs.get(checks.graphics_pipeline)
    dynamic = checks.dynamic_vertex_input
    if dynamic is not None and (vertex_input is None or vertex_input.dynamic):
        # Shader objects (no pipeline) draw with primitive restart gpuav does not follow.
        restart = True if vertex_input is None else vertex_input.primitive_restart
        vertex_input = replace(dynamic, primitive_restart=restart)
    return engine.rows.fetch(key, generation, buffers, size_of, lambda: compute_fetch(
        engine.limits, vertex_input,
        {binding: BoundVertexBuffer(*bound) for binding, bound in vertex_buffers.items()},
        None if index is None else BoundIndexBuffer(*index), size_of))  # fmt: skip


# -- actions ------------------------------------------------------------------------------------


def _add_row(
    checks: ActionCheckState,
    action: Action,
    row: Sequence[int],
    commands: Window | None = None,
    count: Window | None = None,
    indices: Window | None = None,
) -> None:
    """Queue the action's row in a group that binds what it reads, with the slots it finds them
    at, for the dispatch of its block's output chunk."""
    block = action.block
    chunk = block.chunk
    columns = 1 if row[P.P_GROUPS] <= 1 else P.SCAN_WORKGROUPS
    last = checks.last_group
    if (
        last is not None
        and last[0] is chunk
        and last[1] is commands
        and last[2] is count
        and last[3] is indices
        and last[4] == columns
    ):
        rows: list[int] = last[5]  # type: ignore[assignment]
        slots: list[int] = last[6]  # type: ignore[assignment]
    else:
        groups = checks.groups
        key = (id(commands), id(count), id(indices), id(chunk), columns)
        found = groups.placed.get(key)
        if found is None:
            output = (chunk.handles.buffer, 4 * len(chunk.words))
            found = groups.placed[key] = groups.place((commands, count, indices), output, columns)
        rows, slots = found
        checks.last_group = (chunk, commands, count, indices, columns, rows, slots)
    rows += row
    rows[-4:-1] = slots  # P_COMMANDS_SLOT, P_COUNT_SLOT, P_INDICES_SLOT
    rows[-1] = block.word_offset  # P_BLOCK_WORD, the row's last


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
    if engine is None:
        return
    checks = checks_of(state)
    fetch = None if kind == P.KIND_GROUPS else _fetch(engine, device, checks,
                                                      kind == P.KIND_DRAW_INDEXED)  # fmt: skip
    key: IndirectKey = (kind, buffer, offset, draw_count, stride, count_buffer, count_offset,
                        task, fetch)  # fmt: skip
    size_of = _size_of(device)
    kept = engine.rows.indirect.get(key)
    if kept is not None and kept[0] == (size_of(buffer), size_of(count_buffer) if count_buffer
                                        else 0):  # fmt: skip
        made = kept[1]  # RowCache.indirect_row's hit, without making its compute function
    else:
        made = _indirect_row_anew(engine, key, size_of)
    if made is None:
        return
    _add_row(checks, action, made.row, made.commands, made.count, made.indices)
    if action.number is not None:
        checks.facts[action.number] = made.facts


# record_indirect's key of RowCache.indirect: kind, buffer, offset, draw count, stride, count
# buffer, count offset, task, fetch.
IndirectKey = tuple[int, int, int, int, int, int, int, bool | None, Fetch | None]


def _indirect_row_anew(
    engine: ActionCheckDevice, key: IndirectKey, size_of: Callable[[int], int | None]
) -> IndirectRow | None:
    """``RowCache.indirect_row`` for ``record_indirect``'s key, its row computed anew where
    not kept (apart: its closure's cells would cost every call)."""
    kind, buffer, offset, draw_count, stride, count_buffer, count_offset, task, fetch = key
    return engine.rows.indirect_row(key, (buffer, count_buffer), size_of, lambda: indirect_row(
        engine.limits, fetch, kind, buffer, offset, draw_count, stride, count_buffer,
        count_offset, task, size_of))  # fmt: skip


def add_rows(state: CommandBufferState, action: Action, found: FoundRows) -> None:
    """Queue the rows ``draw_rows_of`` or ``draw_indexed_rows_of`` found for the action."""
    checks = checks_of(state)
    rows, facts = found
    for row, indices in rows:
        _add_row(checks, action, row, indices=indices)
    if action.number is not None:
        checks.facts[action.number] = facts


# A direct draw's rows (never empty) and the facts of its bound state.
FoundRows = tuple[ActionRows, FetchFacts]


def draw_rows_of(
    state: CommandBufferState,
    vertex_count: int,
    instance_count: int,
    first_vertex: int,
    first_instance: int,
    draw: int = 0,
) -> FoundRows | None:
    """vkCmdDraw (or ``draw`` of a vkCmdDrawMultiEXT): its vertices and instances against the
    vertex buffers (host-side). Only a draw that fails has rows, and gets an output block for
    the row that writes its records (``add_rows``); None for the others."""
    checks = state.checks
    engine = state.device.action_checks
    if checks is None or engine is None or not checks.vertex_buffers:
        return None
    if not vertex_count or not instance_count:
        return None
    fetch = checks.fetched[0] or _fetch_anew(engine, state.device, checks, indexed=False)
    parameters = (0, vertex_count, instance_count, first_vertex, first_instance, draw)
    rows = fetch.draws.get(parameters)  # RowCache.direct_rows' hit, without a compute function
    if rows is None:
        rows = _direct_rows_anew(engine, fetch, parameters)
    return (rows, fetch.facts) if rows else None


def draw_indexed_rows_of(
    state: CommandBufferState,
    index_count: int,
    instance_count: int,
    first_index: int,
    vertex_offset: int,
    first_instance: int,
    draw: int = 0,
) -> FoundRows | None:
    """vkCmdDrawIndexed (or ``draw`` of a vkCmdDrawMultiIndexedEXT): its index range and
    instances (host-side), its index values (GPU); None for a draw with nothing to check,
    which gets no output block."""
    checks = state.checks
    engine = state.device.action_checks
    if checks is None or engine is None or not index_count or not instance_count:
        return None
    fetch = checks.fetched[1] or _fetch_anew(engine, state.device, checks, indexed=True)
    parameters = (1, index_count, instance_count, first_index, vertex_offset, first_instance,
                  draw)  # fmt: skip
    rows = fetch.draws.get(parameters)  # RowCache.direct_rows' hit, without a compute function
    if rows is None:
        rows = _direct_rows_anew(engine, fetch, parameters)
    return (rows, fetch.facts) if rows else None


def _direct_rows_anew(
    engine: ActionCheckDevice, fetch: Fetch, parameters: tuple[int, ...]
) -> ActionRows:
    """A direct draw's rows where ``fetch`` keeps none for its parameters (0 or 1 for
    indexed, then the draw's own arguments, as ``draw_rows`` and ``draw_indexed_rows`` take
    them); apart from the callers, whose closure cells would cost every call."""
    rows_of = draw_indexed_rows if parameters[0] else draw_rows
    return engine.rows.direct_rows(fetch, parameters, lambda: rows_of(fetch, *parameters[1:]))


# -- command buffer life cycle -----------------------------------------------------------------


def pre_call_record_end_command_buffer(state: CommandBufferState) -> None:
    """Record gpuav's command buffer for this one's checks."""
    checks = state.checks
    device = state.device
    engine = device.action_checks
    tracker = device.descriptors
    if checks is None or engine is None or not checks.groups.groups or device.output is None:
        return
    if tracker is None:
        return
    family = engine.pool_families.get(state.pool, 0)
    engine.calls.record(family, checks.resources, checks.groups.groups, device.output.data_words,
                        tracker.buffers.live.get)  # fmt: skip
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
