"""Debug-utils label regions (VK_EXT_debug_utils): the labels open at each action.

A region may begin in one command buffer and end in another submitted after it, or on the
queue itself (vkQueueBeginDebugUtilsLabelEXT), so a command buffer knows only the labels it
opened and how many regions opened before it that it closed. Each action keeps both; a submit
lays its command buffers on their queue's stack of open labels, in submission order, and
remembers for each one the labels open when it starts. An action's labels are those it
inherited (less the regions its command buffer closed before it) followed by its own. An end
with no region open anywhere is ignored. Labels in a secondary command buffer are its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuav.layer.state import CommandBufferState, DeviceState


@dataclass(frozen=True, slots=True)
class ActionLabels:
    """What an action knows of the labels open at it, before its submit."""

    own: tuple[str, ...]  # opened in its command buffer, outermost first
    closed_inherited: int  # regions its command buffer closed that it had not opened


NO_LABELS = ActionLabels((), 0)


@dataclass(slots=True)
class CommandBufferLabels:
    """One command buffer's label commands as recorded, and what its last submit inherited."""

    at_action: ActionLabels = NO_LABELS
    inherited: tuple[str, ...] = ()

    def begin(self, name: str) -> None:
        self.at_action = ActionLabels((*self.at_action.own, name), self.at_action.closed_inherited)

    def end(self) -> None:
        own, closed = self.at_action.own, self.at_action.closed_inherited
        self.at_action = ActionLabels(own[:-1], closed) if own else ActionLabels(own, closed + 1)


def _labels_of(state: CommandBufferState) -> CommandBufferLabels:
    labels = state.labels
    if labels is None:
        labels = state.labels = CommandBufferLabels()
    if state.device.queue_labels is None:
        state.device.queue_labels = {}
    return labels


def cmd_begin_label(state: CommandBufferState, name: str) -> None:
    _labels_of(state).begin(name)


def cmd_end_label(state: CommandBufferState) -> None:
    _labels_of(state).end()


def queue_begin_label(device: DeviceState, queue: int, name: str) -> None:
    stacks = device.queue_labels
    if stacks is None:
        stacks = device.queue_labels = {}
    stacks[queue] = (*stacks.get(queue, ()), name)


def queue_end_label(device: DeviceState, queue: int) -> None:
    stacks = device.queue_labels
    if stacks is not None and stacks.get(queue):
        stacks[queue] = stacks[queue][:-1]


def post_call_record_queue_submit(device: DeviceState, queue: int, handles: Iterable[int]) -> None:
    """Lay the submitted command buffers on the queue's label stack, in order."""
    stacks = device.queue_labels
    if stacks is None:
        return
    stack = stacks.get(queue, ())
    states = device.command_buffers
    for handle in handles:
        state = states.get(handle)
        if state is None or (state.labels is None and not stack):
            continue
        labels = _labels_of(state)
        labels.inherited = stack
        at_end = labels.at_action
        stack = stack[: max(0, len(stack) - at_end.closed_inherited)] + at_end.own
    stacks[queue] = stack


def labels_at(state: CommandBufferState, action_labels: ActionLabels | None) -> tuple[str, ...]:
    """The labels open at an action of ``state``, outermost first."""
    own = action_labels or NO_LABELS
    inherited = state.labels.inherited if state.labels is not None else ()
    return inherited[: max(0, len(inherited) - own.closed_inherited)] + own.own
