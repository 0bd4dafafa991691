"""Helpers of the instrumentation tests: instrument, validate, and find original indices."""

from __future__ import annotations

from gpuav.instrument.api import instrument_shader
from gpuav.spirv import read
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


def origins(words: list[int], opcode: int) -> list[int]:
    """Indices in the original module of every instruction with ``opcode``, in order."""
    found = []
    for instruction in read(words).instructions():
        if instruction.opcode == opcode and instruction.origin is not None:
            found.append(instruction.origin)
    return found
