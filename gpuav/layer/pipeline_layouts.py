"""CreatePipelineLayout / DestroyPipelineLayout (seed 000: GpuOverrideDispatchCreatePipelineLayout).

Every layout gets our set layout at the reserved index, with empty layouts padding the gap.
A layout that already uses that index is left alone (said once) and its pipelines keep their
original shaders. A patched layout stays alive while pipelines made with it do, because each
draw binds our set through the bound pipeline's layout, and the app may legally destroy the
layout right after creating the pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuav.layer import faults, notices
from gpuav.layer.shader_modules import instrumenter_accepts
from gpuav.layer.state import DeviceState, PipelineLayoutState

PushRange = tuple[int, int, int]  # stage flags, offset, size (bytes)
CONTEXT_BYTES = 8


def pre_call_record_create_pipeline_layout(
    device: DeviceState, set_layouts: Sequence[int], independent_sets: bool = False
) -> list[int] | None:
    """The set layouts to create with, or None to pass the app's create info unchanged.

    An independent-sets layout (graphics pipeline libraries) is left as the app made it where
    its pipelines can reach gpuav's buffers by the pushed address: padding it would put an
    empty set, or a null one, where another library's layout has the app's set, and neither
    keeps the libraries' union equal to the link's layout (VUID-VkGraphicsPipelineCreateInfo-
    flags-06730, pLibraries-06681, as the Khronos layer reads them)."""
    if not device.enabled or device.degraded:
        return None
    faults.check("create_pipeline_layout")
    tracker = device.descriptor_buffers
    if tracker is not None and tracker.keeps_layout_unpatched(set_layouts):
        # No classic set beside descriptor-buffer ones (VUID-VkPipelineLayoutCreateInfo-
        # pSetLayouts-08008, VUID-vkCmdDispatch-None-08115): its pipelines reach gpuav's
        # buffers by the pushed address.
        return None
    by_address = device.context_offset is not None and instrumenter_accepts("context_address")
    if independent_sets and by_address:
        return None
    count = len(set_layouts)
    if count > device.set_index:
        offset = device.context_offset
        if offset is not None and by_address:
            notice = notices.layout_reaches_buffers_by_address(device.set_index, count, offset)
            device.reporter.emit_once("layout-by-address", notice)
        else:
            notice = notices.layout_uses_reserved_set(device.set_index, count)
            device.reporter.emit_once("layout-conflict", notice)
        return None
    padding = [device.padding_set_layout] * (device.set_index - count)
    return [*set_layouts, *padding, device.set_layout]


def pre_call_record_push_constant_ranges(
    device: DeviceState, ranges: Sequence[PushRange]
) -> tuple[list[PushRange], int] | None:
    """Push-constant ranges that also give every stage the context address (issue 8), and the
    stages to push it with; None to keep the app's ranges.

    This is the one rule for every object whose push-constant ranges must match another's:
    pipeline layouts and shader objects (VK_EXT_shader_object declares its own ranges, and a
    layout used with it must have identical ones: VUID-vkCmdDispatch-None-08600). It depends
    only on the ranges and on the device's set-up, never on what happened since (running out
    of memory included), so equal ranges always become equal ranges and what the app made
    compatible stays compatible; that is also why every layout is changed, not only those
    that took our set.

    Only with buffer device addresses and an instrumenter that takes ``context_address``.
    A range may not share a stage with another
    (VUID-VkPipelineLayoutCreateInfo-pPushConstantRanges-00292), so the app's ranges are
    extended up to the context's end and one range is added for the stages they lack; this
    needs the app's ranges to end at one offset, at most the context's.
    """
    offset = device.context_offset
    if offset is None or not instrumenter_accepts("context_address"):
        return None
    end = offset + CONTEXT_BYTES
    ends = {start + size for _, start, size in ranges}
    if max(ends, default=0) > offset or len(ends) > 1:
        # Extending a range that ends early over the bytes of a longer one would make the
        # app's own vkCmdPushConstants of those bytes invalid (VUID-vkCmdPushConstants-
        # offset-01796: every range overlapping a pushed byte must be named).
        return None
    covered = 0
    extended: list[PushRange] = []
    for stages, start, _ in ranges:
        extended.append((stages, start, end - start))
        covered |= stages
    missing = device.stages & ~covered
    if missing:
        extended.append((missing, offset, CONTEXT_BYTES))
    return extended, covered | missing


def post_call_record_create_pipeline_layout(
    device: DeviceState,
    handle: int,
    set_count: int,
    patched: bool,
    context_stages: int = 0,
    set_layouts: Sequence[int] = (),
) -> None:
    device.pipeline_layouts[handle] = PipelineLayoutState(
        handle, set_count, patched, context_stages=context_stages, set_layouts=tuple(set_layouts)
    )


def pre_call_record_destroy_pipeline_layout(device: DeviceState, handle: int) -> bool:
    """Whether to destroy it now; a layout our draws still bind through is destroyed later."""
    state = device.pipeline_layouts.get(handle)
    if state is None:
        return True
    if state.pipelines > 0:
        state.destroyed_by_app = True
        return False
    del device.pipeline_layouts[handle]
    return True


def release_pipeline_layout(device: DeviceState, handle: int) -> None:
    """A pipeline using the layout is gone; finish a destruction the app asked for earlier."""
    state = device.pipeline_layouts.get(handle)
    if state is None:
        return
    state.pipelines -= 1
    if state.pipelines <= 0 and state.destroyed_by_app:
        del device.pipeline_layouts[handle]
        device.calls.destroy_pipeline_layout(handle)
