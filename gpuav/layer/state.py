"""What the engine tracks per instance, device, shader, pipeline and command buffer.

Plain Python objects keyed by handle (ints). Records that the per-draw path touches use
``__slots__`` so that recording an action costs a few attribute reads. Entry points may run
on several threads at once (under the GIL): state changes are single dict or list
operations, and the one compound change, growing the output memory, takes a lock
(``output_buffers``).
"""

from __future__ import annotations

import itertools
from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuav.layer.calls import SHADER_STAGES_CORE
from gpuav.layer.instance_state import InstanceState as InstanceState
from gpuav.layer.reporting import Reporter

if TYPE_CHECKING:  # recording_site brings the report modules: not at instance creation
    from gpuav.instrument.host_terms import EntryVerdicts, Verdict
    from gpuav.layer.action_checks import ActionCheckDevice, ActionCheckState
    from gpuav.layer.calls import (
        DeviceCalls,
        OutputBindBeforeAction,
        PhysicalDeviceFacts,
        PushedConstants,
    )
    from gpuav.layer.debug_labels import ActionLabels, CommandBufferLabels
    from gpuav.layer.descriptor_buffers import DescriptorBufferBindings, DescriptorBufferTracker
    from gpuav.layer.descriptor_sets import DescriptorTracker
    from gpuav.layer.module_cache import Outcome
    from gpuav.layer.output_buffers import Block, Chunk, OutputBuffers
    from gpuav.layer.recording_site import RecordedAt
    from gpuav.layer.state_buffer import Region


@dataclass
class ShaderModuleState:
    """A module the app created; ``shadow`` is our instrumented twin (0 when there is none).
    ``code`` is its words as bytes (the machine's order), made into ints only when a pipeline
    first asks for ``words`` (creating a module again makes none)."""

    handle: int
    shader_id: int
    code: bytes
    shadow: int = 0
    context_shadow: int = 0  # instrumented to reach our buffers through a context address
    pending: Outcome | None = None  # made into ``shadow`` at first use (shader_modules.shadow_of)
    context_tried: bool = False
    verdicts: EntryVerdicts = ()  # ``shadow``'s entry functions with an unchecked copy
    _words: tuple[int, ...] | None = None

    @property
    def words(self) -> tuple[int, ...]:
        if self._words is None:
            self._words = tuple(memoryview(self.code).cast("I"))
        return self._words


@dataclass
class PipelineLayoutState:
    handle: int
    set_count: int
    patched: bool
    pipelines: int = 0  # live pipelines that bind our set through this layout
    destroyed_by_app: bool = False
    # Not patched, but given a push constant for the context address (issue 8): the stages
    # to push it with (0: none, the pipelines keep their original shaders).
    context_stages: int = 0
    set_layouts: tuple[int, ...] = ()  # the app's, by set index (push descriptors, issue 8)


@dataclass(frozen=True)
class ShaderTracker:
    """Seed 000's shader tracker: lives as long as the pipeline, keeps the original words so
    that destroying the module before submit still yields a full report."""

    shader_id: int
    module: int
    pipeline: int  # the pipeline, or the shader object (``shader_object``)
    words: tuple[int, ...]
    shader_object: bool = False


@dataclass(slots=True)
class ShaderObjectState:
    """An instrumented shader object (VK_EXT_shader_object): its tracker, and ``layout``, a
    pipeline layout of ours with exactly its push-constant ranges, through which each action
    pushes the context address (``shader_objects``)."""

    tracker: ShaderTracker
    stage: int
    layout: int
    context_stages: int
    # Its specialization (map entries as (id, offset, size), and the data), and the driver's
    # binary of the app's own code, which vkGetShaderBinaryDataEXT hands out in place of the
    # instrumented code's (``shader_object_binaries``; None when it could not be made).
    specialization: tuple[tuple[tuple[int, int, int], ...], bytes] | None = None
    binary: bytes | None = None


@dataclass(slots=True)
class IndirectExecutionSet:
    """A VkIndirectExecutionSetEXT: the pipelines (or shader objects) it holds by index, which
    a vkCmdExecuteGeneratedCommandsEXT may switch to (``execution_sets``)."""

    shader_objects: bool
    members: dict[int, int]


@dataclass(slots=True)
class PipelineState:
    handle: int
    bind_point: int
    layout: int
    instrumented: bool
    shaders: dict[int, ShaderTracker]
    context_stages: int = 0  # reaches our buffers through the pushed context address
    buffer_robustness: tuple[int, int] = (0, 0)  # PipelineInfo's
    # works out the verdict word of its actions where some stage's entry function has an
    # unchecked copy, from the terms that read no push constant (``host_terms``)
    verdict: Verdict | None = None
    # the same from the terms that read push constants (of the stages with ``pushed_bits``),
    # worked out for each value of the pushed words they read
    pushed_verdict: Verdict | None = None
    pushed_bits: int = 0
    pushed_span: tuple[int, int] = (0, 0)  # the bytes holding the words those terms read
    # by the bytes of a bound-sets area: the word of its terms that read no push constant,
    # and the word for each value of the pushed words the others read (command_buffers)
    verdicts_kept: dict[bytes, tuple[int, dict[tuple[int, bytes], int]]] = field(
        default_factory=dict
    )


@dataclass(slots=True)
class Action:
    """One draw or dispatch that received an output block."""

    number: int | None  # from 0 in its command buffer; None: the spill block's binding
    command: str
    pipeline: PipelineState
    block: Block
    bound_sets: tuple[int, ...] = ()  # the app's set handles by index (0: none), issue 8
    recorded_at: RecordedAt | None = None  # the Python app's line (recording_site)
    labels: ActionLabels | None = None  # debug-utils regions open in its command buffer


