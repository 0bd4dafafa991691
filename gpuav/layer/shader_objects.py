"""Shader objects (VK_EXT_shader_object): instrumented at vkCreateShadersEXT, reaching gpuav's
buffers through the context address pushed per action (issue 8's path), never a set of ours.

Why not a set: an instrumented shader object would need gpuav's set bound at ``set_index``
through a layout compatible with its own set layouts up to that index, and shader objects
drawn together may declare different set layouts (a vertex shader one set, a fragment shader
two), so no one binding of ours would suit both, and a binding through another layout would
disturb the app's sets. Push-constant ranges, in contrast, already change by the rule every
pipeline layout follows (``pipeline_layouts.pre_call_record_push_constant_ranges``): the
app's layouts stay compatible with its shader objects for its own binds and pushes, and
gpuav pushes through a layout of its own with exactly the shader's ranges.

The shader objects bound at a bind point stand in ``CommandBufferState.bound`` where a
pipeline would (``BoundShaderObjects``, handle 0), so that each draw and dispatch gets its
output block, and messages their action, exactly as pipelines' do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuav.instrument.descriptor_state import PushConstantAddress
from gpuav.layer import action_checks, notices
from gpuav.layer.calls import (
    PIPELINE_BIND_POINT_COMPUTE,
    PIPELINE_BIND_POINT_GRAPHICS,
    SHADER_STAGE_COMPUTE,
    SHADER_STAGES_GRAPHICS,
    SHADER_STAGES_INSTRUMENTED,
)
from gpuav.layer.command_buffers import bind_spill_block
from gpuav.layer.pipeline_layouts import PushRange, pre_call_record_push_constant_ranges
from gpuav.layer.shader_modules import instrument_words
from gpuav.layer.shader_object_binaries import Specialization, handed_out
from gpuav.layer.state import (
    CommandBufferState,
    DeviceState,
    PipelineState,
    ShaderObjectState,
    ShaderTracker,
)


@dataclass(frozen=True)
class ShaderObjectInfo:
    """One VkShaderCreateInfoEXT, as far as GPU-AV cares."""

    stage: int
    push_ranges: tuple[PushRange, ...]
    words: tuple[int, ...] | None  # SPIR-V code; None for binary code
    binary: bytes = b""  # binary code (VK_SHADER_CODE_TYPE_BINARY_EXT)
    linked: bool = False  # VK_SHADER_CREATE_LINK_STAGE_BIT_EXT
    specialization: Specialization | None = None


@dataclass
class ShaderObjectPlan:
    """What to change in one create info, and the tracker of the shader it makes."""

    push_ranges: list[PushRange] | None = None  # None: the app's
    context_stages: int = 0
    words: list[int] | None = None  # instrumented SPIR-V; None: the app's code
    tracker: ShaderTracker | None = None  # shader object handle 0 until it exists
    layout: int = 0  # ours, with ``push_ranges``: made by the front end before creation
    specialization: Specialization | None = None  # what the instrumented code runs with
    # Binary code gpuav handed out, made from the instrumented SPIR-V (and
    # ``specialization``) instead.
    from_binary: bool = False


@dataclass(slots=True)
class BoundShaderObjects(PipelineState):
    """The shader objects bound at one bind point, standing where a pipeline would."""

    by_stage: dict[int, int] = field(default_factory=dict)  # stage bit -> shader object


def _plan(device: DeviceState, info: ShaderObjectInfo) -> ShaderObjectPlan:
    plan = ShaderObjectPlan()
    ranges = pre_call_record_push_constant_ranges(device, info.push_ranges)
    if ranges is not None:
        plan.push_ranges, plan.context_stages = ranges
    if not device.enabled or device.degraded or not info.stage & SHADER_STAGES_INSTRUMENTED:
        return plan
    if info.stage & SHADER_STAGES_GRAPHICS and not device.graphics_stages:
        return plan
    if info.words is None:
        earlier = handed_out(device, info.binary)
        if earlier is None:
            device.reporter.emit_once("shader-object-binary", notices.shader_object_binary())
            return plan
        tracker, specialization = earlier.tracker, earlier.specialization
    else:
        tracker = ShaderTracker(next(device.shader_ids), 0, 0, info.words, shader_object=True)
        specialization = info.specialization
    offset = device.context_offset
    if offset is None or ranges is None:
        reason = "no-address" if offset is None else "push-ranges"
        device.reporter.emit_once(
            f"shader-object:{reason}", notices.shader_object_unchecked(offset, info.push_ranges)
        )
        return plan
    instrumented = instrument_words(
        device,
        list(tracker.words),
        tracker.shader_id,
        f"The code of a shader object (stage {info.stage:#x})",
        context_address=PushConstantAddress(offset),
    )
    if instrumented is not None:
        plan.words, plan.tracker, plan.specialization = instrumented, tracker, specialization
        plan.from_binary = info.words is None
    return plan


def pre_call_record_create_shaders(
    device: DeviceState, infos: Sequence[ShaderObjectInfo]
) -> list[ShaderObjectPlan]:
    """One plan per create info. Linked shaders (VK_SHADER_CREATE_LINK_STAGE_BIT_EXT) stay
    linked: instrumentation changes no interface variable, their equal push-constant ranges
    change alike, and linked binaries become SPIR-V all together or not at all (linked
    shaders share one code type, VUID-vkCreateShadersEXT-pCreateInfos-08411)."""
    plans = [_plan(device, info) for info in infos]
    linked_binaries = [
        plan for info, plan in zip(infos, plans, strict=True) if info.linked and info.words is None
    ]
    if not all(plan.from_binary for plan in linked_binaries):
        for plan in linked_binaries:
            plan.words, plan.tracker, plan.from_binary = None, None, False
    return plans


def post_call_record_create_shaders(
    device: DeviceState,
    infos: Sequence[ShaderObjectInfo],
    plans: Sequence[ShaderObjectPlan],
    handles: Sequence[int],
) -> list[ShaderObjectState | None]:
    """Track each instrumented shader object that was made (a handle is 0 where creation
    failed) with its push layout; the layouts of the others are destroyed. Returns the new
    states by create info, for their app-code binaries (``shader_object_binaries``); one made
    from such a binary hands out that binary again."""
    made: list[ShaderObjectState | None] = []
    for info, plan, handle in zip(infos, plans, handles, strict=True):
        if not handle or plan.tracker is None or not plan.layout:
            made.append(None)
            continue
        tracker = ShaderTracker(
            plan.tracker.shader_id, 0, handle, plan.tracker.words, shader_object=True
        )
        state = ShaderObjectState(
            tracker, info.stage, plan.layout, plan.context_stages, plan.specialization
        )
        device.shader_objects[handle] = state
        plan.layout = 0
        if plan.from_binary:
            state.binary = info.binary
        made.append(state)
    release_layouts(device, plans)
    return made


def release_layouts(device: DeviceState, plans: Sequence[ShaderObjectPlan]) -> None:
    """Destroy the push layouts no tracked shader object took."""
    for plan in plans:
        if plan.layout:
            device.calls.destroy_pipeline_layout(plan.layout)
            plan.layout = 0


def pre_call_record_destroy_shader(device: DeviceState, handle: int) -> None:
    state = device.shader_objects.pop(handle, None)
    if state is not None:
        device.calls.destroy_pipeline_layout(state.layout)


def _bind_point(stage: int) -> int:
    compute = stage & SHADER_STAGE_COMPUTE
    return PIPELINE_BIND_POINT_COMPUTE if compute else PIPELINE_BIND_POINT_GRAPHICS


def post_call_record_cmd_bind_shaders(
    state: CommandBufferState, stages: Sequence[int], shaders: Sequence[int]
) -> None:
    """Shader objects (0: unbound) replace the pipeline of their bind point
    (VUID-vkCmdBindShadersEXT: binding one unbinds the pipeline, and binding a pipeline
    unbinds them, which ``post_call_record_cmd_bind_pipeline`` does by replacing this)."""
    touched: dict[int, dict[int, int]] = {}
    for stage, shader in zip(stages, shaders, strict=True):
        bind_point = _bind_point(stage)
        by_stage = touched.get(bind_point)
        if by_stage is None:
            previous = state.bound.get(bind_point)
            by_stage = dict(previous.by_stage) if isinstance(previous, BoundShaderObjects) else {}
            touched[bind_point] = by_stage
        if shader:
            by_stage[stage] = shader
        else:
            by_stage.pop(stage, None)
    for bind_point, by_stage in touched.items():
        bound = _bound(state.device, bind_point, by_stage)
        state.bound[bind_point] = bound
        if bound.instrumented:
            bind_spill_block(state, bind_point, bound, "vkCmdBindShadersEXT")
    if PIPELINE_BIND_POINT_GRAPHICS in touched:
        # No pipeline's vertex input applies now (shader objects set theirs dynamically).
        action_checks.post_call_record_bind_graphics_pipeline(state, 0)


def _bound(device: DeviceState, bind_point: int, by_stage: dict[int, int]) -> BoundShaderObjects:
    """The bound shader objects as one pipeline: gpuav pushes the context through the first
    instrumented one's layout (shader objects drawn together have equal push-constant ranges
    wherever they use push constants, VUID-vkCmdDraw-None-08602)."""
    instrumented = [
        device.shader_objects[shader] for shader in by_stage.values()
        if shader in device.shader_objects
    ]  # fmt: skip
    first = instrumented[0] if instrumented else None
    return BoundShaderObjects(
        0,
        bind_point,
        first.layout if first is not None else 0,
        first is not None,
        {shader.tracker.shader_id: shader.tracker for shader in instrumented},
        first.context_stages if first is not None else 0,
        by_stage=by_stage,
    )
