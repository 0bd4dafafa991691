"""A type nested in itself (invalid, but the reader takes it) must not hang any analysis.

The layer validates and instruments every shader an application creates: a walk down element
types that never ends would hang the application.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

import pytest

from gpuav.errors import GpuavError
from gpuav.instrument.api import instrument_shader
from gpuav.spirv import read, write
from gpuav.spirv.grammar import Op
from gpuav.validate.api import validate
from tests.shaders.glsl import CORPUS_DIR, compile_glsl

# Operand index of the type each of these refers to.
ELEMENT_OPERAND = {
    Op.TypeVector: 1,
    Op.TypeMatrix: 1,
    Op.TypeArray: 1,
    Op.TypeRuntimeArray: 1,
    Op.TypeSampledImage: 1,
    Op.TypeStruct: 1,
    Op.TypePointer: 2,
}
SHADERS = (
    "combined_sampler_array_ubo_index.frag",
    "nonuniform_runtime_sampler_array.frag",
    "structs_and_interface_blocks.vert",
)


class Hung(BaseException):
    """Not an Exception: the validator turns those into internal-error diagnostics."""


@pytest.fixture
def deadline() -> Iterator[None]:
    def expire(signum: int, frame: object) -> None:
        raise Hung("analysis did not finish: a cyclic type is walked forever")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("opcode", sorted(ELEMENT_OPERAND))
def test_self_nested_types_end_in_diagnostics_or_gpuav_errors(opcode: int, deadline: None) -> None:
    mutated = 0
    for shader in SHADERS:
        module = read(compile_glsl(CORPUS_DIR / shader))
        nested = [i for i in module.globals if i.opcode == opcode]
        for instruction in nested:
            instruction.operands[ELEMENT_OPERAND[opcode]] = instruction.operands[0]
        mutated += len(nested)
        words = write(module)
        validate(words, target_env="vulkan1.2")
        with contextlib.suppress(GpuavError):
            instrument_shader(words, shader_id=1, descriptor_set=7)
    assert mutated, f"no shader declares opcode {opcode}"
