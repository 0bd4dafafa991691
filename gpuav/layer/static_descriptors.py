"""Descriptors a pipeline statically uses that were not valid when its action ran, whether or
not a shader reached them (VUID-...-None-08114: every descriptor of a statically used binding
without VK_DESCRIPTOR_BINDING_PARTIALLY_BOUND_BIT must be valid). The shaders report the
descriptors they reach, with the source line; this reports, at read-back, the ones of such
bindings they did not report: one message per pipeline, set, binding and first unusable index.

What a pipeline statically uses is read from its shaders' original words once; what an
action's bound sets hold is looked up once per pipeline, bound sets and tracker generation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuav.instrument.descriptor_state import binding_size_word
from gpuav.instrument.record import ErrorCode, ErrorRecord, unpack_set_binding
from gpuav.layer.reporting import LayerMessage
from gpuav.report.unusable_descriptor_text import message_id
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import Decoration, Op

if TYPE_CHECKING:
    from gpuav.layer.descriptor_sets import DescriptorTracker
    from gpuav.layer.state import Action, CommandBufferState, DeviceState, PipelineState

DESCRIPTOR_STORAGE_CLASSES = frozenset({0, 2, 12})  # UniformConstant, Uniform, StorageBuffer
KEPT_ENTRIES = 4096  # per table, so that a long run's pipelines and sets do not pile up


@dataclass(frozen=True)
class UsedBinding:
    """A descriptor variable a shader uses: its name ("" unnamed) and how many descriptors
    of the binding it can reach (None: a runtime array reaches them all)."""

    name: str
    length: int | None


Bindings = dict[tuple[int, int], UsedBinding]


@dataclass(frozen=True)
class StaticFinding:
    """A statically used binding's first unusable descriptor, and how many there are."""

    descriptor_set: int
    binding: int
    index: int
    unusable: int
    length: int
    name: str


def statically_used(words: Sequence[int]) -> Bindings:
    """The (set, binding) of every descriptor variable a function of the shader uses."""
    from gpuav.report.shader_info import shader_info  # the report side: when first needed

    module = shader_info(words).module
    if module is None:
        return {}
    sets: dict[int, int] = {}
    bindings: dict[int, int] = {}
    for annotation in module.annotations:
        if annotation.opcode != Op.Decorate or len(annotation.operands) < 3:
            continue
        target, decoration, value = annotation.operands[:3]
        if decoration == Decoration.DescriptorSet:
            sets[target] = value
        elif decoration == Decoration.Binding:
            bindings[target] = value
    variables = {
        g.result_id
        for g in module.globals
        if g.opcode == Op.Variable
        and g.result_id in sets
        and g.result_id in bindings
        and len(g.operands) > 2
        and g.operands[2] in DESCRIPTOR_STORAGE_CLASSES
    }
    positions = IdOperands(module).positions
    used: set[int] = set()
    for function in module.functions:
        for instruction in function.all_instructions():
            for at in positions(instruction):
                if instruction.operands[at] in variables:
                    used.add(instruction.operands[at])
    names = {n.operands[0]: n.string(1) for n in module.debug_names if n.opcode == Op.Name}
    types = Types({g.result_id: g for g in module.globals if g.result_id is not None})
    return {(sets[v], bindings[v]): UsedBinding(names.get(v, ""), _reach(types, v)) for v in used}


def _reach(types: Types, variable: int) -> int | None:
    """How many descriptors an (arrayed) variable's type holds; None for a runtime array or
    a length that is not a plain constant."""
    pointer = types.type_of(variable)
    if pointer is None or not types.is_pointer(pointer):
        return None
    _, arrays = types.strip_arrays(types.pointee(pointer))
    count = 1
    for array_type in arrays:
        length = types.array_length(array_type)
        if length is None:
            return None
        count *= length
    return count


