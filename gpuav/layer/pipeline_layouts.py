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
from gpuav.layer.state import DeviceState, PipelineLayoutState


def pre_call_record_create_pipeline_layout(
    device: DeviceState, set_layouts: Sequence[int]
) -> list[int] | None:
    """The set layouts to create with, or None to pass the app's create info unchanged."""
    if not device.enabled or device.degraded:
        return None
    faults.check("create_pipeline_layout")
    count = len(set_layouts)
    if count > device.set_index:
        device.reporter.emit_once(
            "layout-conflict", notices.layout_uses_reserved_set(device.set_index, count)
        )
        return None
    padding = [device.padding_set_layout] * (device.set_index - count)
    return [*set_layouts, *padding, device.set_layout]


def post_call_record_create_pipeline_layout(
    device: DeviceState, handle: int, set_count: int, patched: bool
) -> None:
    device.pipeline_layouts[handle] = PipelineLayoutState(handle, set_count, patched)


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
