"""DefUse built in one loop (fixed shapes inlined, walked shapes remembered) gives exactly
what a grammar walk of every instruction gives; a module and its analyses hold no cycle."""

from __future__ import annotations

import gc
import weakref
from collections import defaultdict
from collections.abc import Iterator

import pytest

from gpuav.spirv import read
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module
from tests.shaders.glsl import DEBUG_MODES, DebugMode, corpus_shaders
from tests.validate.asm import assemble


def _walked_users(module: Module) -> dict[int, list[Instruction]]:
    """The reference: every instruction's ids found by a full grammar walk, no shortcuts."""
    id_operands = IdOperands(module)
    users: defaultdict[int, list[Instruction]] = defaultdict(list)
    for instruction in module.instructions():
        result = instruction.result_id
        for at in id_operands.walk(instruction):
            if instruction.operands[at] != result:
                users[instruction.operands[at]].append(instruction)
    return dict(users)


def _same(module_words: list[int]) -> DefUse:
    module = read(module_words)
    def_use = DefUse(module)
    assert dict(def_use.users) == _walked_users(module)
    defined = {i.result_id: i for i in module.instructions() if i.result_id is not None}
    assert def_use.defs == defined
    for function in module.functions:
        for block in function.blocks:
            for instruction in [block.label, *block.instructions]:
                assert def_use.place(instruction) == (function, block)
    return def_use


@pytest.mark.parametrize("debug", DEBUG_MODES)
def test_same_as_a_full_grammar_walk_on_the_corpus(debug: DebugMode) -> None:
    for shader in corpus_shaders():
        _same(shader.compile(debug))


def test_decorations_of_one_shape_but_different_parameters() -> None:
    # Same operand count: only UniformId's parameter is an id, Location's is a literal.
    text = """OpCapability Shader
OpCapability GroupNonUniform
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %b Location 3
OpDecorate %a UniformId %scope
OpDecorate %c Location 4
%void = OpTypeVoid
%uint = OpTypeInt 32 0
%scope = OpConstant %uint 3
%a = OpConstant %uint 1
%b = OpConstant %uint 2
%c = OpConstant %uint 5
%fn = OpTypeFunction %void
%main = OpFunction %void None %fn
%label = OpLabel
OpReturn
OpFunctionEnd
"""
    words = assemble(text, "vulkan1.3")
    def_use = _same(words)
    scope = next(i for i in def_use.module.globals if i.opcode == Op.Constant).operands[1]
    assert [user.opcode for user in def_use.uses(scope)] == [Op.Decorate]
    # record and forget keep it current.
    decoration = def_use.uses(scope)[0]
    def_use.forget(decoration)
    assert def_use.uses(scope) == []
    def_use.record(decoration)
    assert def_use.uses(scope) == [decoration]


def test_switch_literals_sized_through_the_type_lookup() -> None:
    # OpSwitch needs the selector's type (its literal width): the walk asks type_of.
    for shader in corpus_shaders():
        if shader.name == "switch_call_chain.comp":
            def_use = _same(shader.compile())
            switch = next(i for i in def_use.module.instructions() if i.opcode == Op.Switch)
            assert def_use.id_operands.type_of(switch.operands[0]) is not None
            break
    else:
        raise AssertionError("switch_call_chain.comp is gone from the corpus")


@pytest.fixture
def collector_off() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if enabled:
        gc.enable()


@pytest.mark.usefixtures("collector_off")
def test_a_module_and_its_def_use_are_freed_by_reference_counting() -> None:
    module = read(corpus_shaders()[0].compile())
    def_use = DefUse(module)
    def_use.id_operands.type_of(1)  # builds the lazy type index too
    alive = weakref.ref(module), weakref.ref(def_use), weakref.ref(def_use.id_operands)
    del module, def_use
    assert [ref() for ref in alive] == [None, None, None]


@pytest.mark.usefixtures("collector_off")
def test_a_validated_module_is_freed_by_reference_counting() -> None:
    from gpuav.validate.api import validate

    module = read(corpus_shaders()[0].compile())
    alive = weakref.ref(module)
    validate(module)
    del module
    assert alive() is None
