"""From one action's output block to messages: decode, give context, compose, deliver."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from gpuav.instrument.descriptor_state import MAX_TRACKED_SETS
from gpuav.instrument.record import ACTION_CHECK_ERRORS, STORAGE_BIT, ErrorCode, ErrorRecord
from gpuav.layer import debug_labels, recording_site
from gpuav.layer.action_check_reports import compose_check_messages
from gpuav.layer.buffer_views import BoundTexels
from gpuav.layer.calls import (
    OBJECT_TYPE_COMMAND_BUFFER,
    OBJECT_TYPE_PIPELINE,
    OBJECT_TYPE_SHADER_EXT,
    OBJECT_TYPE_SHADER_MODULE,
)
from gpuav.layer.reporting import LayerMessage, ObjectRef, internal_error_message
from gpuav.layer.resource_lifetimes import IMAGE_VIEW, SAMPLER, TYPE_NAMES
from gpuav.layer.state import Action, CommandBufferState, DeviceState
from gpuav.report.address_text import AddressedBuffer
from gpuav.report.buffer_range_text import BufferDescriptor
from gpuav.report.context import ActionContext, ShaderContext
from gpuav.report.unusable_descriptor_text import RetiredResource

# Errors that robustBufferAccess(2) turns into defined behaviour (warnings, or silence).
ROBUSTLY_DEFINED = frozenset({ErrorCode.BUFFER_OUT_OF_BOUNDS, ErrorCode.TEXEL_OUT_OF_BOUNDS})
BEHAVIOUR_DEVICE_DEFAULT = 0  # VkPipelineRobustnessBufferBehaviorEXT
BEHAVIOUR_DISABLED = 1
SPILLED_COMMAND = "unknown action (output blocks ran out, or a command gpuav does not hook)"


def action_context(device: DeviceState, state: CommandBufferState, action: Action) -> ActionContext:
    pipeline = action.pipeline
    shaders = tuple(
        ShaderContext(
            shader_id=tracker.shader_id,
            shader_module=tracker.module,
            shader_module_name=device.name_of(tracker.module, OBJECT_TYPE_SHADER_MODULE)
            if tracker.module
            else None,
            pipeline=0 if tracker.shader_object else tracker.pipeline,
            words=tracker.words,
            shader_object=tracker.pipeline if tracker.shader_object else 0,
            shader_object_name=device.name_of(tracker.pipeline, OBJECT_TYPE_SHADER_EXT)
            if tracker.shader_object
            else None,
        )
        for tracker in pipeline.shaders.values()
    )
    # The spill block is shared by every action recorded after output memory ran out, and is
    # bound with each instrumented pipeline for the action commands gpuav does not hook, so
    # its records cannot be pinned on one action.
    spilled = action.block.spill
    binding_sizes: dict[tuple[int, int], int] = {}
    if device.descriptors is not None and action.bound_sets:
        # Sizes as tracked now (read-back time): a set's sizes never change after allocation.
        binding_sizes = device.descriptors.binding_sizes(action.bound_sets)
    return ActionContext(
        command_buffer=state.handle,
        command_buffer_name=device.name_of(state.handle, OBJECT_TYPE_COMMAND_BUFFER),
        action_number=None if spilled else action.number,
        command=SPILLED_COMMAND if spilled else action.command,
        pipeline=pipeline.handle,
        pipeline_name=device.name_of(pipeline.handle),
        shaders=shaders,
        binding_sizes=binding_sizes,
        buffer_descriptor=_buffer_lookup(device, action),
        robust_buffers=robust_buffers(device.robust_buffer_access, pipeline.buffer_robustness),
        recorded_at=None if spilled else recording_site.site_of(action.recorded_at),
        labels=() if spilled else debug_labels.labels_at(state, action.labels),
        address_buffer=_address_lookup(device),
        retired_descriptor=_retired_lookup(device, action),
        image_descriptor=_image_lookup(device, action.bound_sets),
        bind_point=pipeline.bind_point,
        descriptor_buffer_sets=_descriptor_buffer_sets(device, action),
    )


def _image_lookup(
    device: DeviceState, bound_sets: Sequence[int]
) -> Callable[[int, int, int], str | None]:
    """The image view and sampler a descriptor of the action's sets names, described."""

    def lookup(descriptor_set: int, binding: int, index: int) -> str | None:
        tracker = device.descriptors
        if tracker is None:
            return None
        parts = []
        named = tracker.named_objects(bound_sets, descriptor_set, binding, index)
        for kind, handle in sorted(named, key=lambda item: item[0] != IMAGE_VIEW):
            name = device.name_of(handle)
            text = f"{TYPE_NAMES.get(kind, kind)} " + (
                f"'{name}' (0x{handle:x})" if name else f"(0x{handle:x})"
            )
            if kind == IMAGE_VIEW:
                facts = tracker.images.describe_view(handle)
                parts.append(f"{text}: {facts}" if facts else text)
            elif kind == SAMPLER:
                unnormalized = handle in tracker.images.unnormalized
                parts.append(f"{text} with unnormalizedCoordinates" if unnormalized else text)
        return "; ".join(parts) or None

    return lookup


