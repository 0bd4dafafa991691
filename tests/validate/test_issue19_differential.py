"""Differential tests against spirv-val 2025.1 on mutated corpus modules (issue 19): each
mutation breaks one block-layout, push-constant or version rule (tests/validate/mutations.py).

spirv-val reports only its first error. Whenever that error belongs to the family under test,
gpuav must report the family's rule too; and over all mutations gpuav must detect at least as
many as spirv-val. (Where gpuav finds more, spirv-val 2025.1 does not look: a matrix nested
in a runtime array without MatrixStride, OpDemoteToHelperInvocation in SPIR-V 1.4 without
its extension.)
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator

import pytest

from gpuav.validate import rules_block_layout, rules_grammar_versions, rules_push_constants
from gpuav.validate.api import validate
from tests.shaders.glsl import corpus_shaders
from tests.validate.asm import newer_spirv_val
from tests.validate.mutations import (
    Mutation,
    layout_mutations,
    push_constant_mutations,
    version_mutations,
)

Generator = Callable[[str, str, list[int]], Iterator[Mutation]]

# family -> (mutations, our rule, spirv-val's first errors of that family)
FAMILIES: dict[str, tuple[Generator, str, re.Pattern[str]]] = {
    "block-layout": (
        layout_mutations,
        rules_block_layout.RULE,
        re.compile(r"must follow .*layout rules|must be explicitly laid out"),
    ),
    "push-constants": (
        push_constant_mutations,
        rules_push_constants.USED_TWICE,
        re.compile(r"VUID-StandaloneSpirv-OpEntryPoint-06674"),
    ),
    "versions": (
        version_mutations,
        rules_grammar_versions.RULE,
        re.compile(
            r"requires SPIR-V version|requires one of these extensions|"
            r"is not allowed by Vulkan \S+ specification \(or requires extension\)"
        ),
    ),
}


@functools.cache
def _corpus() -> list[tuple[str, str, list[int]]]:
    return [(shader.name, shader.target_env, shader.compile("none")) for shader in corpus_shaders()]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_gpuav_detects_every_mutation_spirv_val_2025_detects(family: str) -> None:
    generate, rule, theirs = FAMILIES[family]
    mutations = [m for name, env, words in _corpus() for m in generate(name, env, words)]
    spirv_val_found = gpuav_found = 0
    missed: list[str] = []
    for mutation in mutations:
        accepted, message = newer_spirv_val(mutation.words, mutation.target_env)
        first_error = "" if accepted else message.split("\n", 1)[0]
        ours = rule in {d.rule for d in validate(mutation.words, target_env=mutation.target_env)}
        gpuav_found += ours
        if theirs.search(first_error):
            spirv_val_found += 1
            if not ours:
                missed.append(f"{mutation.shader}: {mutation.what}: {first_error}")
    assert len(mutations) >= 30, "the corpus has too little to mutate"
    assert spirv_val_found >= 10, f"spirv-val found only {spirv_val_found} of {len(mutations)}"
    assert not missed, "\n".join(missed)
    assert gpuav_found >= spirv_val_found