class StaticDescriptorChecks:
    """Per device: the bindings each pipeline statically uses, and what was found and said."""

    def __init__(self) -> None:
        # by pipeline handle; the state object tells a handle that came back for another one
        self._bindings: dict[int, tuple[PipelineState, Bindings]] = {}
        self._found: dict[tuple[int, tuple[int, ...]], tuple[int, list[StaticFinding]]] = {}
        self._said: set[tuple[int, int, int, int]] = set()

    def bindings(self, pipeline: PipelineState) -> Bindings:
        known = self._bindings.get(pipeline.handle)
        if known is None or known[0] is not pipeline:
            used: Bindings = {}
            for tracker in pipeline.shaders.values():
                used.update(statically_used(tracker.words))
            if len(self._bindings) >= KEPT_ENTRIES:
                self._bindings.clear()  # the destroyed pipelines' go with the live ones'
            known = self._bindings[pipeline.handle] = (pipeline, used)
        return known[1]

    def findings(self, tracker: DescriptorTracker, action: Action) -> list[StaticFinding]:
        key = (action.pipeline.handle, action.bound_sets)
        cached = self._found.get(key)
        if cached is not None and cached[0] == tracker.generation:
            return cached[1]
        found = list(_unusable(tracker, action.bound_sets, self.bindings(action.pipeline)))
        if len(self._found) >= KEPT_ENTRIES:
            self._found.clear()
        self._found[key] = (tracker.generation, found)
        return found

    def new_findings(
        self, tracker: DescriptorTracker, action: Action, records: Iterable[ErrorRecord]
    ) -> list[StaticFinding]:
        """What this action's sets hold that the shaders did not report, said once per
        pipeline, set handle, binding and first unusable index."""
        reported = {_reported(record) for record in records} - {None}
        fresh = []
        for finding in self.findings(tracker, action):
            if (finding.descriptor_set, finding.binding) in reported:
                continue
            handle = action.bound_sets[finding.descriptor_set]
            said = (action.pipeline.handle, handle, finding.binding, finding.index)
            if said not in self._said:
                if len(self._said) >= KEPT_ENTRIES:
                    self._said.clear()
                self._said.add(said)
                fresh.append(finding)
        return fresh


def _reported(record: ErrorRecord) -> tuple[int, int] | None:
    """(set, binding) of a record about an unusable descriptor the shader reached."""
    from gpuav.report.messages import unusable_buffer  # the report side: when first needed

    if record.error_code is ErrorCode.DESCRIPTOR_UNINITIALIZED and record.details:
        return unpack_set_binding(record.details[0])
    return unusable_buffer(record)


def _unusable(
    tracker: DescriptorTracker, bound_sets: Sequence[int], bindings: Bindings
) -> Iterable[StaticFinding]:
    for (set_index, binding), used in sorted(bindings.items()):
        if set_index >= len(bound_sets) or not bound_sets[set_index]:
            continue
        target = tracker.sets.get(bound_sets[set_index])
        layout = None if target is None else target.layout
        if target is None or layout is None or binding not in layout.tracked:
            continue
        if binding in layout.partially_bound or binding >= target.region.words[0]:
            continue
        words = target.region.words
        start = target.table(binding)
        length = words[binding_size_word(binding)]
        reached = length if used.length is None else min(length, used.length)
        zeros = [k for k in range(reached) if words[start + k] == 0]
        if zeros:
            yield StaticFinding(set_index, binding, zeros[0], len(zeros), length, used.name)


def report_static_descriptors(
    device: DeviceState, state: CommandBufferState, action: Action, records: list[ErrorRecord]
) -> None:
    """Say what ``action``'s bound sets held, unusable, that its shaders did not report."""
    tracker = device.descriptors
    if tracker is None or not action.bound_sets or action.block.spill:
        return
    for finding in tracker.static_uses.new_findings(tracker, action, records):
        device.reporter.emit(_message(device, state, action, finding))


def _message(
    device: DeviceState, state: CommandBufferState, action: Action, finding: StaticFinding
) -> LayerMessage:
    from gpuav.report.messages import action_kind

    command = action.command
    what = f"'{finding.name}', " if finding.name else ""
    subject = (
        "The descriptor"
        if finding.length == 1
        else f"Descriptor index {finding.index} of {finding.length}"
    )
    more = "" if finding.unusable <= 1 else f" ({finding.unusable} of the binding's are)"
    pipeline = action.pipeline.handle
    lines = [
        f"{subject} at {what}set {finding.descriptor_set}, binding {finding.binding} is "
        f"uninitialized or names a destroyed object{more}, and the pipeline statically uses "
        f"that binding, which is not VK_DESCRIPTOR_BINDING_PARTIALLY_BOUND_BIT: every "
        f"descriptor of it must be valid when {command} runs, even where no invocation reads "
        f"it (none did in this action).",
        f"  {_named('Command buffer', device.name_of(state.handle), state.handle)}. "
        f"{action_kind(command)} Index {action.number} ({command}).",
        f"  {_named('Pipeline', device.name_of(pipeline), pipeline)}.",
    ]
    return LayerMessage(message_id=message_id(command), severity="error", text="\n".join(lines))


def _named(kind: str, name: str | None, handle: int) -> str:
    return f"{kind} ({name})(0x{handle:x})" if name else f"{kind} (0x{handle:x})"