def _retired_lookup(
    device: DeviceState, action: Action
) -> Callable[[int, int, int], RetiredResource | None]:
    """Which destroyed object made a descriptor of the action's sets unusable, named."""
    bound_sets = action.bound_sets

    def lookup(descriptor_set: int, binding: int, index: int) -> RetiredResource | None:
        tracker = device.descriptors
        found = (
            None if tracker is None else tracker.retired(bound_sets, descriptor_set, binding, index)
        )
        if found is None and device.descriptor_buffers is not None:
            regions = _action_regions(action)
            found = device.descriptor_buffers.retired(regions, descriptor_set, binding, index)
        if found is None:
            return None
        return RetiredResource(
            TYPE_NAMES.get(found.kind, found.kind),
            found.handle,
            device.name_of(found.handle),
            TYPE_NAMES.get(found.named_kind, found.named_kind),
            found.named,
            device.name_of(found.named) if found.named else None,
        )

    return lookup


def _address_lookup(device: DeviceState) -> Callable[[int, int], AddressedBuffer | None]:
    """The buffer (named) a device address falls in or lies nearest to, at read-back."""

    def lookup(address: int, size: int) -> AddressedBuffer | None:
        tracker = device.descriptors
        found = None if tracker is None else tracker.buffers.nearest_to(address, size)
        if found is None:
            return None
        return replace(found, name=device.name_of(found.handle))

    return lookup


def robust_buffers(device_robust: bool, behaviours: tuple[int, int]) -> tuple[bool, bool]:
    """(storage, uniform) robustness: a pipeline's VkPipelineRobustnessBufferBehaviorEXT,
    or the device's features where it says DEVICE_DEFAULT."""
    storage, uniform = (
        device_robust if behaviour == BEHAVIOUR_DEVICE_DEFAULT else behaviour != BEHAVIOUR_DISABLED
        for behaviour in behaviours
    )
    return storage, uniform


def _robustly_defined(record: ErrorRecord, context: ActionContext) -> bool:
    """A buffer or texel access outside its range where robustness defines the result."""
    if record.error_code not in ROBUSTLY_DEFINED or not record.details:
        return False
    from gpuav.report.messages import unusable_buffer

    if unusable_buffer(record) is not None:
        return False  # an unwritten or destroyed descriptor: no robustness defines that
    return context.robust(bool(record.details[0] & STORAGE_BIT))


def _action_regions(action: Action) -> Sequence[int]:
    """The region of the set bound at each index for the action (its bound-set words)."""
    start = action.block.bound_sets_offset
    return action.block.chunk.area_words[start : start + MAX_TRACKED_SETS]


def _descriptor_buffer_sets(device: DeviceState, action: Action) -> frozenset[int]:
    tracker = device.descriptor_buffers
    if tracker is None:
        return frozenset()
    by_region = tracker.places_by_region
    return frozenset(i for i, region in enumerate(_action_regions(action)) if region in by_region)


