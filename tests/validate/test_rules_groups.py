"""Group-operation rules: result types and OpGroupNonUniformBallotBitCount (the Subgroup scope
rule is tested with the memory family that owns it)."""

from __future__ import annotations

from typing import Any

import pytest

from gpuav.validate import rules_groups
from tests.shaders.glsl import CorpusShader, compile_glsl, corpus_shaders
from tests.validate.asm import (
    assemble,
    assert_spirv_val_reports,
    rules,
    spirv_val,
    validate_asm,
    validate_words,
)
from tests.validate.asm_templates import shader

FAMILY = [rules_groups.check]
_CAPABILITIES = "OpCapability GroupNonUniform\nOpCapability GroupNonUniformArithmetic\n" + (
    "OpCapability GroupNonUniformBallot"
)


def _group(body: str, types: str = "", capabilities: str = "", **options: Any) -> set[str]:
    text = shader(capabilities=_CAPABILITIES + capabilities, types=types, body=body)
    return rules(validate_asm(text, families=FAMILY, **options))


def _text(body: str, types: str = "", capabilities: str = "") -> str:
    return shader(capabilities=_CAPABILITIES + capabilities, types=types, body=body)


def test_subgroup_operation_is_valid() -> None:
    assert _group("%sum = OpGroupNonUniformIAdd %uint %uint_3 Reduce %uint_1") == set()


# Result Type: 32-bit int/float, bool, vectors; double with Float64; extended types by feature
def test_vector_and_bool_results_are_valid() -> None:
    body = (
        "%all = OpGroupNonUniformAll %bool %uint_3 %true\n"
        "%ballot = OpGroupNonUniformBallot %v4uint %uint_3 %true\n"
        "%v = OpCompositeConstruct %v4float %float_1 %float_1 %float_1 %float_1\n"
        "%sum = OpGroupNonUniformFAdd %v4float %uint_3 InclusiveScan %v"
    )
    types = "%true = OpConstantTrue %bool"
    assert _group(body, types, "\nOpCapability GroupNonUniformVote") == set()


def test_double_needs_float64_capability() -> None:
    types = "%double = OpTypeFloat 64\n%double_1 = OpConstant %double 1"
    body = "%sum = OpGroupNonUniformFAdd %double %uint_3 Reduce %double_1"
    assert _group(body, types, "\nOpCapability Float64") == set()


def test_16_bit_results_need_extended_types_feature() -> None:
    types = "%ushort = OpTypeInt 16 0\n%ushort_1 = OpConstant %ushort 1"
    body = "%sum = OpGroupNonUniformIAdd %ushort %uint_3 Reduce %ushort_1"
    found = _group(body, types, "\nOpCapability Int16")
    assert found == {rules_groups.EXTENDED_TYPES}
    assert _group(
        body, types, "\nOpCapability Int16", features=["shaderSubgroupExtendedTypes"]
    ) == (set())


def test_struct_result_is_reported() -> None:
    types = "%pair = OpTypeStruct %uint %uint\n%pair_1 = OpConstantComposite %pair %uint_1 %uint_1"
    body = "%copy = OpGroupNonUniformBroadcastFirst %pair %uint_3 %pair_1"
    assert rules_groups.RESULT_TYPE in _group(body, types)


# VUID-StandaloneSpirv-OpGroupNonUniformBallotBitCount-04685 and the ballot value
_BALLOT = "%true = OpConstantTrue %bool"
_BALLOT_BODY = "%ballot = OpGroupNonUniformBallot %v4uint %uint_3 %true\n"


@pytest.mark.parametrize("operation", ["Reduce", "InclusiveScan", "ExclusiveScan"])
def test_ballot_bit_count_scans_are_valid(operation: str) -> None:
    body = (
        _BALLOT_BODY + f"%count = OpGroupNonUniformBallotBitCount %uint %uint_3 {operation} %ballot"
    )
    assert _group(body, _BALLOT) == set()


def test_ballot_bit_count_clustered_is_reported_like_spirv_val() -> None:
    body = _BALLOT_BODY + (
        "%count = OpGroupNonUniformBallotBitCount %uint %uint_3 ClusteredReduce %ballot"
    )
    assert rules_groups.BALLOT_BIT_COUNT_OPERATION in _group(body, _BALLOT)
    text = _text(body, _BALLOT, "\nOpCapability GroupNonUniformClustered")
    assert_spirv_val_reports(text, rules_groups.BALLOT_BIT_COUNT_OPERATION)


def test_ballot_bit_count_of_a_scalar_is_reported_like_spirv_val() -> None:
    body = "%count = OpGroupNonUniformBallotBitCount %uint %uint_3 Reduce %uint_1"
    assert rules_groups.BALLOT_BIT_COUNT_VALUE in _group(body)
    accepted, _ = spirv_val(assemble(_text(body)), "vulkan1.1")
    assert not accepted


def test_glslang_subgroup_shader_is_clean() -> None:
    source = """#version 450
#extension GL_KHR_shader_subgroup_ballot : require
#extension GL_KHR_shader_subgroup_arithmetic : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; };
void main() {
    uvec4 ballot = subgroupBallot(values[gl_LocalInvocationIndex] > 3u);
    values[gl_LocalInvocationIndex] = subgroupBallotExclusiveBitCount(ballot)
        + subgroupInclusiveAdd(values[gl_LocalInvocationIndex]);
}
"""
    words = compile_glsl(source, "comp")
    assert validate_words(words, families=FAMILY) == []


@pytest.mark.parametrize("corpus_shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_corpus_shaders_are_clean(corpus_shader: CorpusShader) -> None:
    words = corpus_shader.compile()
    target_env = corpus_shader.target_env
    found = validate_words(
        words, families=FAMILY, target_env=target_env, features=["shaderSubgroupExtendedTypes"]
    )
    assert found == []
