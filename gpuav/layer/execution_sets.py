"""Indirect execution sets (VK_EXT_device_generated_commands): an execute that switches
pipelines or shader objects gets one output block that serves every one of them.

Every pipeline or shader object an app puts in a set was made through gpuav, so it already
runs gpuav's instrumented code (or its original code, where gpuav left it so). What the execute
needs is that its records name their shaders and that each instrumented member reaches gpuav's
buffers. The action stands for a pipeline whose shaders are the bound ones' and every member's,
bound as the bound pipeline (or, when it is not instrumented, the first instrumented member)
reaches gpuav's buffers; members that reach them the other way (a compatible layout with no room
for gpuav's set pushes the address instead) get the same block that way too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from gpuav.layer import command_buffers as engine
from gpuav.layer.state import (
    CommandBufferState,
    DeviceState,
    IndirectExecutionSet,
    PipelineState,
    ShaderTracker,
)


def post_call_record_create(
    device: DeviceState, handle: int, shader_objects: bool, initial: Sequence[int]
) -> None:
    """A new set: its initial pipeline (or shader objects) at indices 0, 1, ..."""
    device.execution_sets[handle] = IndirectExecutionSet(shader_objects, dict(enumerate(initial)))


def post_call_record_update(
    device: DeviceState, handle: int, writes: Sequence[tuple[int, int]]
) -> None:
    """vkUpdateIndirectExecutionSetPipelineEXT/ShaderEXT: (index, member) pairs."""
    found = device.execution_sets.get(handle)
    if found is not None:
        found.members.update(writes)


def pre_call_record_destroy(device: DeviceState, handle: int) -> None:
    device.execution_sets.pop(handle, None)


def _instrumented_members(
    device: DeviceState, found: IndirectExecutionSet, bind_point: int
) -> list[PipelineState]:
    """The set's instrumented members, a shader object standing as a pipeline of itself."""
    members: list[PipelineState] = []
    for handle in found.members.values():
        if found.shader_objects:
            shader = device.shader_objects.get(handle)
            if shader is not None:
                tracker: ShaderTracker = shader.tracker
                members.append(
                    PipelineState(
                        handle, bind_point, shader.layout, True, {tracker.shader_id: tracker},
                        shader.context_stages,
                    )
                )  # fmt: skip
        else:
            pipeline = device.pipelines.get(handle)
            if pipeline is not None and pipeline.instrumented:
                members.append(pipeline)
    return members


def pre_call_record_execute(
    state: CommandBufferState, bind_point: int, handle: int, command: str
) -> None:
    """An execute with execution set ``handle``: one output block for the bound pipeline and
    every member, and records decoded with whichever member's shader wrote them."""
    device = state.device
    found = device.execution_sets.get(handle)
    members = [] if found is None else _instrumented_members(device, found, bind_point)
    bound = state.bound.get(bind_point)
    base = bound if bound is not None and bound.instrumented else None
    if base is None and members:
        base = members[0]
    if base is None:
        engine.pre_call_record_action(state, bind_point, command)
        return
    shaders = dict(base.shaders)
    for member in members:
        shaders.update(member.shaders)
    actions = len(state.actions)
    # The commands can switch shaders and push constants: no stage is decided on the host.
    runs = replace(base, shaders=shaders, verdict=None, pushed_verdict=None, pushed_bits=0)
    engine.pre_call_record_action(state, bind_point, command, runs)
    if len(state.actions) == actions:
        return  # no output block (none left, or GPU-AV off)
    block = state.actions[-1].block
    by_address = bool(base.context_stages)
    reached: set[tuple[int, int]] = set()
    for member in members:
        way = (member.layout, member.context_stages)
        if bool(member.context_stages) == by_address or way in reached:
            continue
        reached.add(way)
        if member.context_stages and device.context_offset is not None:
            device.calls.cmd_push_context(
                state.handle, member.layout, member.context_stages, device.context_offset,
                block.context_address,
            )  # fmt: skip
        else:
            device.calls.cmd_bind_output_block(
                state.handle, bind_point, member.layout, device.set_index, block.descriptor_set
            )
