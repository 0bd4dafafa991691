"""QueueSubmit read-back (seed 000: GpuPostCallQueueSubmit).

After the app's submission went down: wait for the queue, then look at each action's block of
every submitted command buffer and of the secondaries they executed. Only the header word of
a block is read unless a shader wrote something; written blocks are decoded, reported, and
zeroed. The host-visibility barrier was recorded at vkEndCommandBuffer, so no extra submission
is needed. Submissions that wait on a host-set event or on timeline semaphore values are not
waited for (that could deadlock): they get a fence and are read back at a later hook (the
app's own waits, the next submit, a reset) once it has signaled. While one is unfinished, later
submissions are deferred the same way: a queue wait would wait for it too.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Sequence

from gpuav.layer import faults
from gpuav.layer.action_reports import report_action
from gpuav.layer.state import CommandBufferState, DeviceState, PendingSubmission

# Deferred submissions are read back from whichever thread next submits, waits or resets:
# two threads at once destroyed one fence twice (a crash) or lost an entry appended meanwhile.
_PENDING_LOCK = threading.RLock()


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


def waits_on_host(device: DeviceState, handles: Iterable[int], waits_for_timeline: bool) -> bool:
    """Whether the submission may wait on the host: timeline values (wait-before-signal) or a
    host-set event, whether or not its command buffers have anything to read."""
    if waits_for_timeline:
        return True
    states = device.command_buffers
    return any(
        state is not None and state.waits_for_host_event
        for state in (states.get(handle) for handle in handles)
    )


def pre_call_record_queue_submit(
    device: DeviceState, command_buffers: Sequence[CommandBufferState]
) -> None:
    """Read an earlier, deferred execution of these command buffers before they run again;
    bring the descriptor state up to date (issue 8: the state at submit time counts)."""
    if device.pending and command_buffers:
        read_back_finished(device, settle=command_buffers)
    descriptors = device.descriptors
    if descriptors is not None and descriptors.state.dirty:
        descriptors.state.flush()


def post_call_record_queue_submit(
    device: DeviceState,
    queue: int,
    command_buffers: Sequence[CommandBufferState],
    waits_for_timeline: bool = False,
) -> None:
    """Wait (or defer), then read and report; call only when the submit succeeded.

    ``waits_for_timeline``: the submission waits on timeline semaphore values, which the host
    or a later submission may signal only after vkQueueSubmit returns (wait-before-signal),
    so waiting here could deadlock just like a host event (``waits_on_host`` says either).
    """
    if device.pending:
        read_back_finished(device)
    if not command_buffers and not waits_for_timeline:
        return
    faults.check("queue_submit")
    # A deferred submission still unfinished may wait on the host (it could sit in this very
    # queue, ahead of this one): waiting for the queue now could deadlock, so defer this too.
    # One that may wait on the host is tracked even with nothing to read, for that reason.
    if (
        waits_for_timeline
        or device.pending
        or any(state.waits_for_host_event for state in command_buffers)
    ):
        fence = device.calls.queue_signal_fence(queue)
        with _PENDING_LOCK:
            device.pending.append(PendingSubmission(fence, list(command_buffers)))
        return
    device.calls.queue_wait_idle(queue)
    read_back(device, command_buffers)


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
    if not any(output.written_in(chunk) for chunk in state.chunks):
        return
    for action in state.actions:
        words = output.take_words(action.block)
        if words is not None:
            report_action(device, state, action, words)


# A command buffer being reset, or a device being destroyed, has finished by the app's own
# synchronization; our fence (signaled after it) may trail by a moment, so wait a little.
SETTLE_TIMEOUT_NS = 1_000_000_000


def read_back_finished(
    device: DeviceState,
    settle: Collection[CommandBufferState] = (),
    settle_all: bool = False,
) -> None:
    """Read deferred submissions whose fence has signaled.

    ``settle``: command buffers the app is about to reset or submit again, so by its own
    synchronization their earlier execution is over; their submissions are waited for
    (briefly) and read before the blocks are reused. ``settle_all``: the device is going
    away; every submission is waited for.
    """
    with _PENDING_LOCK:
        _read_back_finished(device, settle, settle_all)


def _read_back_finished(
    device: DeviceState, settle: Collection[CommandBufferState], settle_all: bool
) -> None:
    still_pending: list[PendingSubmission] = []
    for pending in device.pending:
        wait = settle_all or any(state in settle for state in pending.command_buffers)
        timeout = SETTLE_TIMEOUT_NS if wait else 0
        if device.calls.fence_signaled(pending.fence, timeout):
            device.calls.destroy_fence(pending.fence)
            read_back(device, pending.command_buffers)
        elif settle_all:
            device.calls.destroy_fence(pending.fence)
        else:
            still_pending.append(pending)
    device.pending[:] = still_pending


def post_call_record_wait(device: DeviceState) -> None:
    """After the app waited for a fence or a queue: read what has finished."""
    if device.pending:
        read_back_finished(device)
