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


@dataclass(frozen=True)
class Window:
    """A storage-buffer view of app memory: bound from ``offset`` (aligned down) for
    ``range`` bytes; the wanted byte is word ``first_word`` of it."""

    buffer: int
    offset: int
    range: int
    first_word: int


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


@dataclass(frozen=True)
class ValidationCheck:
    """One validation dispatch: its parameter words, windows and workgroups."""

    action: Action
    parameters: tuple[int, ...]
    commands: Window | None = None
    count: Window | None = None
    indices: Window | None = None
    groups: int = 1


class ActionCheckCalls(Protocol):
    """The Vulkan work of the checks (``native.validation_calls``)."""

    def record(
        self, pool_family: int, command_buffer: int, checks: Sequence[ValidationCheck]
    ) -> tuple[int, list[int]]:
        """(Re)record ``command_buffer`` (0: allocate one) with the checks; returns it and the
        descriptor sets it uses."""

    def release(self, command_buffer: int, descriptor_sets: Sequence[int]) -> None:
        """Give back the descriptor sets, and the command buffer when nonzero."""

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
    """Per command buffer: what is bound for fetching, the checks recorded, gpuav's command
    buffer that runs them and the descriptor sets it uses."""

    vertex_buffers: dict[int, BoundVertexBuffer] = field(default_factory=dict)
    index_buffer: BoundIndexBuffer | None = None
    graphics_pipeline: int = 0
    checks: list[ValidationCheck] = field(default_factory=list)
    facts: dict[int, FetchFacts] = field(default_factory=dict)  # by action number
    command_buffer: int = 0
    descriptor_sets: list[int] = field(default_factory=list)
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


