"""Differential test of the execution, storage and atomics rules against spirv-val on mutated
corpus shaders: a pointer's storage class, an execution mode, an entry point's execution model
or the addressing model is changed, and both validators judge the result.

As in test_memory_differential: when spirv-val's first error is a rule we implement we report
it too (under today's VUID where the spec renumbered it), and when spirv-val accepts we report
none of the module rules it also checks. Device rules are out of it (every feature is on).
"""

from __future__ import annotations

import re

from hypothesis import event, given, settings
from hypothesis import strategies as st

from gpuav.errors import DecodeError
from gpuav.spirv import read, write
from gpuav.spirv.grammar import ExecutionMode, Op
from gpuav.spirv.grammar import StorageClass as Class
from gpuav.validate import rules_atomics, rules_execution, rules_storage
from gpuav.validate.diagnostics import Severity
from tests.shaders.glsl import corpus_shaders
from tests.validate.asm import spirv_val, validate_words
from tests.validate.test_corpus_execution_memory import ALL_FEATURES, FAMILIES

SAME_RULE = {
    "VUID-StandaloneSpirv-None-04633": rules_execution.ENTRY_POINT_SIGNATURE,
    "VUID-StandaloneSpirv-None-04634": rules_execution.RECURSION,
    "VUID-StandaloneSpirv-None-04635": rules_execution.ADDRESSING_MODEL,
    "VUID-StandaloneSpirv-OriginLowerLeft-04653": rules_execution.ORIGIN_LOWER_LEFT,
    "VUID-StandaloneSpirv-PixelCenterInteger-04654": rules_execution.PIXEL_CENTER_INTEGER,
    # Renumbered: 04683, then 06426, now 10685.
    "VUID-StandaloneSpirv-LocalSize-06426": rules_execution.COMPUTE_LOCAL_SIZE,
    "VUID-StandaloneSpirv-None-04643": rules_storage.STORAGE_CLASS,
    "VUID-StandaloneSpirv-None-04644": rules_storage.OUTPUT_STAGE,
    "VUID-StandaloneSpirv-None-04645": rules_storage.WORKGROUP_STAGE,
    "VUID-StandaloneSpirv-OpVariable-04651": rules_storage.INITIALIZER_CLASS,
    "VUID-StandaloneSpirv-None-04686": rules_atomics.STORAGE_CLASS,
}
CHECKED_BY_BOTH = frozenset(SAME_RULE.values())
STORAGE_CLASSES = [
    Class.UniformConstant,
    Class.Input,
    Class.Uniform,
    Class.Output,
    Class.Workgroup,
    Class.CrossWorkgroup,
    Class.Private,
    Class.Function,
    Class.Generic,
    Class.PushConstant,
    Class.AtomicCounter,
    Class.Image,
    Class.StorageBuffer,
]
MODES = [
    ExecutionMode.OriginUpperLeft,
    ExecutionMode.OriginLowerLeft,
    ExecutionMode.PixelCenterInteger,
    ExecutionMode.EarlyFragmentTests,
]
SHADERS = [(shader.compile("none"), shader.target_env) for shader in corpus_shaders()]


@settings(max_examples=150, deadline=None)
@given(
    which=st.integers(min_value=0, max_value=len(SHADERS) - 1),
    kind=st.sampled_from(["pointer", "mode", "model", "addressing"]),
    pick=st.integers(min_value=0),
    value=st.integers(min_value=0, max_value=len(STORAGE_CLASSES) - 1),
)
def test_module_rules_agree_with_spirv_val(which: int, kind: str, pick: int, value: int) -> None:
    words, target_env = SHADERS[which]
    module = read(words)
    if kind == "pointer":
        pointers = [i for i in module.globals if i.opcode == Op.TypePointer]
        pointer = pointers[pick % len(pointers)]
        pointer.operands[1] = STORAGE_CLASSES[value]
        for variable in module.globals:  # variables of that type follow it
            if variable.opcode == Op.Variable and variable.operands[0] == pointer.operands[0]:
                variable.operands[2] = STORAGE_CLASSES[value]
    elif kind == "mode" and module.execution_modes:
        mode = module.execution_modes[pick % len(module.execution_modes)]
        mode.operands[1:] = [MODES[value % len(MODES)]]
    elif kind == "model":
        module.entry_points[pick % len(module.entry_points)].operands[0] = value % 6
    elif kind == "addressing":
        module.memory_model[0].operands[0] = value % 3
    try:
        mutated = write(module)
        read(mutated)
    except DecodeError:
        return
    accepted, message = spirv_val(mutated, target_env)
    ours = {
        d.rule
        for d in validate_words(
            mutated, families=FAMILIES, target_env=target_env, features=ALL_FEATURES
        )
        if d.severity == Severity.ERROR
    }
    if accepted:
        assert not ours & CHECKED_BY_BOTH, (ours, message)
    else:
        for vuid in re.findall(r"\[(VUID-[^\]]+)\]", message)[:1]:
            if vuid in SAME_RULE:
                event(f"both report {vuid}")
                assert SAME_RULE[vuid] in ours, (vuid, ours, message)
