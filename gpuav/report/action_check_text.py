"""Messages for the records of gpuav's validation dispatch (``gpuav.layer.action_checks``):
indirect group counts, firstInstance, draw counts, index ranges and vertex fetches. Each names
the parameter, its value, the limit it broke and where that limit comes from (the device limit,
the feature, the bound index or vertex buffer with its offset, size and stride), then the
action as shader messages do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gpuav.instrument.record import ErrorCode, ErrorRecord

AXES = "xyz"
UNLIMITED = 0xFFFF_FFFF
INDEX_TYPE_NAMES = {
    0: "VK_INDEX_TYPE_UINT16",
    1: "VK_INDEX_TYPE_UINT32",
    1000265000: "VK_INDEX_TYPE_UINT8",
}
_GROUP_VUIDS = {
    "compute": ("VUID-VkDispatchIndirectCommand-x-00417", "VUID-VkDispatchIndirectCommand-y-00418",
                "VUID-VkDispatchIndirectCommand-z-00419", None),
    "task": tuple(f"VUID-VkDrawMeshTasksIndirectCommandEXT-TaskEXT-0732{k}" for k in "2345"),
    "mesh": tuple(f"VUID-VkDrawMeshTasksIndirectCommandEXT-MeshEXT-0732{k}" for k in "6789"),
}  # fmt: skip
_GROUP_LIMITS = {
    "compute": "maxComputeWorkGroupCount",
    "task": "maxTaskWorkGroupCount",
    "mesh": "maxMeshWorkGroupCount",
}
DRAW_COUNT_WARNING_ID = "GPUAV-draw-count-past-buffer"


@dataclass(frozen=True)
class Buffer:
    handle: int
    name: str | None
    offset: int  # bound at
    size: int | None  # the buffer's

    def describe(self) -> str:
        name = f" '{self.name}'" if self.name else ""
        size = "" if self.size is None else f", buffer size {self.size}"
        return f"buffer{name} (0x{self.handle:x}) bound at offset {self.offset}{size}"


@dataclass(frozen=True)
class VertexFetch:
    """The attribute that allows the fewest vertices (or instances)."""

    binding: int
    location: int
    format_name: str
    attribute_offset: int
    attribute_size: int
    stride: int
    available: int  # bytes from the bound offset
    buffer: Buffer


@dataclass(frozen=True)
class CheckFacts:
    """What the layer knew of the action when it was recorded."""

    indirect: Buffer | None = None
    index: Buffer | None = None
    index_type: int | None = None
    vertex: VertexFetch | None = None
    instance: VertexFetch | None = None
    group_kind: str = "compute"  # compute, task or mesh


@dataclass(frozen=True)
class CheckMessage:
    message_id: str
    warning: bool
    problem: str
    details: tuple[str, ...]
    error_fields: dict[str, Any]


def _structure(command: str) -> str:
    if "MeshTasks" in command:
        return "VkDrawMeshTasksIndirectCommandEXT"
    if "Dispatch" in command:
        return "VkDispatchIndirectCommand"
    return "VkDrawIndexedIndirectCommand" if "Indexed" in command else "VkDrawIndirectCommand"


def _draw_of(command: str, structure: str, draw: int) -> str:
    """Which draw: an indirect command's structure, a multi-draw's element, or the command."""
    if "Indirect" in command:
        return f"{structure}[{draw}]"
    if "Multi" in command:
        infos = "pIndexInfo" if "Indexed" in command else "pVertexInfo"
        return f"{command} draw {draw} ({infos}[{draw}])"
    return command


def _fetch_line(fetch: VertexFetch | None, what: str) -> list[str]:
    if fetch is None:
        return []
    return [
        f"Vertex buffer binding {fetch.binding}: {fetch.buffer.describe()}, {fetch.available} "
        f"bytes from there, stride {fetch.stride}; attribute location {fetch.location} "
        f"({fetch.format_name}, {fetch.attribute_size} bytes at offset "
        f"{fetch.attribute_offset}) limits the {what}."
    ]


def _group_message(record: ErrorRecord, command: str, facts: CheckFacts) -> CheckMessage:
    draw = record.descriptor_index
    axis, value, limit = record.details[:3]
    kind = facts.group_kind
    vuids = _GROUP_VUIDS[kind]
    structure = _structure(command)
    at_index = f"[{draw}]" if "MeshTasks" in command else ""
    if axis == 3:
        total = "more than 2^32" if value == UNLIMITED else str(value)
        problem = (
            f"{structure}{at_index}: groupCountX * groupCountY * groupCountZ is {total}, greater "
            f"than {kind.replace('task', 'maxTask').replace('mesh', 'maxMesh')}"
            f"WorkGroupTotalCount ({limit})."
        )
        vuid = vuids[3] or f"GPUAV-{kind}-group-total"
    else:
        member = AXES[axis] if kind == "compute" else f"groupCount{AXES[axis].upper()}"
        problem = (
            f"{structure}{at_index}::{member} is {value}, greater than "
            f"{_GROUP_LIMITS[kind]}[{axis}] ({limit})."
        )
        vuid = vuids[axis] or ""
    details = () if facts.indirect is None else (f"Indirect {facts.indirect.describe()}.",)
    return CheckMessage(
        vuid, False, problem, details,
        {"draw": draw, "member": AXES[axis] if axis < 3 else "total", "value": value,
         "limit": limit},
    )  # fmt: skip


def check_message(
    record: ErrorRecord, command: str, facts: CheckFacts, robust: bool
) -> CheckMessage:
    """What one record says (see ``ErrorCode``'s comments for its words)."""
    code = record.error_code
    draw = record.descriptor_index
    words = (*record.details, 0, 0, 0, 0, 0)[:5]
    structure = _structure(command)
    indirect = () if facts.indirect is None else (f"Indirect {facts.indirect.describe()}.",)
    if code is ErrorCode.GROUP_COUNT:
        return _group_message(record, command, facts)
    if code is ErrorCode.FIRST_INSTANCE:
        member = "00554" if "Indexed" in structure else "00501"
        return CheckMessage(
            f"VUID-{structure}-firstInstance-{member}", False,
            f"The firstInstance member of {structure}[{draw}] is {words[0]}, but the "
            "drawIndirectFirstInstance feature is not enabled (it must be 0).",
            indirect, {"draw": draw, "first_instance": words[0]},
        )  # fmt: skip
    if code is ErrorCode.DRAW_COUNT_LIMIT:
        return CheckMessage(
            f"VUID-{command}-countBuffer-02717", False,
            f"The count buffer holds a draw count of {words[0]}, greater than "
            f"maxDrawIndirectCount ({words[1]}).",
            indirect, {"count": words[0], "limit": words[1]},
        )  # fmt: skip
    if code is ErrorCode.DRAW_COUNT_PAST_BUFFER:
        count, max_count, held = words[0], words[1], words[2]
        drawn = min(count, max_count)
        reads_past = drawn > held
        if reads_past:
            suffix = "03121" if count == 1 else "03122"
            message_id = f"VUID-{command}-countBuffer-{suffix}"
        else:
            message_id = DRAW_COUNT_WARNING_ID
        effect = (
            f"so {drawn - held} of the {drawn} draws read past its end"
            if reads_past
            else f"maxDrawCount ({max_count}) keeps the draws inside it"
        )
        return CheckMessage(
            message_id, not reads_past,
            f"The count buffer holds a draw count of {count}, but the indirect buffer holds "
            f"{held} {structure} from the given offset; {effect}.",
            indirect, {"count": count, "max_draw_count": max_count, "commands_in_buffer": held},
        )  # fmt: skip
    if code is ErrorCode.INDEX_RANGE:
        first, count, held = words[0], words[1], words[2]
        where = f"{_draw_of(command, structure, draw)} has"
        vuid = (
            f"VUID-{structure}-robustBufferAccess2-08798"
            if "Indirect" in command
            else f"VUID-{command}-robustBufferAccess2-08798"
        )
        index = _index_line(facts)
        return CheckMessage(
            vuid, robust,
            f"{where} firstIndex {first} and indexCount {count}: indices [{first}, "
            f"{first + count}) reach {first + count - held} past the {held} indices bound.",
            (*index, *indirect), {"draw": draw, "first_index": first, "index_count": count,
                                   "indices_bound": held},
        )  # fmt: skip
    if code is ErrorCode.VERTEX_RANGE:
        first, count, held, instances = words[0], words[1], words[2], words[3]
        noun = "instances" if instances else "vertices"
        names = ("firstInstance", "instanceCount") if instances else ("firstVertex", "vertexCount")
        where = _draw_of(command, structure, draw)
        fetch = facts.instance if instances else facts.vertex
        return CheckMessage(
            f"VUID-{command}-None-02721", robust,
            f"{where}: {names[0]} {first} and {names[1]} {count} fetch {noun} [{first}, "
            f"{first + count}), but the bound vertex buffers hold {held} {noun} for the "
            f"pipeline's {'per-instance' if instances else 'per-vertex'} attributes.",
            (*_fetch_line(fetch, noun), *indirect),
            {"draw": draw, "first": first, "count": count, "held": held,
             "rate": "instance" if instances else "vertex"},
        )  # fmt: skip
    position, value, offset, held, bad = words
    signed = offset - (1 << 32) if offset >= 1 << 31 else offset
    # A multi-draw's index scans do not say which of its draws they scanned.
    where = (
        f"{command} (one of its draws)"
        if "Multi" in command
        else _draw_of(command, structure, draw)
    )
    plural = "indices" if bad != 1 else "index"
    return CheckMessage(
        f"VUID-{command}-None-02721", robust,
        f"{where}: index buffer element {position} is {value}, and with vertexOffset {signed} "
        f"it fetches vertex {value + signed}, past the {held} vertices the bound vertex "
        f"buffers hold ({bad} {plural} of this draw {'do' if bad != 1 else 'does'} so).",
        (*_fetch_line(facts.vertex, "vertices"), *_index_line(facts), *indirect),
        {"draw": draw, "index_position": position, "index": value, "vertex_offset": signed,
         "vertex": value + signed, "vertices_held": held, "indices_past": bad},
    )  # fmt: skip


def _index_line(facts: CheckFacts) -> tuple[str, ...]:
    if facts.index is None:
        return ()
    kind = INDEX_TYPE_NAMES.get(facts.index_type or 0, str(facts.index_type))
    return (f"Index {facts.index.describe()}, {kind}.",)


def fold(records: Sequence[ErrorRecord]) -> list[tuple[ErrorRecord, int]]:
    """One entry per distinct record, with how many workgroups (or submissions' copies) wrote
    it: the index scan writes a record per workgroup that found a bad index."""
    groups: dict[tuple[int, ...], list[ErrorRecord]] = {}
    for record in records:
        key: tuple[int, ...] = (int(record.error_code), record.descriptor_index)
        if record.error_code is not ErrorCode.VERTEX_INDEX_RANGE:
            key += tuple(record.details)
        groups.setdefault(key, []).append(record)
    folded = []
    for group in groups.values():
        first = min(group, key=lambda r: r.details[0] if r.details else 0)
        if first.error_code is ErrorCode.VERTEX_INDEX_RANGE and len(group) > 1:
            total = sum(r.details[4] for r in group if len(r.details) > 4)
            first = ErrorRecord(
                first.shader_id, first.instruction_index, first.stage, first.stage_words,
                first.error_code, first.descriptor_index, None, (*first.details[:4], total),
            )  # fmt: skip
        folded.append((first, len(group)))
    return folded
