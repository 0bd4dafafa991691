"""Push-constant ranges for the pushed context address (issue 8), on their own."""

from __future__ import annotations

from typing import Any

import pytest

from gpuav.layer.calls import (
    SHADER_STAGE_COMPUTE,
    SHADER_STAGE_FRAGMENT,
    SHADER_STAGE_VERTEX,
    SHADER_STAGES_CORE,
)
from gpuav.layer.pipeline_layouts import pre_call_record_push_constant_ranges
from gpuav.layer.state import DeviceState

ALL = SHADER_STAGES_CORE  # a device without mesh or ray-tracing extensions


@pytest.fixture
def device() -> DeviceState:
    state = DeviceState(1, None, None, None, enabled=True)  # type: ignore[arg-type]
    state.context_offset = 248
    return state


def test_one_range_is_extended_and_the_other_stages_get_the_context(device: Any) -> None:
    planned = pre_call_record_push_constant_ranges(device, [(SHADER_STAGE_COMPUTE, 0, 8)])
    assert planned == (
        [(SHADER_STAGE_COMPUTE, 0, 256), (ALL & ~SHADER_STAGE_COMPUTE, 248, 8)],
        ALL,
    )


def test_no_ranges_get_one_range_for_every_stage(device: Any) -> None:
    assert pre_call_record_push_constant_ranges(device, []) == ([(ALL, 248, 8)], ALL)


def test_ranges_ending_together_are_all_extended(device: Any) -> None:
    ranges = [(SHADER_STAGE_VERTEX, 0, 16), (SHADER_STAGE_FRAGMENT, 8, 8)]
    planned = pre_call_record_push_constant_ranges(device, ranges)
    assert planned is not None
    assert planned[0][:2] == [(SHADER_STAGE_VERTEX, 0, 256), (SHADER_STAGE_FRAGMENT, 8, 248)]


@pytest.mark.parametrize(
    "ranges",
    [
        [(SHADER_STAGE_VERTEX, 0, 16), (SHADER_STAGE_FRAGMENT, 16, 16)],  # ends differ
        [(SHADER_STAGE_COMPUTE, 0, 252)],  # reaches into the context's bytes
    ],
)
def test_ranges_that_cannot_take_the_context_are_left_alone(device: Any, ranges: Any) -> None:
    assert pre_call_record_push_constant_ranges(device, ranges) is None


def test_without_device_addresses_nothing_changes(device: Any) -> None:
    device.context_offset = None
    assert pre_call_record_push_constant_ranges(device, [(SHADER_STAGE_COMPUTE, 0, 8)]) is None


def test_ranges_change_alike_after_running_out_of_memory(device: Any) -> None:
    """Layouts (and shader objects) made after degrade() must stay compatible with those made
    before: the rule depends on the ranges alone."""
    before = pre_call_record_push_constant_ranges(device, [(SHADER_STAGE_COMPUTE, 0, 8)])
    device.degraded = True
    assert pre_call_record_push_constant_ranges(device, [(SHADER_STAGE_COMPUTE, 0, 8)]) == before
