"""QueueSubmit read-back (seed 000: GpuPostCallQueueSubmit), without ever waiting for the GPU.

Seed 000 waits for the queue after each submission. gpuav never waits where the app does not:
a submission with instrumented actions gets a fence of ours (an empty submission after it, so
it signals once the app's work is done) and is read back when the app itself learns that its
work finished — its vkWaitForFences, vkGetFenceStatus, vkQueueWaitIdle, vkDeviceWaitIdle —
then briefly waiting for our fence, which trails the app's by moments. Every other hook
(the next submit, semaphore waits and polls) reads what has finished without waiting; a
command buffer reset or submitted again, the device's destruction and the end of the process
read the rest. So the app keeps its CPU/GPU overlap, a submission waiting on the host (events,
timeline values) cannot deadlock the layer, and a shader that never finishes hangs only the
waits the app makes itself, with their time-outs. Only the header word of a block is read
unless a shader wrote something; written blocks are decoded, reported, and zeroed.
"""

from __future__ import annotations

from _thread import RLock  # threading.RLock, without importing threading
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING

from gpuav.layer import binding_summaries, descriptor_buffers, faults
from gpuav.layer.address_publishing import publish_addresses
from gpuav.layer.state import Action, CommandBufferState, DeviceState, PendingSubmission
from gpuav.layer.static_descriptors import report_static_descriptors

if TYPE_CHECKING:
    from gpuav.instrument.record import ErrorRecord

# Submissions are read back from whichever thread next submits, waits or resets: two threads
# at once destroyed one fence twice (a crash) or lost an entry appended meanwhile.
_PENDING_LOCK = RLock()

# Our fence trails a submission the app's own synchronization shows finished by moments.
SETTLE_TIMEOUT_NS = 1_000_000_000


def command_buffers_to_read(
    device: DeviceState, handles: Iterable[int]
) -> list[CommandBufferState]:
    """The submitted command buffers whose execution can leave records."""
    states = device.command_buffers
    found: list[CommandBufferState] = []
    for handle in handles:
        state = states.get(handle)
        if state is not None and (state.actions or state.executed) and state.has_output():
            found.append(state)
    return found


def pre_call_record_queue_submit(
    device: DeviceState, command_buffers: Sequence[CommandBufferState]
) -> None:
    """Read an earlier execution of these command buffers before they run again; bring the
    descriptor state up to date (the state at submit time counts)."""
    if device.pending and command_buffers:
        read_back_finished(device, settle=command_buffers)
    descriptors = device.descriptors
    if device.descriptor_buffers is not None:
        descriptor_buffers.pre_call_record_queue_submit(device, command_buffers)
    binding_summaries.drop_stale(command_buffers)
    if descriptors is not None:
        publish_addresses(descriptors.buffers, descriptors.state)
        if descriptors.state.dirty:
            descriptors.state.flush()


def post_call_record_queue_submit(
    device: DeviceState,
    queue: int,
    command_buffers: Sequence[CommandBufferState],
    app_fence: int = 0,
) -> None:
    """Track the submission for a later read-back; call only when the submit succeeded."""
    if not command_buffers:
        if device.pending:
            read_back_finished(device)  # what finished, read at submits of nothing to read too
        return
    faults.check("queue_submit")
    fence = device.calls.queue_signal_fence(queue)
    with _PENDING_LOCK:
        device.pending.append(PendingSubmission(fence, list(command_buffers), queue, app_fence))


def read_back(device: DeviceState, command_buffers: Sequence[CommandBufferState]) -> None:
    for state in command_buffers:
        _read_command_buffer(device, state)
        for secondary in state.executed:
            _read_command_buffer(device, secondary)


def _read_command_buffer(device: DeviceState, state: CommandBufferState) -> None:
    output = device.output
    if output is None:
        return
    # Most submits write nothing: one look per chunk spares a look at every action's block.
    written = any(output.written_in(chunk) for chunk in state.chunks)
    static_checks = device.descriptors is not None and device.descriptors.tracked_sets > 0
    # Draws of one pipeline and sets find the same statically used descriptors: looked at once.
    looked_at: set[tuple[int, tuple[int, ...]]] = set()
    # An action of the same pipeline and sets objects as the one before is looked at already
    # (a renderer draws many times between binds): found without making its key.
    pipeline: object = None
    bound_sets: object = None
    for action in state.actions:
        words = output.take_words(action.block) if written else None
        records = [] if words is None else _report_action(device, state, action, words)
        if static_checks:
            if not records and action.pipeline is pipeline and action.bound_sets is bound_sets:
                continue
            pipeline = action.pipeline
            bound_sets = action.bound_sets
            key = (action.pipeline.handle, action.bound_sets)
            if records or key not in looked_at:
                looked_at.add(key)
                report_static_descriptors(device, state, action, records)


def _report_action(
    device: DeviceState, state: CommandBufferState, action: Action, words: list[int]
) -> list[ErrorRecord]:
    """``action_reports.report_action``, imported where a shader wrote something: the report
    side (message texts, decoding) is about a tenth of what device creation imported, and
    most runs never need it."""
    from gpuav.layer.action_reports import report_action

    return report_action(device, state, action, words)


def read_back_finished(
    device: DeviceState,
    settle: Collection[CommandBufferState] = (),
    app_fences: Collection[int] = (),
    queue: int | None = None,
    settle_every: bool = False,
    settle_all: bool = False,
) -> None:
    """Read the submissions that have finished.

    What the app's own synchronization shows finished is waited for (briefly) and read:
    submissions of the command buffers in ``settle`` (about to be reset or submitted again),
    those submitted with one of ``app_fences``, those of ``queue``, or every one
    (``settle_every``). ``settle_all``: the device or the process is going away; every
    submission is waited for, and dropped if it does not finish. Our fences are reset and
    kept for later submissions once signalled (``recycle_fence``).
    """
    with _PENDING_LOCK:
        still_pending: list[PendingSubmission] = []
        for pending in device.pending:
            shown_done = (
                settle_all
                or settle_every
                or pending.queue == queue
                or (pending.app_fence != 0 and pending.app_fence in app_fences)
                or any(state in settle for state in pending.command_buffers)
            )
            timeout = SETTLE_TIMEOUT_NS if shown_done else 0
            if device.calls.fence_signaled(pending.fence, timeout):
                device.calls.recycle_fence(pending.fence)
                read_back(device, pending.command_buffers)
            elif settle_all:
                device.calls.destroy_fence(pending.fence)
            else:
                still_pending.append(pending)
        device.pending[:] = still_pending