@dataclass(slots=True)
class CommandBufferState:
    handle: int
    device: DeviceState
    pool: int
    primary: bool
    bound: dict[int, PipelineState] = field(default_factory=dict)
    action_count: int = 0
    actions: list[Action] = field(default_factory=list)
    executed: list[CommandBufferState] = field(default_factory=list)
    # The output chunks the actions' blocks lie in: read-back looks at each once before
    # looking at every action's block.
    chunks: set[Chunk] = field(default_factory=set)
    # Per bind point: region offset of the set bound at each index, and the set handles
    # (replaced, never changed in place, so that actions can share them).
    bound_words: dict[int, array[int]] = field(default_factory=dict)
    bound_handles: dict[int, tuple[int, ...]] = field(default_factory=dict)
    # Per bind point: the bound-sets area the actions get (the region words and the action
    # tables), made from bound_words at the first action after they change.
    bound_areas: dict[int, array[int]] = field(default_factory=dict)
    # The regions the areas' binding summaries were made from, with their change counts then
    # (binding_summaries).
    summarized: dict[Region, int] = field(default_factory=dict)
    # the last verdicts worked out (command_buffers._verdict): pipeline, bound-sets area, the
    # word of the terms that read no push constant, and the word for each value of the push
    # constants the others read
    last_verdict: tuple[PipelineState, array[int], int, dict[tuple[int, bytes], int]] | None = None
    pushed: PushedConstants | None = None  # what its recordings push, once a verdict reads it
    # where its actions' output blocks go to be bound by layer.c (made at the first one)
    output_bind: OutputBindBeforeAction | None = None
    labels: CommandBufferLabels | None = None  # None until the app uses debug-utils labels
    checks: ActionCheckState | None = None  # vertex/index bindings, validation dispatches
    # Descriptor buffers bound and the sets used in them (None until the app binds one).
    descriptor_buffers: DescriptorBufferBindings | None = None

    def has_output(self) -> bool:
        """Whether a submit of this command buffer needs a read-back."""
        return bool(self.actions) or any(secondary.actions for secondary in self.executed)


@dataclass
class PendingSubmission:
    """A submission not read back yet: ``fence`` is ours, signalled after its work;
    ``app_fence`` the app's own (0: none)."""

    fence: int
    command_buffers: list[CommandBufferState]
    queue: int
    app_fence: int = 0


@dataclass
class DeviceState:
    handle: int
    instance: InstanceState
    calls: DeviceCalls
    facts: PhysicalDeviceFacts
    enabled: bool
    set_index: int = 0
    graphics_stages: bool = True
    # The stages gpuav's set layout and pushed-context ranges name (calls.SHADER_STAGES_CORE
    # and those of the device's extensions).
    stages: int = SHADER_STAGES_CORE
    output: OutputBuffers | None = None
    set_layout: int = 0
    padding_set_layout: int = 0
    degraded: bool = False
    shader_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # A module's words' digest -> the shader id its modules get (shader_modules)
    module_shader_ids: dict[bytes, int] = field(default_factory=dict)
    shader_modules: dict[int, ShaderModuleState] = field(default_factory=dict)
    pipeline_layouts: dict[int, PipelineLayoutState] = field(default_factory=dict)
    pipelines: dict[int, PipelineState] = field(default_factory=dict)
    shader_objects: dict[int, ShaderObjectState] = field(default_factory=dict)
    # Digests of the binaries handed out for instrumented shader objects, and the state of
    # the one each came from (destroyed since, perhaps: its tracker and specialization serve
    # a shader object made again from the binary).
    shader_binaries: dict[bytes, ShaderObjectState] = field(default_factory=dict)
    command_buffers: dict[int, CommandBufferState] = field(default_factory=dict)
    command_pools: dict[int, set[int]] = field(default_factory=dict)
    # handle -> (VkObjectType, name): a destroyed object's handle may come back as another
    # object of another type, which must not lend the old one its name
    object_names: dict[int, tuple[int, str]] = field(default_factory=dict)
    pending: list[PendingSubmission] = field(default_factory=list)
    descriptors: DescriptorTracker | None = None
    # Bound-sets areas by their bytes, one object for each (command_buffers._same_area).
    bound_areas_seen: dict[bytes, array[int]] = field(default_factory=dict)
    # The app enabled robustBufferAccess or robustBufferAccess2.
    robust_buffer_access: bool = False
    # Byte offset of the pushed context address (buffer device addresses on), else None.
    context_offset: int | None = None
    # Debug-utils labels open on each queue (None until the app uses labels, see debug_labels).
    queue_labels: dict[int, tuple[str, ...]] | None = None
    # Indirect and vertex-fetch checks (action_checks); None when they could not be set up.
    action_checks: ActionCheckDevice | None = None
    # VK_EXT_descriptor_buffer layouts, descriptors and memory (None until first used).
    descriptor_buffers: DescriptorBufferTracker | None = None
    # VK_EXT_device_generated_commands' indirect execution sets by handle.
    execution_sets: dict[int, IndirectExecutionSet] = field(default_factory=dict)

    @property
    def reporter(self) -> Reporter:
        return self.instance.reporter

    def name_of(self, handle: int, object_type: int | None = None) -> str | None:
        """The debug-utils name of ``handle``, if it was last named as ``object_type``."""
        named = self.object_names.get(handle)
        if named is None or (object_type is not None and named[0] != object_type):
            return None
        return named[1]
