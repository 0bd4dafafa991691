"""Pipelines linked from pipeline libraries (VK_KHR_pipeline_library with ray-tracing
pipelines, VK_EXT_graphics_pipeline_library with or without link-time optimization).

A library's stages are instrumented when the library is created, exactly as any pipeline's
are (``pipelines``); linking instruments nothing again. The linked pipeline inherits the
libraries' shader trackers, so that a record names the library's shader, stage and source
line, and it reaches gpuav's buffers the way its libraries' shaders do: through gpuav's set
at ``device.set_index``, bound with a layout that carries it, or through the pushed context
address (issue 8).

Libraries and link agree on gpuav's set by construction: every pipeline layout gets it at
the same index (``pipeline_layouts``), and Vulkan asks the layouts of the libraries and of
the link to be compatible. Independent-sets layouts
(VK_PIPELINE_LAYOUT_CREATE_INDEPENDENT_SETS_BIT_EXT), of which each library may hold a subset
of the sets, are left as the app made them and reach gpuav's buffers by the pushed address
wherever the device has buffer device addresses; without them they get gpuav's set after
empty ones, and libraries can then disagree in one way: one's layout took gpuav's set while
another's already uses that index. Such a link is made as the app asked and said once; it is
not checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpuav.layer import notices
from gpuav.layer.calls import PIPELINE_BIND_POINT_RAY_TRACING, PipelineInfo
from gpuav.layer.state import DeviceState, PipelineState, ShaderTracker


@dataclass(frozen=True)
class Link:
    """What a linked pipeline inherits: every tracker of its libraries and its own stages,
    and how its actions reach gpuav's buffers (``layout`` binds gpuav's set, or pushes the
    context address to ``context_stages`` when they are not 0)."""

    shaders: dict[int, ShaderTracker]
    instrumented: bool
    layout: int
    context_stages: int


def _libraries(device: DeviceState, info: PipelineInfo) -> list[PipelineState]:
    return [state for state in map(device.pipelines.get, info.libraries) if state is not None]


def _modes(parts: Iterable[tuple[bool, int]]) -> set[bool]:
    """Of the instrumented parts (instrumented, context stages): True for those reaching
    gpuav's buffers by the pushed address, False for those binding gpuav's set."""
    return {context_stages != 0 for instrumented, context_stages in parts if instrumented}


def may_push_context(device: DeviceState, bind_point: int, info: PipelineInfo) -> bool:
    """Whether the pipeline's stages may reach gpuav's buffers by the pushed context address.

    Not ray-tracing libraries and the pipelines linking them: lavapipe (Mesa 25.0) gives
    their stages zero for every push constant, the app's own included, so a pushed address
    would be read as null; they keep their original shaders (said once)."""
    if bind_point != PIPELINE_BIND_POINT_RAY_TRACING or not (info.library or info.libraries):
        return True
    device.reporter.emit_once(
        "ray-tracing-library-by-address",
        notices.ray_tracing_library_by_address(device.set_index),
    )
    return False


def own_stages_agree(
    device: DeviceState, info: PipelineInfo, instrumented: bool, context_stages: int
) -> bool:
    """Whether the link's own stages, instrumented as planned, reach gpuav's buffers the way
    its libraries' do; when not they keep their original code, so that one binding serves
    the whole pipeline."""
    libraries = _libraries(device, info)
    parts = [(state.instrumented, state.context_stages) for state in libraries]
    return len(_modes([*parts, (instrumented, context_stages)])) <= 1


def link(
    device: DeviceState,
    info: PipelineInfo,
    shaders: dict[int, ShaderTracker],
    instrumented: bool,
    context_stages: int,
) -> Link:
    """The linked pipeline's trackers and binding, from its libraries and ``shaders``, the
    trackers of its own stages (``instrumented`` with ``context_stages`` as planned)."""
    libraries = _libraries(device, info)
    inherited = dict(shaders)
    for library in libraries:
        inherited.update(library.shaders)
    parts = [(instrumented, context_stages, info.layout)]
    parts += [(state.instrumented, state.context_stages, state.layout) for state in libraries]
    modes = _modes((made, stages) for made, stages, _ in parts)
    if not modes:
        return Link(inherited, False, info.layout, 0)
    by_address = modes == {True}
    own = device.pipeline_layouts.get(info.layout)
    if len(modes) > 1 or (own is not None and not by_address and not own.patched):
        # The link's layout (the libraries' union) occupies gpuav's set: a library uses it.
        device.reporter.emit_once(
            "pipeline-library-mixed", notices.pipeline_library_mixed(device.set_index)
        )
        return Link(inherited, False, info.layout, 0)
    if own is not None and (not by_address or own.context_stages):
        return Link(inherited, True, info.layout, own.context_stages if by_address else 0)
    # No layout of its own (or one gpuav does not know): bind through a library's.
    _, stages, layout = next(part for part in parts if part[0])
    return Link(inherited, True, layout, stages)
