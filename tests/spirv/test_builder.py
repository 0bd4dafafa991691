"""The builder's output is valid SPIR-V: types are shared, and if/else with phis can be
wrapped around any value-producing instruction of real shaders (what instrumentation does)."""

from __future__ import annotations

import subprocess
from array import array

import pytest

from gpuav.spirv import Instruction, read, write
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op
from gpuav.spirv.module import Block, Function, Module
from tests.shaders.glsl import CorpusShader, compile_glsl, corpus_shaders, spirv_val

COMPUTE = """
#version 450
layout(local_size_x = 4) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint sum = 0;
    for (uint k = 0; k < i; ++k) { sum += values[k] * 3u; }
    values[i] = sum;
}
"""

# Results that have no null constant in Logical addressing, or that must stay first in a block.
_NOT_GUARDABLE = frozenset({Op.Phi, Op.Variable, Op.Label, Op.FunctionParameter})


def test_types_and_constants_are_shared_with_the_module() -> None:
    module = read(compile_glsl(COMPUTE, "comp"))
    uint = next(
        i.result_id for i in module.globals if i.opcode == Op.TypeInt and i.operands[1:] == [32, 0]
    )
    builder = Builder(module)
    bound = module.bound
    assert builder.type_int(32, signed=False) == uint
    assert builder.constant_uint(3) == builder.constant_uint(3)
    assert builder.type_pointer(12, uint) == builder.type_pointer(12, uint)
    assert module.bound <= bound + 2  # at most the StorageBuffer pointer and the constant 3
    assert builder.type_int(32, signed=True) != uint
    spirv_val(write(module), "vulkan1.1")


def _guardable(def_use: DefUse, types: Types, instruction: Instruction) -> bool:
    if instruction.opcode in _NOT_GUARDABLE or instruction.type_id is None:
        return False
    # A sampled image must be consumed in its own block; instrumentation moves both.
    used = def_use.id_operands.used_ids(instruction)
    if any(getattr(def_use.definition(i), "opcode", None) == Op.SampledImage for i in used):
        return False
    type_opcode = types.opcode(instruction.type_id)
    return (
        type_opcode
        not in (
            Op.TypePointer,
            Op.TypeImage,
            Op.TypeSampler,
            Op.TypeSampledImage,
            Op.TypeVoid,
        )
        and instruction.opcode != Op.ExtInst
    )


def guard_every_value(module: Module) -> int:
    """Put each value-producing instruction under `if (true)` and join it with a phi."""
    def_use = DefUse(module)
    types = Types(def_use.defs)
    builder = Builder(module, def_use)
    targets: list[tuple[Function, Instruction]] = [
        (function, instruction)
        for function in module.functions
        for block in function.blocks
        for instruction in block.instructions
        if _guardable(def_use, types, instruction)
    ]
    condition = builder.constant_bool(True)
    for function, instruction in targets:
        place = def_use.place(instruction)
        assert place is not None
        _function, block = place
        builder.position_before(instruction, block, function)
        old_result = instruction.operands[1]
        with builder.if_else(condition) as (valid, invalid):
            with valid:
                builder.move_here(instruction, valid.merge)
                instruction.operands[1] = module.new_id()
            with invalid:
                null = builder.constant_null(instruction.operands[0])
        builder.phi(
            instruction.operands[0],
            (instruction.operands[1], valid.exit_label),
            (null, invalid.exit_label),
            result=old_result,
        )
    return len(targets)


def _blocks(module: Module) -> list[Block]:
    return [block for function in module.functions for block in function.blocks]


@pytest.mark.parametrize("debug", ["none", "g"])
def test_guarding_every_value_of_a_loop_keeps_the_module_valid(debug: str) -> None:
    module = read(compile_glsl(COMPUTE, "comp", debug=debug))  # type: ignore[arg-type]
    blocks_before = len(_blocks(module))
    guarded = guard_every_value(module)
    assert guarded > 5
    assert len(_blocks(module)) == blocks_before + 3 * guarded
    spirv_val(write(module), "vulkan1.1")


@pytest.mark.parametrize("shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_guarding_every_value_of_corpus_shaders_keeps_them_valid(shader: CorpusShader) -> None:
    module = read(shader.compile("g"))
    guard_every_value(module)
    spirv_val(write(module), shader.target_env)


def test_new_function_with_if_then() -> None:
    module = read(compile_glsl(COMPUTE, "comp"))
    builder = Builder(module)
    uint = builder.type_int()
    boolean = builder.type_bool()
    function, (parameter,) = builder.new_function(uint, [uint])
    is_big = builder.op(Op.UGreaterThan, boolean, parameter, builder.constant_uint(10))
    with builder.if_then(is_big) as branch:
        doubled = builder.op(Op.IAdd, uint, parameter, parameter)
    result = builder.phi(uint, (doubled, branch.exit_label), (parameter, branch.head_label))
    builder.op_void(Op.ReturnValue, result)
    assert len(function.blocks) == 3
    spirv_val(write(module), "vulkan1.1")


def _optimized(words: list[int], tmp_path_factory: pytest.TempPathFactory) -> list[int]:
    """spirv-opt -O output: merged blocks put real code into loop headers."""
    folder = tmp_path_factory.mktemp("opt")
    source, target = folder / "in.spv", folder / "out.spv"
    source.write_bytes(array("I", words).tobytes())
    subprocess.run(["spirv-opt", "-O", str(source), "-o", str(target)], check=True)
    return array("I", target.read_bytes()).tolist()


@pytest.mark.parametrize(
    "shader",
    corpus_shaders(),
    ids=lambda shader: shader.name,
)
def test_guarding_optimized_shaders_keeps_them_valid(
    shader: CorpusShader, tmp_path_factory: pytest.TempPathFactory
) -> None:
    module = read(_optimized(shader.compile("none"), tmp_path_factory))
    guard_every_value(module)
    spirv_val(write(module), shader.target_env)


def test_guarding_inside_a_loop_header_detaches_the_header(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    module = read(_optimized(compile_glsl(COMPUTE, "comp"), tmp_path_factory))
    headers = [
        block
        for block in _blocks(module)
        if any(i.opcode == Op.LoopMerge for i in block.instructions)
        and any(i.opcode not in (Op.Phi, Op.LoopMerge) for i in block.instructions[:-1])
    ]
    assert headers, "spirv-opt -O no longer puts code in loop headers; pick another shader"
    guard_every_value(module)
    for block in _blocks(module):
        if any(i.opcode == Op.LoopMerge for i in block.instructions):
            assert [i.opcode for i in block.instructions if i.opcode != Op.Phi] == [
                Op.LoopMerge,
                Op.Branch,
            ]
    spirv_val(write(module), "vulkan1.1")
