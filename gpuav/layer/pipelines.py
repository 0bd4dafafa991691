"""Graphics, compute and ray-tracing pipeline creation and destruction (seed 000:
GpuPreCallRecordCreateGraphicsPipelines, GpuPostCallRecordCreateGraphicsPipelines,
GpuPreCallRecordDestroyPipeline, applied to compute pipelines too).

A stage gets its instrumented shadow module only when the pipeline's layout carries our set
(or reaches our buffers by address); otherwise (layout conflict, degraded device) it keeps
the app's module, which holds the original words. A pipeline library's stages are
instrumented as any pipeline's, and a pipeline linking libraries inherits them
(``pipeline_libraries``). Each pipeline keeps shader trackers with the original words
until it is destroyed, so a module destroyed before submit still gets a full report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuav.instrument.host_terms import pushed_offsets, verdict_of
from gpuav.layer import notices, pipeline_libraries
from gpuav.layer.calls import (
    PIPELINE_BIND_POINT_GRAPHICS,
    PIPELINE_BIND_POINT_RAY_TRACING,
    SHADER_STAGES_GRAPHICS,
    SHADER_STAGES_INSTRUMENTED,
    PipelineInfo,
)
from gpuav.layer.pipeline_layouts import release_pipeline_layout
from gpuav.layer.shader_modules import context_shadow, instrument_words, shadow_of
from gpuav.layer.state import DeviceState, PipelineState, ShaderTracker

if TYPE_CHECKING:
    from gpuav.instrument.host_terms import Term, Verdict

_KINDS = {PIPELINE_BIND_POINT_GRAPHICS: "graphics", PIPELINE_BIND_POINT_RAY_TRACING: "ray tracing"}


@dataclass
class PipelinePlan:
    """What to change in one create info: stage index -> shadow module or inline words."""

    modules: dict[int, int] = field(default_factory=dict)
    inline_words: dict[int, list[int]] = field(default_factory=dict)
    shaders: list[tuple[int, int, tuple[int, ...]]] = field(default_factory=list)
    context_stages: int = 0  # shaders reach our buffers through the pushed context address
    # (stage bit, terms) of the stages with an unchecked entry function (host_terms)
    verdicts: list[tuple[int, tuple[Term, ...]]] = field(default_factory=list)

    @property
    def instrumented(self) -> bool:
        return bool(self.shaders)

    @property
    def changes_create_info(self) -> bool:
        return bool(self.modules or self.inline_words)


def _plan(device: DeviceState, bind_point: int, info: PipelineInfo) -> PipelinePlan:
    plan = PipelinePlan()
    layout = device.pipeline_layouts.get(info.layout)
    usable = layout is not None and layout.patched and not device.degraded
    # Issue 8: a layout that took our set may still reach our buffers by device address.
    by_address = (
        layout is not None
        and not usable
        and bool(layout.context_stages)
        and not device.degraded
        and pipeline_libraries.may_push_context(device, bind_point, info)
    )
    if by_address and layout is not None:
        plan.context_stages = layout.context_stages
    for index, stage in enumerate(info.stages):
        if not stage.stage & SHADER_STAGES_INSTRUMENTED:
            continue
        if stage.stage & SHADER_STAGES_GRAPHICS and not device.graphics_stages:
            continue
        if stage.module:
            module = device.shader_modules.get(stage.module)
            if module is None or not shadow_of(device, module):
                continue
            if by_address:
                shadow = context_shadow(device, module)
                if shadow:
                    plan.modules[index] = shadow
                    plan.shaders.append((module.shader_id, stage.module, module.words))
                continue
            if not usable:
                if layout is not None and not layout.patched:
                    kind = _KINDS.get(bind_point, "compute")
                    device.reporter.emit_once(
                        f"original-shaders:{kind}",
                        notices.pipeline_uses_original_shaders(kind, device.set_index),
                    )
                continue
            plan.modules[index] = module.shadow
            plan.shaders.append((module.shader_id, stage.module, module.words))
            plan.verdicts += [
                (bit, terms)
                for name, bit, terms in module.verdicts
                if name == stage.name and bit == stage.stage
            ]
        elif stage.inline_words is not None and (usable or by_address):
            shader_id = next(device.shader_ids)
            options = {}
            if by_address and device.context_offset is not None:
                from gpuav.instrument.descriptor_state import PushConstantAddress

                options["context_address"] = PushConstantAddress(device.context_offset)
            kind = _KINDS.get(bind_point, "compute")
            source = f"Inline code of stage {stage.stage:#x} of a {kind} pipeline"
            instrumented = instrument_words(
                device, list(stage.inline_words), shader_id, source, **options
            )
            if instrumented is not None:
                plan.inline_words[index] = instrumented
                plan.shaders.append((shader_id, 0, stage.inline_words))
    return plan


def _agreeing_plan(device: DeviceState, bind_point: int, info: PipelineInfo) -> PipelinePlan:
    """A link's own stages keep their original code where they would reach our buffers
    otherwise than its libraries' stages do."""
    plan = _plan(device, bind_point, info)
    if info.libraries and not pipeline_libraries.own_stages_agree(
        device, info, plan.instrumented, plan.context_stages
    ):
        return PipelinePlan()
    return plan


