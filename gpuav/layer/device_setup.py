"""Instance and device life cycle: the CreateDevice / DestroyDevice hooks of seed 000 and the
reserve-binding-slot property change."""

from __future__ import annotations

import os

from gpuav.errors import ResourceExhausted
from gpuav.layer import notices
from gpuav.layer.calls import (
    API_VERSION_1_1,
    API_VERSION_1_2,
    SHADER_STAGES_CORE,
    DeviceCalls,
    FeatureRequest,
    PhysicalDeviceFacts,
)
from gpuav.layer.shader_modules import instrumenter_accepts
from gpuav.layer.state import DeviceState, InstanceState

# For devices with a very high (or no) limit, seed 000 picks "an index that isn't too high,
# but above most other device maxima such as 32".
MAX_SET_INDEX = 31


def choose_set_index(max_bound_descriptor_sets: int) -> int:
    """maxBoundDescriptorSets - 1, capped (seed 000, "Internal Design / General")."""
    return max(0, min(max_bound_descriptor_sets - 1, MAX_SET_INDEX))


def post_call_record_get_physical_device_properties(
    instance: InstanceState, max_bound_descriptor_sets: int
) -> int:
    """The maxBoundDescriptorSets the app sees: one lower with reserve_binding_slot."""
    if instance.settings.enabled and instance.settings.reserve_binding_slot:
        return max(0, max_bound_descriptor_sets - 1)
    return max_bound_descriptor_sets


def effective_api_version(instance: InstanceState, facts: PhysicalDeviceFacts) -> int:
    return min(instance.api_version, facts.api_version)


def pre_call_record_create_device(
    instance: InstanceState, facts: PhysicalDeviceFacts
) -> FeatureRequest | None:
    """Features to add to the app's (seed 000: GpuPreCallRecordCreateDevice), if GPU-AV runs."""
    if not instance.settings.enabled or effective_api_version(instance, facts) < API_VERSION_1_1:
        return None
    return FeatureRequest(
        fragment_stores_and_atomics=facts.fragment_stores_and_atomics,
        vertex_pipeline_stores_and_atomics=facts.vertex_pipeline_stores_and_atomics,
        buffer_device_address=uses_buffer_device_address(instance, facts),
        shader_int64=uses_buffer_device_address(instance, facts),
    )


def uses_buffer_device_address(instance: InstanceState, facts: PhysicalDeviceFacts) -> bool:
    """Whether pipelines whose layout took our set reach our buffers by device address
    (issue 8): needs Vulkan 1.2's bufferDeviceAddress, shaderInt64 (the address is a uint64
    push constant; both are then enabled), room for 8 push-constant bytes and an
    instrumenter that takes ``context_address``; without them such pipelines keep their
    original shaders (``notices.layout_uses_reserved_set``)."""
    return (
        facts.buffer_device_address
        and facts.shader_int64
        and effective_api_version(instance, facts) >= API_VERSION_1_2
        and facts.max_push_constants_size >= CONTEXT_PUSH_BYTES
        and instrumenter_accepts("context_address")
    )


CONTEXT_PUSH_BYTES = 8


def context_offset(facts: PhysicalDeviceFacts) -> int:
    """The context address goes in the last 8 bytes of push-constant space."""
    return (facts.max_push_constants_size - CONTEXT_PUSH_BYTES) // 8 * 8


def blocks_per_chunk_setting() -> int | None:
    """``GPUAV_BLOCKS_PER_CHUNK``: output blocks per memory allocation (tuning and tests)."""
    value = os.environ.get("GPUAV_BLOCKS_PER_CHUNK", "")
    return int(value) if value.isdigit() and int(value) >= 2 else None


