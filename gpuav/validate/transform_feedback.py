"""Transform-feedback captures of an entry point and the rules on them (seed 004, XFB part).

A capture is an output variable decorated with Offset (the whole variable is written), or a
member decorated with Offset of an output block (a struct decorated Block); its
XfbBuffer/XfbStride/Stream come from the member or else from the variable. Aggregates are
captured tightly packed, each member aligned to 8 bytes when it holds a 64-bit component and
to 4 bytes otherwise.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import Decoration, Op, StorageClass
from gpuav.spirv.module import Module
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.interface import EntryPointInterface, member_names
from gpuav.validate.interface_locations import has_64_bit


@dataclass(frozen=True)
class XfbCapture:
    name: str
    variable: int
    member: int | None
    buffer: int | None
    stride: int | None
    stream: int
    offset: int
    size: int
    wide: bool  # holds a 64-bit component
    odd_width: bool  # holds a component that is neither 32 nor 64 bits wide
    instruction_index: int | None

    @property
    def end(self) -> int:
        return self.offset + self.size


def xfb_size(types: Types, type_id: int) -> int:
    """Bytes a type occupies when captured (members packed at 4- or 8-byte alignment)."""
    definition = types.definition(type_id)
    if definition.opcode in (Op.TypeInt, Op.TypeFloat, Op.TypeBool):
        return max(types.width(type_id) // 8, 1)
    if definition.opcode in (Op.TypeVector, Op.TypeMatrix):
        return types.component_count(type_id) * xfb_size(types, types.element(type_id))
    if definition.opcode == Op.TypeArray:
        return (types.array_length(type_id) or 0) * xfb_size(types, types.element(type_id))
    if definition.opcode == Op.TypeStruct:
        return xfb_member_offsets(types, type_id)[-1]
    return 0


def xfb_member_offsets(types: Types, struct: int) -> list[int]:
    """Implicit capture offsets of a struct's members, then the struct's padded size."""
    offsets, cursor = [], 0
    for member in types.member_types(struct):
        alignment = 8 if has_64_bit(types, member) else 4
        cursor = -(-cursor // alignment) * alignment
        offsets.append(cursor)
        cursor += xfb_size(types, member)
    alignment = 8 if has_64_bit(types, struct) else 4
    offsets.append(-(-cursor // alignment) * alignment)
    return offsets


def _odd_width(types: Types, type_id: int) -> bool:
    definition = types.definition(type_id)
    if definition.opcode in (Op.TypeInt, Op.TypeFloat):
        return types.width(type_id) not in (32, 64)
    if definition.opcode in (Op.TypeVector, Op.TypeMatrix, Op.TypeArray):
        return _odd_width(types, types.element(type_id))
    if definition.opcode == Op.TypeStruct:
        return any(_odd_width(types, member) for member in types.member_types(type_id))
    return definition.opcode == Op.TypeBool


class TransformFeedback:
    def __init__(self, module: Module, types: Types, decorations: Decorations) -> None:
        self.module = module
        self.types = types
        self.decorations = decorations
        self.member_names = member_names(module)

    def captures(self, entry: EntryPointInterface) -> list[XfbCapture]:
        found: list[XfbCapture] = []
        for variable in entry.variables:
            if variable.storage_class != StorageClass.Output:
                continue
            value = self.decorations.value
            var = variable.variable
            buffer = value(var, Decoration.XfbBuffer)
            stride = value(var, Decoration.XfbStride)
            stream = value(var, Decoration.Stream) or 0
            offset = value(var, Decoration.Offset)
            label = variable.name or f"%{var}"
            if offset is not None:
                found.append(
                    self._capture(
                        label,
                        var,
                        None,
                        buffer,
                        stride,
                        stream,
                        offset,
                        variable.type_id,
                        variable.instruction_index,
                    )
                )
                continue
            struct = variable.type_id
            # Only members of a Block are captured (VUID-StandaloneSpirv-Offset-04716's "block
            # members"): Slang keeps Offset on the members of plain output structs.
            if self.types.opcode(struct) != Op.TypeStruct or not self.decorations.is_block(struct):
                continue
            for member, member_type in enumerate(self.types.member_types(struct)):
                member_offset = self.decorations.member_value(struct, member, Decoration.Offset)
                if member_offset is None:
                    continue
                member_value = self.decorations.member_value
                name = self.member_names.get((struct, member), str(member))
                found.append(
                    self._capture(
                        f"{label}.{name}",
                        var,
                        member,
                        _first(member_value(struct, member, Decoration.XfbBuffer), buffer),
                        _first(member_value(struct, member, Decoration.XfbStride), stride),
                        _first(member_value(struct, member, Decoration.Stream), stream) or 0,
                        member_offset,
                        member_type,
                        variable.instruction_index,
                    )
                )
        return found

    def _capture(
        self,
        name: str,
        variable: int,
        member: int | None,
        buffer: int | None,
        stride: int | None,
        stream: int,
        offset: int,
        type_id: int,
        index: int | None,
    ) -> XfbCapture:
        return XfbCapture(
            name,
            variable,
            member,
            buffer,
            stride,
            stream,
            offset,
            xfb_size(self.types, type_id),
            has_64_bit(self.types, type_id),
            _odd_width(self.types, type_id),
            index,
        )

    def block_buffer_conflicts(self, entry: EntryPointInterface) -> Iterator[Diagnostic]:
        """04697: members of one block with different declared XfbBuffer values."""
        for variable in entry.variables:
            struct = variable.type_id
            if variable.storage_class != StorageClass.Output:
                continue
            if self.types.opcode(struct) != Op.TypeStruct:
                continue
            inherited = self.decorations.value(variable.variable, Decoration.XfbBuffer)
            values = {
                _first(
                    self.decorations.member_value(struct, member, Decoration.XfbBuffer), inherited
                )
                for member in range(len(self.types.member_types(struct)))
            } - {None}
            if len(values) > 1:
                yield Diagnostic(
                    "VUID-StandaloneSpirv-XfbBuffer-04697",
                    f"members of output block {variable.name or variable.variable} use "
                    f"XfbBuffer values {sorted(v for v in values if v is not None)}",
                    variable.instruction_index,
                )


def _first(*values: int | None) -> int | None:
    for value in values:
        if value is not None:
            return value
    return None


def xfb_diagnostics(
    entry: EntryPointInterface, captures: list[XfbCapture], limits: Mapping[str, int]
) -> Iterator[Diagnostic]:
    """Every transform-feedback rule of seed 004 that a module (and known limits) can show."""
    by_buffer: defaultdict[int, list[XfbCapture]] = defaultdict(list)
    for capture in captures:
        where = f"transform-feedback output '{capture.name}' of '{entry.name}'"
        index = capture.instruction_index
        if capture.buffer is None or capture.stride is None:
            yield Diagnostic(
                "VUID-StandaloneSpirv-Offset-04716",
                f"{where} has an Offset but no XfbBuffer/XfbStride to inherit",
                index,
            )
            continue
        by_buffer[capture.buffer].append(capture)
        if capture.wide and capture.offset % 8:
            yield Diagnostic(
                "VUID-StandaloneSpirv-Offset-04687",
                f"{where} holds 64-bit data at Offset {capture.offset}, not a multiple of 8",
                index,
            )
        elif capture.offset % 4:
            yield Diagnostic(
                "VUID-StandaloneSpirv-Offset-04691",
                f"{where} is at Offset {capture.offset}, not a multiple of 4",
                index,
            )
        if capture.odd_width:
            yield Diagnostic(
                "VUID-StandaloneSpirv-Offset-04692",
                f"{where} holds components that are neither 32 nor 64 bits wide",
                index,
            )
        limit = limits.get("maxTransformFeedbackBufferDataSize")
        if limit is not None and capture.end > limit:
            yield Diagnostic(
                "VUID-RuntimeSpirv-Offset-06308",
                f"{where} ends at byte {capture.end} (Offset {capture.offset} + size "
                f"{capture.size}), beyond maxTransformFeedbackBufferDataSize = {limit}",
                index,
            )
        limit = limits.get("maxTransformFeedbackStreams")
        if limit is not None and capture.stream >= limit:
            yield Diagnostic(
                "VUID-RuntimeSpirv-Stream-06312",
                f"{where} uses Stream {capture.stream}; maxTransformFeedbackStreams = {limit}",
                index,
            )
    stream_sizes: defaultdict[int, int] = defaultdict(int)
    for buffer, members in sorted(by_buffer.items()):
        yield from _buffer_rules(entry, buffer, members, limits)
        stream_sizes[members[0].stream] += max(capture.end for capture in members)
    limit = limits.get("maxTransformFeedbackStreamDataSize")
    for stream, size in sorted(stream_sizes.items()):
        if limit is not None and size > limit:
            yield Diagnostic(
                "VUID-RuntimeSpirv-XfbBuffer-06309",
                f"the buffers of stream {stream} in '{entry.name}' hold {size} bytes per vertex, "
                f"more than maxTransformFeedbackStreamDataSize = {limit}",
                entry.instruction_index,
            )


def _buffer_rules(
    entry: EntryPointInterface, buffer: int, members: list[XfbCapture], limits: Mapping[str, int]
) -> Iterator[Diagnostic]:
    where = f"XfbBuffer {buffer} of '{entry.name}'"
    first = members[0].instruction_index
    strides = sorted({capture.stride for capture in members if capture.stride is not None})
    if len(strides) > 1:
        yield Diagnostic(
            "VUID-StandaloneSpirv-XfbBuffer-04693",
            f"{where} is given different XfbStride values {strides}",
            first,
        )
    streams = sorted({capture.stream for capture in members})
    if len(streams) > 1:
        yield Diagnostic(
            "VUID-StandaloneSpirv-Stream-04694",
            f"{where} is written from different streams {streams}",
            first,
        )
    ordered = sorted(members, key=lambda capture: (capture.offset, capture.end))
    reach = ordered[0]  # the capture reaching furthest so far
    for after in ordered[1:]:
        if after.offset < reach.end:
            yield Diagnostic(
                "VUID-StandaloneSpirv-XfbBuffer-04696",
                f"{where}: '{reach.name}' (bytes {reach.offset}..{reach.end - 1}) and "
                f"'{after.name}' (bytes {after.offset}..{after.end - 1}) overlap",
                after.instruction_index,
            )
        if after.end > reach.end:
            reach = after
    wide = any(capture.wide for capture in members)
    alignment = 8 if wide else 4
    end = max(capture.end for capture in members)
    buffers = limits.get("maxTransformFeedbackBuffers")
    if buffers is not None and buffer >= buffers:
        yield Diagnostic(
            "GPUAV-XfbBuffer-maxTransformFeedbackBuffers",
            f"{where} is not below maxTransformFeedbackBuffers = {buffers}",
            first,
        )
    for stride in strides:
        # GLSL's xfb_stride rule (GL_ARB_enhanced_layouts); the Vulkan spec has no VUID for it.
        if stride % alignment:
            yield Diagnostic(
                "GPUAV-XfbStride-alignment",
                f"{where} has XfbStride {stride}, not a multiple of {alignment}"
                + (" (it captures 64-bit data)" if wide else ""),
                first,
            )
        if stride < end:
            yield Diagnostic(
                "GPUAV-XfbStride-extent",
                f"{where} has XfbStride {stride} but its captures reach byte {end}",
                first,
            )
        limit = limits.get("maxTransformFeedbackBufferDataStride")
        if limit is not None and stride > limit:
            yield Diagnostic(
                "VUID-RuntimeSpirv-XfbStride-06313",
                f"{where} has XfbStride {stride}, above maxTransformFeedbackBufferDataStride "
                f"= {limit}",
                first,
            )


def emit_stream_diagnostics(
    module: Module, types: Types, limits: Mapping[str, int]
) -> Iterator[Diagnostic]:
    """06310: the constant stream of OpEmitStreamVertex/OpEndStreamPrimitive is below the limit."""
    limit = limits.get("maxTransformFeedbackStreams")
    if limit is None:
        return
    for function in module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                if instruction.opcode not in (Op.EmitStreamVertex, Op.EndStreamPrimitive):
                    continue
                stream = types.constant_value(instruction.operands[0])
                if stream is not None and stream >= limit:
                    yield Diagnostic(
                        "VUID-RuntimeSpirv-OpEmitStreamVertex-06310",
                        f"{instruction.name} uses stream {stream}; "
                        f"maxTransformFeedbackStreams = {limit}",
                        instruction.origin,
                    )