def pre_call_record_create_pipelines(
    device: DeviceState, bind_point: int, infos: Sequence[PipelineInfo]
) -> list[PipelinePlan] | None:
    """One plan per create info, or None when nothing changes."""
    if not device.enabled:
        return None
    plans = [_agreeing_plan(device, bind_point, info) for info in infos]
    return plans if any(plan.changes_create_info for plan in plans) else None


def post_call_record_create_pipelines(
    device: DeviceState,
    bind_point: int,
    infos: Sequence[PipelineInfo],
    plans: Sequence[PipelinePlan] | None,
    handles: Sequence[int],
) -> None:
    """Track the pipelines that were created (some handles may be 0 on partial failure)."""
    for index, (info, handle) in enumerate(zip(infos, handles, strict=True)):
        if not handle:
            continue
        plan = plans[index] if plans is not None else PipelinePlan()
        shaders = {
            shader_id: ShaderTracker(shader_id, module, handle, words)
            for shader_id, module, words in plan.shaders
        }
        instrumented, layout_handle = plan.instrumented, info.layout
        context_stages = plan.context_stages if plan.instrumented else 0
        if info.libraries:
            link = pipeline_libraries.link(device, info, shaders, instrumented, context_stages)
            shaders, instrumented = link.shaders, link.instrumented
            layout_handle, context_stages = link.layout, link.context_stages
        if instrumented:
            layout = device.pipeline_layouts.get(layout_handle)
            if layout is not None:
                layout.pipelines += 1
        device.pipelines[handle] = PipelineState(
            handle,
            bind_point,
            layout_handle,
            instrumented,
            shaders,
            context_stages,
            info.buffer_robustness,
            *_verdicts(plan.verdicts),
        )


def _verdicts(
    stages: list[tuple[int, tuple[Term, ...]]],
) -> tuple[Verdict | None, Verdict | None, int, tuple[int, int]]:
    """How the layer works an action's verdict word out (``host_terms``): from each stage's
    terms that read no push constant, which hold for a bound-sets area, and from those that
    do, which change with the words they read (with the bits of their stages and the span of
    bytes that holds those words)."""
    if not stages:
        return None, None, 0, (0, 0)
    fixed: list[tuple[int, list[Term]]] = []
    pushed: list[tuple[int, list[Term]]] = []
    pushed_bits = 0
    offsets: set[int] = set()
    for bit, terms in stages:
        kept: list[Term] = []
        reading: list[Term] = []
        for term in terms:
            read = pushed_offsets((term,))
            if read:
                reading.append(term)
                offsets |= read
            else:
                kept.append(term)
        fixed.append((bit, kept))
        if reading:
            pushed.append((bit, reading))
            pushed_bits |= bit
    if not pushed:
        return verdict_of(fixed), None, 0, (0, 0)
    span = (min(offsets) // 4 * 4, max(offsets) // 4 * 4 + 4)
    return verdict_of(fixed), verdict_of(pushed), pushed_bits, span


def pre_call_record_destroy_pipeline(device: DeviceState, handle: int) -> None:
    """Free the trackers and their words; the pipeline is never used again."""
    state = device.pipelines.pop(handle, None)
    if state is not None and state.instrumented:
        release_pipeline_layout(device, state.layout)
