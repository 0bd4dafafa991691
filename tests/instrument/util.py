"""Helpers of the instrumentation tests: instrument, validate, and find original indices."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gpuav.instrument.api import instrument_module, instrument_shader
from gpuav.instrument.descriptor_state import (
    binding_table_word,
    bound_area,
    range_word,
    region_words,
    set_tables,
)
from gpuav.spirv import read, write
from gpuav.spirv.grammar import Op
from tests.harness import Binding, DescriptorSetSpec, VulkanContext
from tests.harness.debug_buffer import DebugOutputBuffer
from tests.shaders.glsl import TargetEnv, spirv_val

SHADER_ID = 0x5EED
DEBUG_SET = 7


def instrumented(
    words: list[int],
    target_env: TargetEnv = "vulkan1.2",
    *,
    descriptor_set: int = DEBUG_SET,
    shader_id: int = SHADER_ID,
) -> list[int]:
    """The instrumented module, which spirv-val must accept for ``target_env``."""
    out = instrument_shader(words, shader_id=shader_id, descriptor_set=descriptor_set)
    spirv_val(out, target_env)
    return out


def instrumented_with_state(words: list[int]) -> tuple[list[int], int]:
    """The module instrumented against the layer's descriptor state (spirv-val must accept it
    for vulkan1.2), and how many loops got an unchecked copy."""
    result = instrument_module(
        read(words), shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    out = write(result.module)
    spirv_val(out, "vulkan1.2")
    return out, result.loops_copied


def buffer_region(ranges: Sequence[int | None]) -> list[int]:
    """The region of a set whose bindings 0, 1... hold one buffer descriptor each, bound to
    ``ranges`` bytes (None: unwritten), as the layer keeps it."""
    state = region_words(dict.fromkeys(range(len(ranges)), 1))
    for binding, size in enumerate(ranges):
        state[state[binding_table_word(binding)]] = 0 if size is None else range_word(size)
    return state


def bound_sets_area(state: Sequence[int], *regions: int) -> np.ndarray:
    """The bound-sets area the layer gives an action whose sets 0, 1... have their regions at
    ``regions`` (NO_STATE: unknown) of ``state``: the region words and the action tables."""
    return np.array(
        bound_area(list(regions), lambda region: set_tables(region, state[region:])), np.uint32
    )


def gpuav_set(
    vk: VulkanContext, debug: DebugOutputBuffer, state: Sequence[int], bound: np.ndarray
) -> DescriptorSetSpec:
    """gpuav's own set as the layer binds it: the debug output, the bound-sets area and the
    descriptor state."""
    return DescriptorSetSpec(
        [
            debug.binding(),
            Binding(1, "uniform_buffer", [vk.buffer(data=bound)]),
            Binding(2, "storage_buffer", [vk.buffer(data=np.array(state, np.uint32))]),
        ]
    )


def origins(words: list[int], opcode: int) -> list[int]:
    """Indices in the original module of every instruction with ``opcode``, in order."""
    found = []
    for instruction in read(words).instructions():
        if instruction.opcode == opcode and instruction.origin is not None:
            found.append(instruction.origin)
    return found


def load_origins(words: list[int], variable_name: str) -> list[int]:
    """Original indices of the OpLoads through an access chain into the named variable."""
    module = read(words)
    variable = next(
        i.operands[0]
        for i in module.debug_names
        if i.opcode == Op.Name and i.string(1) == variable_name
    )
    chains = {
        i.operands[1]
        for i in module.instructions()
        if i.opcode == Op.AccessChain and i.operands[2] == variable
    }
    return [
        i.origin
        for i in module.instructions()
        if i.opcode == Op.Load and i.operands[2] in chains and i.origin is not None
    ]