def post_call_record_create_device(
    instance: InstanceState,
    handle: int,
    calls: DeviceCalls,
    facts: PhysicalDeviceFacts,
    blocks_per_chunk: int | None = None,
) -> DeviceState:
    """Set index, output buffers and our two set layouts (seed 000: GpuPostCallRecordCreateDevice).

    A device on which any of this fails runs without GPU-AV, which is safe because no shader
    has been instrumented for it yet; what was made is destroyed. Running out of memory is
    said as ``GPUAV-resources-exhausted``, once, like running out later.
    """
    device = DeviceState(handle, instance, calls, facts, enabled=False)
    if not instance.settings.enabled:
        return device
    version = effective_api_version(instance, facts)
    if version < API_VERSION_1_1:
        instance.reporter.emit_once("vulkan-version", notices.vulkan_version_too_old(version))
        return device
    device.set_index = choose_set_index(facts.max_bound_descriptor_sets)
    device.graphics_stages = (
        facts.fragment_stores_and_atomics and facts.vertex_pipeline_stores_and_atomics
    )
    if not device.graphics_stages:
        instance.reporter.emit_once("graphics-stores", notices.graphics_stores_unsupported())
    # Imported with the first device, not at instance creation (start-up cost).
    from gpuav.layer.descriptor_sets import DescriptorTracker
    from gpuav.layer.output_buffers import OutputBuffers
    from gpuav.layer.state_buffer import StateBuffer

    try:
        device.stages = SHADER_STAGES_CORE | facts.extension_stages
        device.set_layout = calls.create_descriptor_set_layout(device.stages)
        device.padding_set_layout = calls.create_descriptor_set_layout(None)
        addresses = uses_buffer_device_address(instance, facts)
        state = StateBuffer.create(calls, facts, device_address=addresses)
        device.descriptors = DescriptorTracker(state)
        blocks_per_chunk = blocks_per_chunk or blocks_per_chunk_setting()
        kwargs = {} if blocks_per_chunk is None else {"blocks_per_chunk": blocks_per_chunk}
        device.output = OutputBuffers(
            calls,
            facts,
            device.set_layout,
            state_buffer=state.handles.buffer,
            state_address=state.handles.device_address,
            printf_bytes=instance.settings.printf_buffer_size if instance.settings.printf else 0,
            **kwargs,
        )
        if addresses:
            device.context_offset = context_offset(facts)
    except Exception as error:
        _destroy_state_buffer(device)
        _destroy_layouts(device)
        if isinstance(error, ResourceExhausted):
            reason = f"at device creation: {error}; this device runs without GPU-AV"
            instance.reporter.emit_once("resources-exhausted", notices.resources_exhausted(reason))
        else:
            instance.reporter.emit(notices.setup_failed(str(error)))
        return device
    device.enabled = True
    return device


def _destroy_layouts(device: DeviceState) -> None:
    for layout in (device.set_layout, device.padding_set_layout):
        if layout:
            device.calls.destroy_descriptor_set_layout(layout)
    device.set_layout = device.padding_set_layout = 0


def _destroy_state_buffer(device: DeviceState) -> None:
    if device.descriptors is not None:
        device.descriptors.state.destroy(device.calls)
        device.descriptors = None


def pre_call_record_destroy_device(device: DeviceState) -> None:
    """Free everything the layer made (seed 000: GpuPreCallRecordDestroyDevice)."""
    calls = device.calls
    if device.pending:
        from gpuav.layer.queue_submit import read_back_finished

        read_back_finished(device, settle_all=True)
    calls.destroy_spare_fences()
    for module in device.shader_modules.values():
        for shadow in (module.shadow, module.context_shadow):
            if shadow:
                calls.destroy_shader_module(shadow)
    for layout in device.pipeline_layouts.values():
        if layout.destroyed_by_app:
            calls.destroy_pipeline_layout(layout.handle)
    if device.output is not None:
        device.output.destroy()
        device.output = None
    _destroy_state_buffer(device)
    _destroy_layouts(device)
    device.shader_modules.clear()
    device.pipeline_layouts.clear()
    device.pipelines.clear()
    device.command_buffers.clear()
    device.command_pools.clear()
    device.enabled = False
