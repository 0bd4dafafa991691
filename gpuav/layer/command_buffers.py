"""Command buffer recording: bound pipelines, per-action output blocks, life cycle.

Seed 000's GpuAllocateValidationResources runs for every draw and dispatch; here it hands the
action a block (no allocation, see ``output_buffers``) and records one extra
``vkCmdBindDescriptorSets`` of the block's set at the reserved index through the bound
pipeline's layout. Actions of pipelines without instrumented shaders
cost a counter increment. Blocks go back to the pool when the command buffer is reset, begun
again, freed, or its pool is reset or destroyed (seed 000: GpuPreCallRecordFreeCommandBuffers).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence

from gpuav.instrument.descriptor_state import NO_STATE, VERDICT_WORD, bound_area
from gpuav.layer import action_checks, binding_summaries, faults, notices, recording_site
from gpuav.layer.calls import PIPELINE_BIND_POINT_GRAPHICS
from gpuav.layer.descriptor_sets import NO_STATE_AREA, NO_STATE_WORDS, PushedWrite
from gpuav.layer.output_buffers import Block
from gpuav.layer.state import Action, CommandBufferState, DeviceState, PipelineState


def degrade(device: DeviceState, reason: str) -> None:
    """Stop instrumenting new work after an allocation failure; keep the app running."""
    device.degraded = True
    device.reporter.emit_once("resources-exhausted", notices.resources_exhausted(reason))


def post_call_record_allocate_command_buffers(
    device: DeviceState, pool: int, primary: bool, handles: Iterable[int]
) -> None:
    members = device.command_pools.setdefault(pool, set())
    for handle in handles:
        device.command_buffers[handle] = CommandBufferState(handle, device, pool, primary)
        members.add(handle)


def _reset(state: CommandBufferState) -> None:
    device = state.device
    if device.pending:
        from gpuav.layer.queue_submit import read_back_finished

        read_back_finished(device, settle=(state,))
    output = device.output
    if output is not None:
        output.release([action.block for action in state.actions])
    state.actions.clear()
    state.chunks.clear()
    state.executed.clear()
    state.bound.clear()
    state.bound_words.clear()
    state.bound_handles.clear()
    state.bound_areas.clear()
    state.summarized.clear()
    state.action_count = 0
    state.labels = None
    state.descriptor_buffers = None
    action_checks.reset(state)


def pre_call_record_free_command_buffers(device: DeviceState, handles: Iterable[int]) -> None:
    for handle in handles:
        state = device.command_buffers.pop(handle, None)
        if state is not None:
            _reset(state)
            action_checks.reset(state, freed=True)
            device.command_pools.get(state.pool, set()).discard(handle)


def pre_call_record_reset_command_pool(device: DeviceState, pool: int) -> None:
    for handle in device.command_pools.get(pool, ()):
        state = device.command_buffers.get(handle)
        if state is not None:
            _reset(state)


def pre_call_record_destroy_command_pool(device: DeviceState, pool: int) -> None:
    pre_call_record_free_command_buffers(device, list(device.command_pools.pop(pool, ())))


def pre_call_record_begin_command_buffer(state: CommandBufferState) -> None:
    """Beginning a recorded command buffer resets it implicitly."""
    if (
        state.action_count
        or state.executed
        or state.bound
        or state.bound_handles
        or state.checks is not None
    ):
        _reset(state)
    state.labels = None


def pre_call_record_reset_command_buffer(state: CommandBufferState) -> None:
    _reset(state)


def pre_call_record_end_command_buffer(state: CommandBufferState) -> None:
    """Make this primary's shader writes host-visible before the submit's wait ends.

    vkEndCommandBuffer is never inside a render pass, so the barrier is always legal here,
    and it spares an extra submission per vkQueueSubmit.
    """
    action_checks.pre_call_record_end_command_buffer(state)
    if state.primary and state.has_output():
        state.device.calls.cmd_host_read_barrier(state.handle)


def post_call_record_cmd_bind_pipeline(
    state: CommandBufferState, bind_point: int, pipeline: int, bound_later: bool = False
) -> None:
    """``bound_later``: the spill block is bound by the caller's going down
    (``OutputBindBeforeAction``)."""
    if bind_point == PIPELINE_BIND_POINT_GRAPHICS:
        action_checks.post_call_record_bind_graphics_pipeline(state, pipeline)
    tracked = state.device.pipelines.get(pipeline)
    if tracked is None:
        state.bound.pop(bind_point, None)
        return
    state.bound[bind_point] = tracked
    if tracked.instrumented:
        bind_spill_block(state, bind_point, tracked, "vkCmdBindPipeline", bound_later)


def bind_spill_block(
    state: CommandBufferState,
    bind_point: int,
    pipeline: PipelineState,
    command: str,
    bound_later: bool = False,
) -> None:
    """The spill block goes with an instrumented pipeline (or shader objects) as it is bound,
    so that the action commands gpuav does not hook (newer extensions') never run its shaders
    with our set unbound."""
    output = state.device.output
    if output is not None:
        _bind_block(state, bind_point, pipeline, output.spill, None, command, bound_later)


def pre_call_record_action(
    state: CommandBufferState,
    bind_point: int,
    command: str,
    runs: PipelineState | None = None,
    bound_later: bool = False,
) -> bool:
    """Give a draw or dispatch its output block and bind it at our set index; whether it got
    one (an Action appended). Actions are numbered from 0 in their command buffer, as the
    Khronos layer numbers them. ``runs``: what the action runs when not the bound pipeline (an
    execution set's members, execution_sets). ``bound_later``: the block is bound by the
    caller's going down with the action (``OutputBindBeforeAction``), not here."""
    number = state.action_count
    state.action_count = number + 1
    pipeline = state.bound.get(bind_point) if runs is None else runs
    if pipeline is None or not pipeline.instrumented:
        return False
    if faults._POINTS:
        faults.check("record_action")
    device = state.device
    output = device.output
    if output is None:
        return False
    block = output.acquire()
    if block.spill and not device.degraded:
        degrade(device, "no device memory left for output blocks")
    _bind_block(state, bind_point, pipeline, block, number, command, bound_later)
    return True


def pushed_context_offset(device: DeviceState, pipeline: PipelineState) -> int | None:
    """Where the pipeline's pushed device address of gpuav's buffers goes, when it reaches
    them that way (its layout has no room for gpuav's set); None when it binds gpuav's set."""
    return device.context_offset if pipeline.context_stages else None


def _bind_block(
    state: CommandBufferState,
    bind_point: int,
    pipeline: PipelineState,
    block: Block,
    number: int | None,
    command: str,
    bound_later: bool,
) -> None:
    """Bind (or push) an output block for the pipeline and remember the action it serves.
    Runs per instrumented action: the look-ups are written out (``pushed_context_offset``,
    ``_bound_area``'s hit)."""
    device = state.device
    handle = state.handle
    context_offset = device.context_offset if pipeline.context_stages else None
    if context_offset is not None:
        device.calls.cmd_push_context(
            handle, pipeline.layout, pipeline.context_stages, context_offset, block.context_address
        )
    elif bound_later:
        binds = state.output_bind
        if binds is None:
            binds = state.output_bind = device.calls.output_bind_before_action(handle)
        binds.bind(bind_point, pipeline.layout, device.set_index, block.descriptor_set)
    else:
        device.calls.cmd_bind_output_block(
            handle, bind_point, pipeline.layout, device.set_index, block.descriptor_set
        )
    words = state.bound_areas.get(bind_point)
    if words is None:
        words = _bound_area(state, bind_point)
    offset = block.bound_sets_offset
    chunk = block.chunk
    if block.area is not words:
        chunk.area_words[offset : offset + len(words)] = words
        block.area = words
    chunk.area_words[offset + VERDICT_WORD] = (
        0 if pipeline.verdict is None else _verdict(state, pipeline, words)
    )
    if block.spill:
        # Actions of every command buffer share the spill block's area: no summary holds.
        binding_summaries.clear(block)
    state.chunks.add(chunk)
    labels = state.labels
    state.actions.append(
        Action(
            number,
            command,
            pipeline,
            block,
            state.bound_handles.get(bind_point, ()),
            # Past this function and pre_call_record_action; the spill block's records are
            # never pinned on one action, so it needs no site.
            None if number is None else recording_site.capture(skip=2),
            None if labels is None else labels.at_action,
        )
    )


_KEPT_AREAS = 256  # bound-sets areas whose verdicts a pipeline keeps
_KEPT_PUSHED_VALUES = 256  # verdicts kept per pipeline and area for the values pushed


def _verdict(state: CommandBufferState, pipeline: PipelineState, area: array[int]) -> int:
    """The verdict word of an action of ``pipeline`` with this bound-sets area: the stages
    whose checks all pass run unchecked (``host_terms``). The terms of the area are worked out
    once for the pipeline and area; those that read push constants once for each value of
    the words they read (a renderer binds the same sets and pushes each material's index
    again every frame)."""
    last = state.last_verdict
    if last is None or last[0] is not pipeline or last[1] is not area:
        # A frame binds its sets again: the same words make a new area with the same verdicts.
        kept = pipeline.verdicts_kept
        content = area.tobytes()
        found = kept.get(content)
        if found is None:
            assert pipeline.verdict is not None
            if len(kept) >= _KEPT_AREAS:
                kept.clear()
            found = kept[content] = (pipeline.verdict(area, b"", 0), {})
        last = state.last_verdict = (pipeline, area, *found)
    fixed = last[2]
    pushed_verdict = pipeline.pushed_verdict
    if pushed_verdict is None or not fixed & pipeline.pushed_bits:
        return fixed
    noted = state.pushed
    if noted is None:
        noted = state.pushed = state.device.calls.pushed_constants(state.handle)
    key = noted.span(*pipeline.pushed_span)
    known = last[3]
    word = known.get(key)
    if word is None:
        failing = pipeline.pushed_bits & ~pushed_verdict(area, noted.data(), noted.words)
        if len(known) >= _KEPT_PUSHED_VALUES:
            known.clear()
        word = known[key] = fixed & ~failing
    return word


def _bound_area(state: CommandBufferState, bind_point: int) -> array[int]:
    """The bound-sets area for the sets bound at ``bind_point`` now (descriptor_state)."""
    area = state.bound_areas.get(bind_point)
    if area is None:
        words = state.bound_words.get(bind_point)
        descriptors = state.device.descriptors
        if words is None or descriptors is None:
            area = NO_STATE_AREA
        else:
            tables = descriptors.state.set_tables
            summarized = state.summarized
            area = array("I", bound_area(words, lambda region: tables(region, summarized)))
            area = _same_area(state.device, area)
        state.bound_areas[bind_point] = area
    return area


_KEPT_SAME_AREAS = 1024


def _same_area(device: DeviceState, area: array[int]) -> array[int]:
    """The area object made before with these words, if any: a renderer binds the same sets
    every frame, and its actions' blocks, which hold that area already, then skip the copy."""
    seen = device.bound_areas_seen
    if len(seen) >= _KEPT_SAME_AREAS:
        seen.clear()
    return seen.setdefault(area.tobytes(), area)


def post_call_record_cmd_bind_descriptor_sets(
    state: CommandBufferState, bind_point: int, first_set: int, handles: list[int]
) -> None:
    """Remember which set is bound at each index, and its region (issue 8)."""
    descriptors = state.device.descriptors
    if descriptors is None:
        return
    state.bound_areas.pop(bind_point, None)
    words = array("I", state.bound_words.get(bind_point, NO_STATE_WORDS))
    bound = list(state.bound_handles.get(bind_point, ()))
    end = first_set + len(handles)
    if len(bound) < end:
        bound.extend([0] * (end - len(bound)))
    for index, handle in enumerate(handles, first_set):
        bound[index] = handle
        if index < len(words):
            words[index] = descriptors.region_of(handle)
    state.bound_words[bind_point] = words
    state.bound_handles[bind_point] = tuple(bound)


def post_call_record_cmd_push_descriptor_set(
    state: CommandBufferState,
    bind_point: int,
    layout: int,
    set_index: int,
    writes: Sequence[PushedWrite] = (),
) -> None:
    """Pushed descriptors get a region of their set layout with the pushed buffer ranges
    (``DescriptorTracker.push_region``); NO_STATE when the layout is unknown."""
    descriptors = state.device.descriptors
    if descriptors is None:
        return
    pipeline_layout = state.device.pipeline_layouts.get(layout)
    region = NO_STATE
    if pipeline_layout is not None and set_index < len(pipeline_layout.set_layouts):
        region = descriptors.push_region(pipeline_layout.set_layouts[set_index], writes)
    post_call_record_cmd_bind_descriptor_sets(state, bind_point, set_index, [0])
    words = state.bound_words[bind_point]
    if set_index < len(words):
        words[set_index] = region


def post_call_record_cmd_execute_commands(
    state: CommandBufferState, secondaries: Iterable[int]
) -> None:
    """Remember the secondaries so their blocks are read when this primary is submitted."""
    device = state.device
    for handle in secondaries:
        secondary = device.command_buffers.get(handle)
        if secondary is not None:
            state.executed.append(secondary)


def current_action(
    state: CommandBufferState, bind_point: int, command: str, appended: bool
) -> Action | None:
    """The Action of the draw or dispatch just counted by ``pre_call_record_action`` (the last
    one when that ``appended`` it), made with a block of its own (bound to nothing) when its
    pipeline is not instrumented: gpuav's validation dispatch writes there
    (``action_checks``). None without output memory."""
    if appended:
        return state.actions[-1]
    number = state.action_count - 1
    device = state.device
    output = device.output
    if output is None or device.degraded:
        return None
    block = output.acquire()
    if block.spill:
        degrade(device, "no device memory left for output blocks")
        return None
    pipeline = state.bound.get(bind_point) or PipelineState(0, bind_point, 0, False, {})
    state.chunks.add(block.chunk)
    labels = state.labels
    action = Action(
        number,
        command,
        pipeline,
        block,
        state.bound_handles.get(bind_point, ()),
        recording_site.capture(skip=2),
        None if labels is None else labels.at_action,
    )
    state.actions.append(action)
    return action
