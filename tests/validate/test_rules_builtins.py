"""Built-in variable rules, driven by the table: for every BuiltIn a valid declaration, a wrong
type, a wrong storage class and a wrong execution model, each compared with spirv-val.

spirv-val names the same VUID wherever it reports one for the built-in; where it reports
another rule first (an integer fragment input without Flat, VUID-StandaloneSpirv-Flat-04744)
or nothing (LocalInvocationIndex, which it does not check), only our answer is asserted.
"""

from __future__ import annotations

import re

import pytest

from gpuav.spirv.grammar import ExecutionModel, StorageClass
from gpuav.validate import rules_builtins
from gpuav.validate.rules_builtins import _table
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

FAMILY = [rules_builtins.check]
MODELS = (
    *("Vertex", "TessellationControl", "TessellationEvaluation"),
    *("Geometry", "Fragment", "GLCompute"),
)
TYPES = {
    "vec4 float32": "%v4float",
    "float32": "%float",
    "vec2 float32": "%v2float",
    "vec3 float32": "%v3float",
    "int32": "%uint",
    "vec3 int32": "%v3uint",
    "vec4 int32": "%v4uint",
    "bool": "%bool",
    "array float32": "%float_3",
    "array4 float32": "%float_4",
    "array2 float32": "%float_2",
    "array int32": "%uint_array",
}
ARRAYS = """
%uint_2 = OpConstant %uint 2
%uint_4 = OpConstant %uint 4
%float_3 = OpTypeArray %float %uint_3
%float_4 = OpTypeArray %float %uint_4
%float_2 = OpTypeArray %float %uint_2
%uint_array = OpTypeArray %uint %uint_1
"""
CAPABILITIES = "\n".join(
    f"OpCapability {name}"
    for name in [
        *("Tessellation", "Geometry", "SampleRateShading", "DrawParameters", "GroupNonUniform"),
        *("GroupNonUniformBallot", "MultiView", "DeviceGroup", "ClipDistance", "CullDistance"),
        *("ShaderViewportIndexLayerEXT", "MultiViewport"),
    ]
)
EXTENSION = 'OpExtension "SPV_EXT_shader_viewport_index_layer"'


def _module(name: str, model: str, storage: str, type_: str) -> str:
    # Writing FragDepth needs DepthReplacing (VUID-FragDepth-FragDepth-04216, not ours).
    depth = "\nOpExecutionMode %main DepthReplacing" if name == "FragDepth" else ""
    return shader(
        model,
        capabilities=CAPABILITIES,
        extensions=EXTENSION,
        interface="%builtin",
        decorations=f"{depth}\nOpDecorate %builtin BuiltIn {name}",
        types=ARRAYS + f"%builtin_ptr = OpTypePointer {storage} {type_}\n"
        f"%builtin = OpVariable %builtin_ptr {storage}",
        body=f"%loaded = OpLoad {type_} %builtin",
    )


def _wrong_type(type_: str) -> str:
    if type_ == "float32":
        return "%int"
    return "%float" if "float" not in type_ else "%uint"


def _compare(name: str, text: str, expected: str) -> None:
    ours = rules(validate_asm(text, families=FAMILY))
    assert expected in ours, ours
    _accepted, output = spirv_val(assemble(text), "vulkan1.1")
    theirs = re.findall(rf"\[(VUID-{name}-{name}-\d+)\]", output)
    if theirs:
        assert theirs[0] == expected, output


_RULES = sorted(_table()[0].values(), key=lambda rule: rule.name)


def _first_model(rule: rules_builtins.BuiltInRule) -> tuple[str, str]:
    for model in MODELS:
        allowed = rule.allowed(getattr(ExecutionModel, model))
        if allowed:
            storage = "Input" if StorageClass.Input in allowed else "Output"
            return model, storage
    raise AssertionError(rule.name)


@pytest.mark.parametrize("rule", _RULES, ids=lambda rule: rule.name)
def test_valid_declaration(rule: rules_builtins.BuiltInRule) -> None:
    model, storage = _first_model(rule)
    text = _module(rule.name, model, storage, TYPES[rule.type])
    assert rules(validate_asm(text, families=FAMILY)) == set()
    accepted, output = spirv_val(assemble(text), "vulkan1.1")
    assert accepted or "Flat-04744" in output, output