def _window(limits_: DeviceLimits, buffer: int, offset: int, size: int) -> Window:
    alignment = max(limits_.storage_alignment, 4)
    start = offset // alignment * alignment
    reach = min(size - start, limits_.max_storage_range) // 4 * 4
    return Window(buffer, start, max(reach, 4), (offset - start) // 4)


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


def _parameters(**words: int) -> tuple[int, ...]:
    values = [0] * P.PARAMETER_WORDS
    for name, value in words.items():
        values[getattr(P, name)] = value & 0xFFFF_FFFF
    return tuple(values)


def _capacities(facts: FetchFacts) -> dict[str, int]:
    return {
        "P_VERTEX_CAPACITY": P.UNLIMITED if facts.vertex is None else facts.vertex.capacity,
        "P_INSTANCE_CAPACITY": P.UNLIMITED if facts.instance is None else facts.instance.capacity,
        "P_INDEX_CAPACITY": P.UNLIMITED if facts.index_capacity is None else facts.index_capacity,
    }


def _index_window(device: DeviceState, facts: FetchFacts) -> tuple[Window | None, int, int]:
    """The index buffer's window, the bound offset's element in it, and the type's flags."""
    index = facts.index
    engine = device.action_checks
    size = None if index is None else _size_of(device, index.buffer)
    if index is None or size is None or engine is None or not facts.index_capacity:
        return None, 0, 0
    window = _window(engine.limits, index.buffer, index.offset, size)
    element_bytes = INDEX_BYTES[index.index_type]
    first = (index.offset - window.offset) // element_bytes
    flags = {2: P.FLAG_INDEX16, 1: P.FLAG_INDEX8}.get(element_bytes, 0)
    return window, first, flags


# -- actions ------------------------------------------------------------------------------------


def _add(state: CommandBufferState, check: ValidationCheck, facts: FetchFacts | None) -> None:
    checks = checks_of(state)
    checks.checks.append(check)
    if facts is not None:
        _remember(checks, check.action, facts)


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
    commands = _window(limits_, buffer, offset, size)
    words: dict[str, int] = {
        "P_KIND": kind,
        "P_FIRST_WORD": commands.first_word,
        "P_STRIDE_WORDS": stride // 4,
        "P_DRAW_COUNT": draw_count,
        "P_DRAWS_IN_BUFFER": _commands_in(size, offset, stride, command_bytes, commands),
        "P_MAX_DRAW_INDIRECT_COUNT": limits_.max_draw_indirect_count,
    }
    flags = 0
    count = None
    if count_buffer:
        count_size = _size_of(device, count_buffer)
        if count_size is None:
            return
        count = _window(limits_, count_buffer, count_offset, count_size)
        words["P_COUNT_WORD"] = count.first_word
        flags |= P.FLAG_COUNT_BUFFER
    facts: FetchFacts | None = None
    indices = None
    groups = 1
    if kind == P.KIND_GROUPS:
        x, y, z, total = (
            (*limits_.compute_groups, P.UNLIMITED)
            if task is None
            else limits_.task_groups
            if task
            else limits_.mesh_groups
        )
        words.update(P_LIMIT_X=x, P_LIMIT_Y=y, P_LIMIT_Z=z, P_LIMIT_TOTAL=total)
        kind_name = "compute" if task is None else "task" if task else "mesh"
        facts = FetchFacts(None, None, None, None, commands, offset, kind_name)
    else:
        if not limits_.first_instance:
            flags |= P.FLAG_FIRST_INSTANCE
        indexed = kind == P.KIND_DRAW_INDEXED
        checks = checks_of(state)
        facts = _fetch_facts(device, checks, indexed)
        facts = FetchFacts(
            facts.vertex, facts.instance, facts.index, facts.index_capacity, commands, offset
        )
        words.update(_capacities(facts))
        if indexed:
            indices, first, index_flags = _index_window(device, facts)
            flags |= index_flags
            words["P_INDEX_FIRST_ELEMENT"] = first
            if indices is not None and facts.vertex is not None:
                flags |= P.FLAG_SCAN_INDICES
                groups = P.SCAN_WORKGROUPS
            flags |= _restart_flag(device, checks)
    words["P_FLAGS"] = flags
    check = ValidationCheck(action, _parameters(**words), commands, count, indices, groups)
    _add(state, check, facts)


def _restart_flag(device: DeviceState, checks: ActionCheckState) -> int:
    engine = device.action_checks
    vertex_input = None if engine is None else engine.vertex_inputs.get(checks.graphics_pipeline)
    return P.FLAG_RESTART if vertex_input is not None and vertex_input.primitive_restart else 0


def _report(state: CommandBufferState, action: Action, code: ErrorCode, *values: int) -> None:
    padded = (*values, 0, 0, 0, 0, 0, 0)[:6]
    words = {"P_KIND": P.KIND_REPORT, "P_REPORT_CODE": int(code)}
    parameters = list(_parameters(**words))
    parameters[P.P_REPORT_WORDS : P.P_REPORT_WORDS + 6] = [v & 0xFFFF_FFFF for v in padded]
    _add(state, ValidationCheck(action, tuple(parameters)), None)


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
    draw that fails gets an output block and a dispatch that writes its records."""
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
    words = {
        "P_KIND": P.KIND_DIRECT_INDEXED,
        "P_FLAGS": flags | _restart_flag(device, checks),
        "P_INDEX_FIRST_ELEMENT": first,
        "P_DIRECT_FIRST_INDEX": first_index,
        "P_DIRECT_INDEX_COUNT": index_count,
        "P_DIRECT_VERTEX_OFFSET": vertex_offset,
        **_capacities(facts),
    }
    checks.checks.append(ValidationCheck(action, _parameters(**words), None, None, indices, groups))


# -- command buffer life cycle -----------------------------------------------------------------


def pre_call_record_end_command_buffer(state: CommandBufferState) -> None:
    """Record gpuav's command buffer for this one's checks."""
    checks = state.checks
    engine = state.device.action_checks
    if checks is None or engine is None or not checks.checks:
        return
    family = engine.pool_families.get(state.pool, 0)
    if checks.descriptor_sets:
        engine.calls.release(0, checks.descriptor_sets)
    checks.command_buffer, checks.descriptor_sets = engine.calls.record(
        family, checks.command_buffer, checks.checks
    )
    checks.recorded = True


def reset(state: CommandBufferState, freed: bool = False) -> None:
    """The app's command buffer is reset, begun again or freed."""
    checks = state.checks
    if checks is None:
        return
    engine = state.device.action_checks
    if engine is not None and (checks.descriptor_sets or (freed and checks.command_buffer)):
        engine.calls.release(checks.command_buffer if freed else 0, checks.descriptor_sets)
    command_buffer = 0 if freed else checks.command_buffer
    state.checks = ActionCheckState(command_buffer=command_buffer)


def validation_command_buffers(device: DeviceState, handle: int) -> list[int]:
    """gpuav's command buffers to submit right after the app's ``handle``: its own checks and
    those of the secondaries it executes."""
    state = device.command_buffers.get(handle)
    if state is None:
        return []
    found = []
    for member in (state, *state.executed):
        checks = member.checks
        if checks is not None and checks.recorded and checks.command_buffer:
            found.append(checks.command_buffer)
    return found
