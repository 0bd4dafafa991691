"""build_def_use gives exactly DefUse(module): on real shaders and on tricky decorations."""

from __future__ import annotations

import pytest

from gpuav.spirv import read
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.grammar import Op
from gpuav.validate.fast_def_use import build_def_use
from tests.shaders.glsl import DEBUG_MODES, DebugMode, corpus_shaders
from tests.validate.asm import assemble


def _same(module_words: list[int]) -> None:
    module = read(module_words)
    plain, fast = DefUse(module), build_def_use(module)
    assert fast.defs == plain.defs
    assert dict(fast.users) == dict(plain.users)
    assert fast.places == plain.places


@pytest.mark.parametrize("debug", DEBUG_MODES)
def test_same_as_def_use_on_the_corpus(debug: DebugMode) -> None:
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
    _same(words)
    module = read(words)
    fast = build_def_use(module)
    scope = next(i for i in module.globals if i.opcode == Op.Constant).operands[1]
    assert [user.opcode for user in fast.uses(scope)] == [Op.Decorate]
    # The result is a working DefUse: record and forget keep it current.
    decoration = fast.uses(scope)[0]
    fast.forget(decoration)
    assert fast.uses(scope) == []
    fast.record(decoration)
    assert fast.uses(scope) == [decoration]


def test_a_validated_module_is_freed_without_a_cyclic_collection() -> None:
    import gc
    import weakref

    from gpuav.validate.api import validate

    module = read(corpus_shaders()[0].compile())
    alive = weakref.ref(module)
    gc.disable()
    try:
        validate(module)
        del module
        assert alive() is None  # refcounting alone freed it: no cycle holds it
    finally:
        gc.enable()


def test_switch_literals_still_sized_through_the_weak_type_lookup() -> None:
    # OpSwitch needs the selector's type (its literal width): the walk asks type_of.
    for shader in corpus_shaders():
        if shader.name == "switch_call_chain.comp":
            _same(shader.compile())
            break
    else:
        raise AssertionError("switch_call_chain.comp is gone from the corpus")
