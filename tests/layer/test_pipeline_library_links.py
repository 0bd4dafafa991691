"""How a linked pipeline reaches gpuav's buffers, decided from its libraries' states by the
engine (``pipeline_libraries``), in the cases lavapipe cannot show: lavapipe always has buffer
device addresses, so libraries never disagree on gpuav's set there, and every link there
names its layout. The engine runs as the native layer calls it; only the driver is absent."""

from __future__ import annotations

import pytest

from gpuav.layer import pipeline_libraries, pipelines
from gpuav.layer.calls import (
    PIPELINE_BIND_POINT_GRAPHICS,
    PIPELINE_BIND_POINT_RAY_TRACING,
    PhysicalDeviceFacts,
    PipelineInfo,
)
from gpuav.layer.settings import Settings
from gpuav.layer.state import (
    DeviceState,
    InstanceState,
    PipelineLayoutState,
    PipelineState,
    ShaderTracker,
)
from tests.layer.collecting_reporter import CollectingReporter

VULKAN_1_3 = (1 << 22) | (3 << 12)
GRAPHICS = PIPELINE_BIND_POINT_GRAPHICS
SET_LAYOUT, ADDRESS_LAYOUT, UNION_LAYOUT = 0x1A, 0x2A, 0x3A
SET_LIBRARY, ADDRESS_LIBRARY, OUTPUT_LIBRARY, LINKED = 0x10, 0x20, 0x30, 0x40
CONTEXT_STAGES = 0x1F
VERTEX = ShaderTracker(5, 0x500, SET_LIBRARY, (1, 2, 3))
FRAGMENT = ShaderTracker(6, 0x600, ADDRESS_LIBRARY, (4, 5, 6))


@pytest.fixture
def device() -> DeviceState:
    """Two libraries with shader stages: one binding gpuav's set, one reaching gpuav's
    buffers by the pushed address (its layout uses every set); one without stages."""
    facts = PhysicalDeviceFacts(VULKAN_1_3, 8, 16, 1 << 27, (0,), True, True)
    instance = InstanceState(1, Settings(enabled=True), VULKAN_1_3, CollectingReporter())
    state = DeviceState(1, instance, None, facts, enabled=True, set_index=7)  # type: ignore[arg-type]
    state.pipeline_layouts[SET_LAYOUT] = PipelineLayoutState(SET_LAYOUT, 1, patched=True)
    state.pipeline_layouts[ADDRESS_LAYOUT] = PipelineLayoutState(
        ADDRESS_LAYOUT, 8, patched=False, context_stages=CONTEXT_STAGES
    )
    state.pipelines[SET_LIBRARY] = PipelineState(
        SET_LIBRARY, GRAPHICS, SET_LAYOUT, True, {5: VERTEX}
    )
    state.pipelines[ADDRESS_LIBRARY] = PipelineState(
        ADDRESS_LIBRARY, GRAPHICS, ADDRESS_LAYOUT, True, {6: FRAGMENT}, CONTEXT_STAGES
    )
    state.pipelines[OUTPUT_LIBRARY] = PipelineState(OUTPUT_LIBRARY, GRAPHICS, 0, False, {})
    return state


def _link(device: DeviceState, layout: int, *libraries: int) -> PipelineState:
    info = PipelineInfo(layout, (), libraries)
    plans = pipelines.pre_call_record_create_pipelines(device, GRAPHICS, [info])
    pipelines.post_call_record_create_pipelines(device, GRAPHICS, [info], plans, [LINKED])
    return device.pipelines[LINKED]


def _said(device: DeviceState) -> list[str]:
    reporter = device.reporter
    assert isinstance(reporter, CollectingReporter)
    return [message.message_id for message in reporter.messages]


def test_a_link_without_a_layout_binds_through_its_librarys(device: DeviceState) -> None:
    linked = _link(device, 0, SET_LIBRARY, OUTPUT_LIBRARY)
    assert (linked.instrumented, linked.layout, linked.context_stages) == (True, SET_LAYOUT, 0)
    assert linked.shaders == {5: VERTEX}
    # Its actions bind through that layout, which stays alive while the link does.
    assert device.pipeline_layouts[SET_LAYOUT].pipelines == 1
    pipelines.pre_call_record_destroy_pipeline(device, LINKED)
    assert device.pipeline_layouts[SET_LAYOUT].pipelines == 0
    assert _said(device) == []


def test_a_link_pushes_the_address_as_its_libraries_do(device: DeviceState) -> None:
    linked = _link(device, ADDRESS_LAYOUT, ADDRESS_LIBRARY, OUTPUT_LIBRARY)
    assert (linked.instrumented, linked.layout) == (True, ADDRESS_LAYOUT)
    assert linked.context_stages == CONTEXT_STAGES
    assert linked.shaders == {6: FRAGMENT}


def test_libraries_disagreeing_on_gpuavs_set_make_an_unchecked_link_said_once(
    device: DeviceState,
) -> None:
    device.pipeline_layouts[UNION_LAYOUT] = PipelineLayoutState(
        UNION_LAYOUT, 8, patched=False, context_stages=CONTEXT_STAGES
    )
    for _ in range(2):
        linked = _link(device, UNION_LAYOUT, SET_LIBRARY, ADDRESS_LIBRARY)
        assert not linked.instrumented
        # The trackers stay: records the library stages write still decode.
        assert linked.shaders == {5: VERTEX, 6: FRAGMENT}
    assert _said(device) == ["GPUAV-pipeline-library-mixed"]


def test_a_links_own_stages_follow_its_libraries(device: DeviceState) -> None:
    info = PipelineInfo(ADDRESS_LAYOUT, (), (ADDRESS_LIBRARY,))
    assert pipeline_libraries.own_stages_agree(device, info, True, CONTEXT_STAGES)
    assert pipeline_libraries.own_stages_agree(device, info, False, 0)
    assert not pipeline_libraries.own_stages_agree(device, info, True, 0)


def test_ray_tracing_libraries_never_take_the_pushed_address(device: DeviceState) -> None:
    ray_tracing = PIPELINE_BIND_POINT_RAY_TRACING
    assert pipeline_libraries.may_push_context(device, ray_tracing, PipelineInfo(0, ()))
    assert pipeline_libraries.may_push_context(device, GRAPHICS, PipelineInfo(0, (), library=True))
    assert _said(device) == []
    for info in (PipelineInfo(0, (), library=True), PipelineInfo(0, (), (SET_LIBRARY,))):
        assert not pipeline_libraries.may_push_context(device, ray_tracing, info)
    assert _said(device) == ["GPUAV-ray-tracing-library-by-address"]