def _buffer_lookup(
    device: DeviceState, action: Action
) -> Callable[[int, int, int], BufferDescriptor | None]:
    """What the tracker knows (at read-back) of a buffer descriptor of the action's sets (in
    a descriptor buffer: as its bytes were at the submit)."""
    bound_sets = action.bound_sets

    def lookup(descriptor_set: int, binding: int, index: int) -> BufferDescriptor | None:
        tracker = device.descriptors
        if tracker is None:
            return None
        found = tracker.bound_buffer(bound_sets, descriptor_set, binding, index)
        if found is None and device.descriptor_buffers is not None:
            regions = _action_regions(action)
            found = device.descriptor_buffers.bound_buffer(regions, descriptor_set, binding, index)
        if found is None:
            return None
        descriptor_type, bound = found
        if bound is None:
            return BufferDescriptor(descriptor_type, 0, None, 0, 0, None)
        view, texel = 0, 0
        if isinstance(bound, BoundTexels):
            view, texel, bound = bound.view, bound.texel, bound.bound
        return BufferDescriptor(
            descriptor_type,
            bound.buffer,
            device.name_of(bound.buffer),
            bound.offset,
            bound.range,
            tracker.buffers.size_of(bound.buffer),
            view,
            device.name_of(view) if view else None,
            texel,
        )

    return lookup


def _objects(context: ActionContext, shader_ids: set[int]) -> list[ObjectRef]:
    refs = [
        ObjectRef(OBJECT_TYPE_COMMAND_BUFFER, context.command_buffer, context.command_buffer_name)
    ]
    if context.pipeline:  # none with shader objects
        refs.append(ObjectRef(OBJECT_TYPE_PIPELINE, context.pipeline, context.pipeline_name))
    for shader in context.shaders:
        if shader.shader_id in shader_ids and shader.shader_object:
            refs.append(
                ObjectRef(OBJECT_TYPE_SHADER_EXT, shader.shader_object, shader.shader_object_name)
            )
        if shader.shader_id in shader_ids and shader.shader_module:
            refs.append(
                ObjectRef(
                    OBJECT_TYPE_SHADER_MODULE, shader.shader_module, shader.shader_module_name
                )
            )
    return refs


def report_action(
    device: DeviceState, state: CommandBufferState, action: Action, words: list[int]
) -> list[ErrorRecord]:
    """Decode the block and deliver a message per error (and per decoding problem); returns
    the records decoded."""
    from gpuav.instrument.record import RESERVED_TAIL_WORDS
    from gpuav.layer.printf_delivery import deliver_printf
    from gpuav.report.decode import (
        CORRUPT_OUTPUT_ID,
        OUTPUT_FULL_ID,
        decode_output_buffer,
        overflow_text,
    )
    from gpuav.report.messages import compose_messages

    context = action_context(device, state, action)
    decoded = decode_output_buffer(words, RESERVED_TAIL_WORDS)
    records = list(decoded.records)
    if not device.instance.settings.robust_buffer_warnings:
        records = [r for r in records if not _robustly_defined(r, context)]
    checked = [record for record in records if record.error_code in ACTION_CHECK_ERRORS]
    if checked:
        records = [record for record in records if record.error_code not in ACTION_CHECK_ERRORS]
    objects = _objects(context, {record.shader_id for record in records})
    try:
        messages = compose_messages(records, context)
        if checked:
            messages += compose_check_messages(device, state, action, checked, context)
    except Exception as error:  # the report side must not cost the app its run
        device.reporter.emit(internal_error_message("compose_messages", error), objects)
        messages = []
    for message in messages:
        device.reporter.emit(message, objects)
    deliver_printf(device, context, decoded, objects)
    number = "" if context.action_number is None else f" #{context.action_number}"
    block = (
        f"Output block of {context.command}{number} in command buffer 0x{context.command_buffer:x}"
    )
    if decoded.dropped_words and not decoded.printf_dropped:  # else said by deliver_printf
        device.reporter.emit(
            LayerMessage(OUTPUT_FULL_ID, "warning", f"{block}: {overflow_text(decoded)}."), objects
        )
    for diagnostic in decoded.diagnostics:
        device.reporter.emit(
            LayerMessage(CORRUPT_OUTPUT_ID, "warning", f"{block}: {diagnostic}"), objects
        )
    return list(decoded.records)
