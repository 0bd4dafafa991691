"""Messages for an action's records from gpuav's validation dispatch: the facts the layer kept
when the action was recorded (its indirect, index and vertex buffers, named), the record's
numbers (``gpuav.report.action_check_text``), and the action's own lines."""

from __future__ import annotations

from collections.abc import Sequence

import vulkan as vk

from gpuav.instrument.record import ErrorRecord
from gpuav.layer.action_checks import FetchFacts
from gpuav.layer.state import Action, CommandBufferState, DeviceState
from gpuav.layer.vertex_input import BoundVertexBuffer, Limit
from gpuav.report.action_check_text import (
    Buffer,
    CheckFacts,
    VertexFetch,
    check_message,
    fold,
)
from gpuav.report.context import ActionContext
from gpuav.report.message_fields import message_fields
from gpuav.report.messages import INDENT, Message, Severity

_FORMAT_NAMES = {
    value: name
    for name, value in vars(vk).items()
    if name.startswith("VK_FORMAT_") and isinstance(value, int)
}


def _buffer(device: DeviceState, handle: int, offset: int) -> Buffer:
    tracker = device.descriptors
    size = None if tracker is None else tracker.buffers.size_of(handle)
    return Buffer(handle, device.name_of(handle), offset, size)


def _fetch(device: DeviceState, limit: Limit | None) -> VertexFetch | None:
    if limit is None:
        return None
    bound: BoundVertexBuffer = limit.bound
    attribute = limit.attribute
    return VertexFetch(
        attribute.binding,
        attribute.location,
        _FORMAT_NAMES.get(attribute.format, str(attribute.format)),
        attribute.offset,
        attribute.size,
        limit.stride,
        limit.available,
        _buffer(device, bound.buffer, bound.offset),
    )


def check_facts(device: DeviceState, facts: FetchFacts | None) -> CheckFacts:
    if facts is None:
        return CheckFacts()
    indirect = facts.indirect
    index = facts.index
    return CheckFacts(
        None if indirect is None else _buffer(device, indirect.buffer, facts.indirect_offset),
        None if index is None else _buffer(device, index.buffer, index.offset),
        None if index is None else index.index_type,
        _fetch(device, facts.vertex),
        _fetch(device, facts.instance),
        facts.group_kind,
    )


def _action_lines(context: ActionContext) -> list[str]:
    kind = "Draw" if "Draw" in context.command else "Dispatch"
    name = f" ({context.command_buffer_name})" if context.command_buffer_name else ""
    lines = [
        f"Command buffer{name}(0x{context.command_buffer:x}). {kind} Index "
        f"{context.action_number} ({context.command})."
    ]
    if context.recorded_at is not None:
        lines.append(f"Recorded at {context.recorded_at.describe()}.")
    if context.labels:
        lines.append(f"Labels: {' > '.join(context.labels)}.")
    if context.pipeline:
        name = f" ({context.pipeline_name})" if context.pipeline_name else ""
        lines.append(f"Pipeline{name}(0x{context.pipeline:x}).")
    return lines


def compose_check_messages(
    device: DeviceState,
    state: CommandBufferState,
    action: Action,
    records: Sequence[ErrorRecord],
    context: ActionContext,
) -> list[Message]:
    """One message per distinct error of the action's validation dispatch."""
    number = action.number
    kept = None if state.checks is None or number is None else state.checks.facts
    facts = check_facts(device, None if kept is None or number is None else kept.get(number))
    messages = []
    for record, count in fold(records):
        said = check_message(record, action.command, facts, device.robust_buffer_access)
        lines = [*said.details, *_action_lines(context)]
        if said.warning and device.robust_buffer_access:
            lines.append(
                "Robust buffer access is on, so the fetch is defined, but it is almost always "
                "a bug."
            )
        text = "\n".join([said.problem, *(INDENT + line for line in lines)])
        fields = message_fields(record, count, context, None, None, None)
        fields["invocation"] = None
        fields["shader"] = None
        fields["error"].update(said.error_fields)
        severity = Severity.WARNING if said.warning else Severity.ERROR
        messages.append(Message(said.message_id, severity, text, record, count, fields=fields))
    return messages
