"""The image, decoration, built-in, group and NonUniform families never raise: mutated real
modules that still parse must give diagnostics, not exceptions (a family runs on the
shader-creation path of every app)."""

from __future__ import annotations

import functools

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gpuav.errors import GpuavError
from gpuav.spirv import read
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import Op
from gpuav.validate import (
    rules_builtins,
    rules_decorations,
    rules_groups,
    rules_image_operands,
    rules_images,
    rules_nonuniform,
    rules_resources,
)
from gpuav.validate.context import ValidationContext
from tests.shaders.glsl import corpus_shaders

FAMILIES = (
    rules_images.check,
    rules_image_operands.check,
    rules_decorations.check,
    rules_resources.check,
    rules_builtins.check,
    rules_groups.check,
    rules_nonuniform.check,
)
_CHOSEN = (
    "nonuniform_runtime_sampler_array.frag",
    "subgroup_arithmetic_ballot.comp",
    "structs_and_interface_blocks.vert",
    "image_dimensions_formats.comp",
    "subpass_input_load.frag",
    "patch_outputs_triangles.tesc",
)


@functools.cache
def _modules() -> tuple[tuple[int, ...], ...]:
    shaders = {shader.name: shader for shader in corpus_shaders()}
    return tuple(tuple(shaders[name].compile()) for name in _CHOSEN)


def _run_all(words: list[int]) -> None:
    try:
        module = read(words)
    except GpuavError:
        assume(False)
        return
    for family in FAMILIES:
        list(family(ValidationContext(module, features=frozenset({"shaderFloat64"}))))


# Each example validates a whole module six times: fewer examples than the CI profile's.
_EXAMPLES = settings(max_examples=min(300, settings().max_examples), deadline=None)


@_EXAMPLES
@given(
    which=st.integers(0, len(_CHOSEN) - 1),
    position=st.integers(5, 10_000),
    value=st.one_of(st.integers(0, 64), st.integers(0, 2**32 - 1)),
)
def test_a_mutated_operand_never_raises(which: int, position: int, value: int) -> None:
    words = list(_modules()[which])
    words[5 + position % (len(words) - 5)] = value
    _run_all(words)


@_EXAMPLES
@given(which=st.integers(0, len(_CHOSEN) - 1), data=st.data())
def test_mutated_instructions_never_raise(which: int, data: st.DataObject) -> None:
    # Point id operands of the parsed module at other ids (shapes stay what the reader
    # accepts): every mutation reaches the families, with ids of the wrong kind everywhere.
    module = read(list(_modules()[which]))
    id_operands = IdOperands(module)
    slots = [
        (instruction, at)
        for instruction in module.instructions()
        for at in id_operands.positions(instruction)
        if instruction.opcode not in (Op.ExtInst, Op.ExtInstImport)  # set ids decide shapes
        and instruction.operands[at] != instruction.result_id
    ]
    for _ in range(data.draw(st.integers(1, 8))):
        instruction, at = data.draw(st.sampled_from(slots))
        instruction.operands[at] = data.draw(st.integers(1, module.bound - 1))
    for family in FAMILIES:
        list(family(ValidationContext(module, features=frozenset({"shaderFloat64"}))))
