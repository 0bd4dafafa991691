"""Differential test of the scope and semantics rules against spirv-val on mutated corpus
shaders: a constant used as a scope or semantics operand gets another value, and both
validators judge the result.

spirv-val reports only its first error, so the comparison is one-sided each way: when its
first error is a rule we implement, we report that rule too (under today's VUID where the spec
renumbered it); when it accepts, we report none of the rules it checks. Rules
SPIRV-Tools 2023.1 checks more narrowly or not at all (10870 beyond OpMemoryBarrier, 04641 on
barriers, 10871, 07951) are left out of the second direction: the current spec decides them,
and their own tests say so.
"""

from __future__ import annotations

import re

from hypothesis import event, given, settings
from hypothesis import strategies as st

from gpuav.spirv import read, write
from gpuav.spirv.grammar import Op
from gpuav.validate import rules_memory as rules
from gpuav.validate.diagnostics import Severity
from tests.shaders.glsl import corpus_shaders
from tests.validate.asm import spirv_val, validate_words

# spirv-val's VUID (2023.1 numbering) -> ours.
SAME_RULE = {
    "VUID-StandaloneSpirv-None-04636": rules.EXECUTION_SCOPE,
    "VUID-StandaloneSpirv-None-04637": rules.EXECUTION_SCOPE_WORKGROUP_STAGE,
    "VUID-StandaloneSpirv-None-04638": rules.MEMORY_SCOPE,
    "VUID-StandaloneSpirv-None-04640": rules.MEMORY_SCOPE_SHADER_CALL,
    "VUID-StandaloneSpirv-None-04641": rules.MEMORY_SCOPE_INVOCATION,
    "VUID-StandaloneSpirv-None-04642": rules.GROUP_OPERATION_SCOPE,
    "VUID-StandaloneSpirv-OpControlBarrier-04682": rules.CONTROL_BARRIER_STAGE,
    "VUID-StandaloneSpirv-ExecutionModel-07320": rules.MEMORY_SCOPE_WORKGROUP_TESC_GLSL,
    "VUID-StandaloneSpirv-OpAtomicStore-04730": rules.ATOMIC_STORE_ORDER,
    "VUID-StandaloneSpirv-OpAtomicLoad-04731": rules.ATOMIC_LOAD_ORDER,
    "VUID-StandaloneSpirv-OpMemoryBarrier-04732": rules.MEMORY_BARRIER_RELAXED,
    "VUID-StandaloneSpirv-OpMemoryBarrier-04733": rules.ORDER_NEEDS_STORAGE,
}
# spirv-val 2023.1 checks 10870 on OpMemoryBarrier only and 04641 on atomics only; the spec
# text applies both to every MemorySemantics.
CHECKED_BY_BOTH = frozenset(SAME_RULE.values()) - {
    rules.ORDER_NEEDS_STORAGE,
    rules.MEMORY_SCOPE_INVOCATION,
}
FEATURES = ["vulkanMemoryModel", "vulkanMemoryModelDeviceScope"]
VALUES = [
    *range(7),  # every scope
    *(0x2, 0x4, 0x8, 0x10, 0x6),  # orders
    *(0x40, 0x42, 0x44, 0x48, 0x100, 0x102, 0x104, 0x108, 0x800, 0x1000),  # with storage
    0x2048,  # MakeAvailable | AcquireRelease | UniformMemory
    0x4042,  # MakeVisible | Acquire | UniformMemory
    0x8048,  # Volatile | AcquireRelease | UniformMemory
]


def _candidates() -> list[tuple[list[int], str, list[int]]]:
    """(words, target env, ids of constants used as a scope or semantics operand)."""
    found: list[tuple[list[int], str, list[int]]] = []
    for shader in corpus_shaders():
        words = shader.compile("none")
        module = read(words)
        constants = {i.operands[1] for i in module.globals if i.opcode == Op.Constant}
        used: set[int] = set()
        for function in module.functions:
            for block in function.blocks:
                for instruction in block.instructions:
                    for position, _role in rules.ROLES.get(instruction.opcode, ()):
                        if position < len(instruction.operands):
                            used.add(instruction.operands[position])
        if used & constants:
            found.append((words, shader.target_env, sorted(used & constants)))
    return found


CANDIDATES = _candidates()


@settings(max_examples=120, deadline=None)
@given(
    which=st.integers(min_value=0, max_value=len(CANDIDATES) - 1),
    pick=st.integers(min_value=0),
    value=st.sampled_from(VALUES),
)
def test_scope_and_semantics_rules_agree_with_spirv_val(which: int, pick: int, value: int) -> None:
    words, target_env, constant_ids = CANDIDATES[which]
    module = read(words)
    target = constant_ids[pick % len(constant_ids)]
    for instruction in module.globals:
        if instruction.opcode == Op.Constant and instruction.operands[1] == target:
            instruction.operands[2] = value
    mutated = write(module)
    accepted, message = spirv_val(mutated, target_env)
    ours = {
        d.rule
        for d in validate_words(
            mutated, families=[rules.check], target_env=target_env, features=FEATURES
        )
        if d.severity == Severity.ERROR
    }
    if accepted:
        assert not ours & CHECKED_BY_BOTH, (ours, message)
    else:
        theirs = re.findall(r"\[(VUID-[^\]]+)\]", message)[:1]
        for vuid in theirs:
            if vuid in SAME_RULE:
                event(f"both report {vuid}")
                assert SAME_RULE[vuid] in ours, (vuid, ours, message)


def test_the_corpus_has_scopes_to_mutate() -> None:
    assert len(CANDIDATES) >= 10
