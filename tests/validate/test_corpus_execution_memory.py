"""The execution, memory, storage, pointer, atomics and float-controls families on real
glslang shaders: the corpus breaks none of their rules on a device with every feature, only
feature rules on a device with none, and mutated modules never make a family raise."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuav.errors import DecodeError
from gpuav.spirv import read, write
from gpuav.validate import (
    rules_atomics,
    rules_execution,
    rules_float_controls,
    rules_memory,
    rules_pointers,
    rules_storage,
)
from gpuav.validate.context import ValidationContext
from tests.shaders.glsl import corpus_shaders
from tests.validate.asm import validate_words

FAMILIES = [
    rules_execution.check,
    rules_memory.check,
    rules_storage.check,
    rules_pointers.check,
    rules_atomics.check,
    rules_float_controls.check,
]
# Every device feature (or property) these families consult.
ALL_FEATURES = [
    "maintenance4",
    "vulkanMemoryModel",
    "vulkanMemoryModelDeviceScope",
    "shaderSubgroupClock",
    "shaderDeviceClock",
    "shaderZeroInitializeWorkgroupMemory",
    *(f"storageBuffer{w}BitAccess" for w in (8, 16)),
    *(f"uniformAndStorageBuffer{w}BitAccess" for w in (8, 16)),
    *(f"storagePushConstant{w}" for w in (8, 16)),
    "storageInputOutput16",
    *(f"shader{s}Int64Atomics" for s in ("Buffer", "Shared", "Image")),
    *(
        f"shader{s}Float{w}{o}"
        for s in ("Buffer", "Shared", "Image")
        for w in (16, 32, 64)
        for o in ("Atomics", "AtomicAdd", "AtomicMinMax")
    ),
    *rules_float_controls.ALL_PROPERTIES,
]
SHADERS = corpus_shaders()


@pytest.mark.parametrize("shader", SHADERS, ids=[shader.name for shader in SHADERS])
def test_corpus_is_clean_with_every_feature(shader: object) -> None:
    from tests.shaders.glsl import CorpusShader

    assert isinstance(shader, CorpusShader)
    for debug in ("none", "gV"):
        words = shader.compile(debug)
        found = validate_words(
            words, families=FAMILIES, target_env=shader.target_env, features=ALL_FEATURES
        )
        assert found == [], f"{shader.name} ({debug}): {found}"
        # With no features only device rules may be broken, never a module rule.
        bare = validate_words(words, families=FAMILIES, target_env=shader.target_env)
        assert all(d.rule.startswith("VUID-RuntimeSpirv-") for d in bare), bare


def test_feature_rules_fire_somewhere_in_the_corpus() -> None:
    """The corpus exercises the feature rules (so the clean run above means something)."""
    fired = set()
    for shader in SHADERS:
        words = shader.compile("none")
        for diagnostic in validate_words(words, families=FAMILIES, target_env=shader.target_env):
            fired.add(diagnostic.rule)
    assert {
        rules_atomics.BUFFER_INT64,
        rules_atomics.IMAGE_INT64,
        rules_atomics.BUFFER_FLOAT,
        rules_storage.STORAGE_BUFFER_16BIT,
        rules_storage.INPUT_OUTPUT_16BIT,
    } <= fired


CORPUS_WORDS = [shader.compile("none") for shader in SHADERS]


@given(
    index=st.integers(min_value=0, max_value=len(CORPUS_WORDS) - 1),
    changes=st.lists(
        st.tuples(st.integers(min_value=0), st.integers(min_value=0), st.integers(min_value=0)),
        min_size=1,
        max_size=6,
    ),
)
def test_mutated_modules_never_make_a_family_raise(
    index: int, changes: list[tuple[int, int, int]]
) -> None:
    """Operands swapped for other ids (or small numbers) keep the module readable but break
    every assumption about types, so the families' lookups must all be defensive."""
    module = read(CORPUS_WORDS[index])
    instructions = list(module.instructions())
    for which, operand, value in changes:
        instruction = instructions[which % len(instructions)]
        if instruction.operands:
            instruction.operands[operand % len(instruction.operands)] = value % (module.bound + 8)
    try:
        # Through words again: only what the reader accepts reaches a validator.
        module = read(write(module))
    except DecodeError:
        return
    context = ValidationContext(module, target_env="vulkan1.2")
    for family in FAMILIES:
        list(family(context))  # must not raise