@pytest.mark.parametrize("rule", _RULES, ids=lambda rule: rule.name)
def test_wrong_type(rule: rules_builtins.BuiltInRule) -> None:
    model, storage = _first_model(rule)
    text = _module(rule.name, model, storage, _wrong_type(rule.type))
    _compare(rule.name, text, rule.vuid_type)


@pytest.mark.parametrize("rule", _RULES, ids=lambda rule: rule.name)
def test_wrong_storage_class(rule: rules_builtins.BuiltInRule) -> None:
    model, storage = _first_model(rule)
    model_value = getattr(ExecutionModel, model)
    other = "Output" if storage == "Input" else "Input"
    allowed = rule.allowed(model_value) or frozenset()
    if getattr(StorageClass, other) in allowed:
        other = "Private"
    text = _module(rule.name, model, other, TYPES[rule.type])
    _compare(rule.name, text, rule.storage_vuid(model_value))


@pytest.mark.parametrize(
    "rule", [rule for rule in _RULES if rule.vuid_model is not None], ids=lambda rule: rule.name
)
def test_wrong_execution_model(rule: rules_builtins.BuiltInRule) -> None:
    model = next(m for m in MODELS if rule.allowed(getattr(ExecutionModel, m)) is None)
    assert rule.vuid_model is not None
    storage = _first_model(rule)[1]  # allowed somewhere, so only the model is wrong
    _compare(rule.name, _module(rule.name, model, storage, TYPES[rule.type]), rule.vuid_model)


def test_per_vertex_block_member_in_geometry_input() -> None:
    source = """#version 450
layout(triangles) in;
layout(triangle_strip, max_vertices = 3) out;
void main() {
    for (int i = 0; i < 3; ++i) {
        gl_Position = gl_in[i].gl_Position;
        gl_PointSize = gl_in[i].gl_PointSize;
        EmitVertex();
    }
}
"""
    assert validate_words(compile_glsl(source, "geom"), families=FAMILY) == []


def test_wrong_member_type_in_per_vertex_block() -> None:
    text = shader(
        "Vertex",
        interface="%outputs",
        decorations="OpDecorate %PerVertex Block\nOpMemberDecorate %PerVertex 0 BuiltIn Position",
        types="%PerVertex = OpTypeStruct %v3float\n"
        "%PerVertex_ptr = OpTypePointer Output %PerVertex\n"
        "%outputs = OpVariable %PerVertex_ptr Output",
    )
    _compare("Position", text, "VUID-Position-Position-04321")


def test_non_vulkan_builtin_is_reported_like_spirv_val() -> None:
    text = _module("VertexId", "Vertex", "Input", "%uint")
    assert rules_builtins.NOT_IN_VULKAN in rules(validate_asm(text, families=FAMILY))
    accepted, _ = spirv_val(assemble(text), "vulkan1.1")
    assert not accepted


@pytest.mark.parametrize("corpus_shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_corpus_shaders_are_clean(corpus_shader: CorpusShader) -> None:
    words = corpus_shader.compile()
    target_env = corpus_shader.target_env
    assert validate_words(words, families=FAMILY, target_env=target_env) == []


def _frag_depth(modes: str) -> str:
    return shader(
        "Fragment",
        interface="%depth",
        decorations=modes + "\nOpDecorate %depth BuiltIn FragDepth",
        types="%float_optr = OpTypePointer Output %float\n%depth = OpVariable %float_optr Output",
        body="OpStore %depth %float_1",
    )


def test_writing_frag_depth_needs_depth_replacing_like_spirv_val() -> None:
    text = _frag_depth("")
    assert rules_builtins.DEPTH_REPLACING in rules(validate_asm(text, families=FAMILY))
    assert_spirv_val_reports(text, rules_builtins.DEPTH_REPLACING)
    declared = _frag_depth("OpExecutionMode %main DepthReplacing")
    assert rules(validate_asm(declared, families=FAMILY)) == set()
