"""Label regions open at an action, across command buffers and the queue
(``gpuav.layer.debug_labels``), without a device: the engine works on plain state."""

from __future__ import annotations

from typing import Any

from gpuav.layer import debug_labels
from gpuav.layer.state import CommandBufferState, DeviceState

QUEUE = 0x51


def device() -> DeviceState:
    nothing: Any = None
    return DeviceState(1, nothing, nothing, nothing, True)


def command_buffer(state: DeviceState, handle: int) -> CommandBufferState:
    state.command_buffers[handle] = CommandBufferState(handle, state, 0, True)
    return state.command_buffers[handle]


def at_action(state: CommandBufferState) -> debug_labels.ActionLabels | None:
    """What the layer stores with an action recorded now."""
    return None if state.labels is None else state.labels.at_action


def test_a_region_begun_in_one_command_buffer_and_ended_in_the_next() -> None:
    state = device()
    frame, shadow = command_buffer(state, 10), command_buffer(state, 11)
    debug_labels.cmd_begin_label(frame, "frame 3")
    debug_labels.cmd_begin_label(shadow, "shadow pass")
    in_shadow = at_action(shadow)
    debug_labels.cmd_end_label(shadow)
    debug_labels.cmd_end_label(shadow)  # frame 3, begun in the other one
    after_frame = at_action(shadow)
    debug_labels.post_call_record_queue_submit(state, QUEUE, [10, 11])
    assert debug_labels.labels_at(shadow, in_shadow) == ("frame 3", "shadow pass")
    assert debug_labels.labels_at(shadow, after_frame) == ()
    assert state.queue_labels == {QUEUE: ()}


def test_queue_labels_and_regions_left_open_carry_to_later_submits() -> None:
    state = device()
    first, second = command_buffer(state, 10), command_buffer(state, 11)
    debug_labels.queue_begin_label(state, QUEUE, "startup")
    debug_labels.cmd_begin_label(first, "frame 1")
    debug_labels.post_call_record_queue_submit(state, QUEUE, [10])
    action = at_action(second)  # no label command of its own
    debug_labels.post_call_record_queue_submit(state, QUEUE, [11])
    assert debug_labels.labels_at(second, action) == ("startup", "frame 1")
    debug_labels.queue_end_label(state, QUEUE)  # closes the innermost region on the queue
    assert state.queue_labels == {QUEUE: ("startup",)}


def test_ends_without_any_begin_are_ignored() -> None:
    state = device()
    lonely = command_buffer(state, 10)
    debug_labels.cmd_end_label(lonely)
    debug_labels.cmd_end_label(lonely)
    debug_labels.cmd_begin_label(lonely, "pass")
    action = at_action(lonely)
    debug_labels.queue_end_label(state, QUEUE)
    debug_labels.post_call_record_queue_submit(state, QUEUE, [10, 99])  # 99: unknown handle
    assert debug_labels.labels_at(lonely, action) == ("pass",)
    assert state.queue_labels == {QUEUE: ("pass",)}


def test_an_app_without_labels_pays_nothing_at_submit() -> None:
    state = device()
    plain = command_buffer(state, 10)
    debug_labels.post_call_record_queue_submit(state, QUEUE, [10])
    assert state.queue_labels is None and plain.labels is None
    assert debug_labels.labels_at(plain, None) == ()
