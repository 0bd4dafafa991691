"""Decoration and resource-variable rules (rules_decorations, rules_resources): a positive and
a negative module per rule.

Where spirv-val checks the same rule the negative module also goes to spirv-val, and the
comment says whether it names the same VUID or, where it does not check it, that the spec text
decides.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuav.validate import rules_decorations as rd
from gpuav.validate import rules_resources as rr
from tests.shaders.glsl import (
    CorpusShader,
    InvalidShader,
    compile_glsl,
    corpus_shaders,
    invalid_shaders,
)
from tests.validate.asm import (
    assemble,
    assert_spirv_val_reports,
    rules,
    spirv_val,
    validate_asm,
    validate_words,
)
from tests.validate.asm_templates import shader

FAMILY = [rd.check, rr.check]


def _rules(text: str, **options: Any) -> set[str]:
    return rules(validate_asm(text, families=FAMILY, **options))


def _spirv_val(text: str, target_env: str = "vulkan1.1") -> tuple[bool, str]:
    return spirv_val(assemble(text, target_env), target_env)


_BUFFER = """
%Data = OpTypeStruct %uint
%Data_ptr = OpTypePointer {storage} %Data
%data = OpVariable %Data_ptr {storage}
"""
_SET_BINDING = "OpDecorate %data DescriptorSet 0\nOpDecorate %data Binding 0\n"


def _buffer(storage: str = "StorageBuffer", decorations: str = "", **options: str) -> str:
    offset = "OpMemberDecorate %Data 0 Offset 0\n"
    return shader(
        decorations=offset + decorations, types=_BUFFER.format(storage=storage), **options
    )


# VUID-StandaloneSpirv-GLSLShared-04669
def test_glsl_shared_is_reported_like_spirv_val() -> None:
    text = _buffer(decorations=_SET_BINDING + "OpDecorate %Data Block\nOpDecorate %Data GLSLShared")
    assert rd.GLSL_LAYOUT in _rules(text)
    assert_spirv_val_reports(text, rd.GLSL_LAYOUT)


def test_block_buffer_with_set_and_binding_is_valid() -> None:
    assert _rules(_buffer(decorations=_SET_BINDING + "OpDecorate %Data Block")) == set()


# VUID-StandaloneSpirv-UniformConstant-06677 and -DescriptorSet-06491
def test_buffer_without_binding_is_reported_like_spirv_val() -> None:
    unused = _buffer(decorations="OpDecorate %Data Block")
    assert rr.DESCRIPTOR_DECORATIONS in _rules(unused)
    # spirv-val 2023.1 checks 06677 only on variables an entry point uses; the spec text
    # covers every such variable, so the unused one is ours alone.
    assert _spirv_val(unused)[0]
    used = _buffer(
        decorations="OpDecorate %Data Block",
        body="%member = OpAccessChain %uint_sptr %data %int_0\n%loaded = OpLoad %uint %member",
    ).replace(
        "%data = OpVariable", "%uint_sptr = OpTypePointer StorageBuffer %uint\n%data = OpVariable"
    )
    assert rr.DESCRIPTOR_DECORATIONS in _rules(used)
    assert_spirv_val_reports(used, rr.DESCRIPTOR_DECORATIONS)


def test_binding_on_private_variable_is_reported() -> None:
    text = shader(
        decorations="OpDecorate %private DescriptorSet 0\nOpDecorate %private Binding 1",
        types="%uint_pptr = OpTypePointer Private %uint\n%private = OpVariable %uint_pptr Private",
    )
    assert rr.DESCRIPTOR_STORAGE_CLASS in _rules(text)


# Block/BufferBlock: 06675, 06676, 06807, 06808
def test_storage_buffer_without_block_is_reported_like_spirv_val() -> None:
    text = _buffer(decorations=_SET_BINDING)
    assert rr.BLOCK_REQUIRED in _rules(text)
    assert_spirv_val_reports(text, rr.BLOCK_REQUIRED)


def test_uniform_buffer_block_and_buffer_block_are_valid() -> None:
    for decoration in ("Block", "BufferBlock"):
        text = _buffer("Uniform", _SET_BINDING + f"OpDecorate %Data {decoration}")
        assert _rules(text) == set()


def test_uniform_without_block_is_reported_like_spirv_val() -> None:
    text = _buffer("Uniform", _SET_BINDING)
    assert rr.UNIFORM_BLOCK_REQUIRED in _rules(text)
    assert_spirv_val_reports(text, rr.UNIFORM_BLOCK_REQUIRED)


def test_push_constant_array_is_reported() -> None:
    text = shader(
        decorations="OpDecorate %Data Block",
        types="%Data = OpTypeStruct %uint\n%Datas = OpTypeArray %Data %uint_3\n"
        "%Datas_ptr = OpTypePointer PushConstant %Datas\n"
        "%push = OpVariable %Datas_ptr PushConstant",
    )
    assert rr.PUSH_CONSTANT_TYPE in _rules(text)


def test_storage_buffer_of_scalar_is_reported() -> None:
    text = shader(
        decorations=_SET_BINDING,
        types="%uint_sptr = OpTypePointer StorageBuffer %uint\n"
        "%data = OpVariable %uint_sptr StorageBuffer",
    )
    assert rr.BUFFER_TYPE in _rules(text)


# VUID-StandaloneSpirv-OpTypeRuntimeArray-04680
_RUNTIME_BLOCK = """
%values = OpTypeRuntimeArray %uint
%Data = OpTypeStruct {members}
%Data_ptr = OpTypePointer StorageBuffer %Data
%data = OpVariable %Data_ptr StorageBuffer
"""
_RUNTIME_DECORATIONS = _SET_BINDING + "OpDecorate %Data Block\nOpDecorate %values ArrayStride 4\n"


def test_runtime_array_as_last_block_member_is_valid() -> None:
    text = shader(
        decorations=_RUNTIME_DECORATIONS
        + "OpMemberDecorate %Data 0 Offset 0\nOpMemberDecorate %Data 1 Offset 4",
        types=_RUNTIME_BLOCK.format(members="%uint %values"),
    )
    assert _rules(text) == set()


def test_runtime_array_not_last_is_reported_like_spirv_val() -> None:
    text = shader(
        decorations=_RUNTIME_DECORATIONS
        + "OpMemberDecorate %Data 0 Offset 0\nOpMemberDecorate %Data 1 Offset 4",
        types=_RUNTIME_BLOCK.format(members="%values %uint"),
    )
    assert rr.RUNTIME_ARRAY in _rules(text)
    accepted, _ = _spirv_val(text)
    assert not accepted


def test_runtime_array_in_private_variable_is_reported_like_spirv_val() -> None:
    text = shader(
        types="%values = OpTypeRuntimeArray %uint\n%values_ptr = OpTypePointer Private %values\n"
        "%private = OpVariable %values_ptr Private",
    )
    assert rr.RUNTIME_ARRAY in _rules(text)
    assert_spirv_val_reports(text, rr.RUNTIME_ARRAY)


def test_runtime_descriptor_array_is_valid() -> None:
    text = shader(
        capabilities="OpCapability RuntimeDescriptorArray",
        extensions='OpExtension "SPV_EXT_descriptor_indexing"',
        decorations="OpDecorate %samplers DescriptorSet 0\nOpDecorate %samplers Binding 0",
        types="%sampler = OpTypeSampler\n%samplers_t = OpTypeRuntimeArray %sampler\n"
        "%samplers_ptr = OpTypePointer UniformConstant %samplers_t\n"
        "%samplers = OpVariable %samplers_ptr UniformConstant",
    )
    assert _rules(text) == set()


# Interpolation decorations: 04670, 06201, 06202; Flat required: 04744; Patch
_VARYING = """
%{name}_ptr = OpTypePointer {storage} {type}
%{name} = OpVariable %{name}_ptr {storage}
"""


def _varying(
    model: str, storage: str, decoration: str, value_type: str = "%float", name: str = "value"
) -> str:
    return shader(
        model,
        interface=f"%{name}",
        decorations=f"OpDecorate %{name} Location 0\n{decoration}",
        types=_VARYING.format(name=name, storage=storage, type=value_type),
    )


def test_flat_fragment_input_is_valid() -> None:
    assert _rules(_varying("Fragment", "Input", "OpDecorate %value Flat", "%uint")) == set()


def test_flat_on_fragment_output_is_reported_like_spirv_val() -> None:
    text = _varying("Fragment", "Output", "OpDecorate %value Flat")
    assert rd.INTERPOLATION_FRAGMENT_OUTPUT in _rules(text)
    assert_spirv_val_reports(text, rd.INTERPOLATION_FRAGMENT_OUTPUT)


def test_centroid_on_vertex_input_is_reported_like_spirv_val() -> None:
    text = _varying("Vertex", "Input", "OpDecorate %value Centroid")
    assert rd.INTERPOLATION_VERTEX_INPUT in _rules(text)
    assert_spirv_val_reports(text, rd.INTERPOLATION_VERTEX_INPUT)


def test_flat_on_private_variable_is_reported_like_spirv_val() -> None:
    text = shader(
        decorations="OpDecorate %private Flat",
        types="%float_pptr = OpTypePointer Private %float\n"
        "%private = OpVariable %float_pptr Private",
    )
    assert rd.INTERPOLATION_STORAGE in _rules(text)
    assert_spirv_val_reports(text, rd.INTERPOLATION_STORAGE)


def test_integer_fragment_input_without_flat_is_reported_like_spirv_val() -> None:
    text = _varying("Fragment", "Input", "", "%uint")
    assert rd.FLAT_REQUIRED in _rules(text)
    assert_spirv_val_reports(text, rd.FLAT_REQUIRED)
    assert _rules(_varying("Fragment", "Input", "", "%float")) == set()


def test_integer_member_of_fragment_input_block_needs_flat() -> None:
    types = "%Inputs = OpTypeStruct %float %int\n" + _VARYING.format(
        name="inputs", storage="Input", type="%Inputs"
    )
    base = "OpDecorate %Inputs Block\nOpMemberDecorate %Inputs 0 Location 0\n"
    base += "OpMemberDecorate %Inputs 1 Location 1\n"
    bad = shader("Fragment", interface="%inputs", decorations=base, types=types)
    assert rd.FLAT_REQUIRED in _rules(bad)
    good = shader(
        "Fragment",
        interface="%inputs",
        decorations=base + "OpMemberDecorate %Inputs 1 Flat",
        types=types,
    )
    assert _rules(good) == set()


def test_patch_in_fragment_interface_is_reported() -> None:
    # spirv-val 2023.1 does not check this seed-004 rule; the spec text decides.
    text = _varying("Fragment", "Input", "OpDecorate %value Patch")
    assert rd.PATCH_STAGE in _rules(text)


def test_patch_in_tessellation_interface_is_valid() -> None:
    text = shader(
        "TessellationEvaluation",
        capabilities="OpCapability Tessellation",
        interface="%value",
        decorations="OpDecorate %value Location 0\nOpDecorate %value Patch",
        types=_VARYING.format(name="value", storage="Input", type="%float"),
    )
    assert _rules(text) == set()


# VUID-StandaloneSpirv-FPRoundingMode-04675 and where the decoration may go
def _rounding(mode: str, storage: str = "StorageBuffer") -> str:
    return shader(
        capabilities="OpCapability StorageBuffer16BitAccess",
        extensions='OpExtension "SPV_KHR_16bit_storage"',
        decorations=f"OpDecorate %Half Block\nOpMemberDecorate %Half 0 Offset 0\n"
        f"OpDecorate %half_buffer DescriptorSet 0\nOpDecorate %half_buffer Binding 0\n"
        f"OpDecorate %rounded FPRoundingMode {mode}",
        types="%half = OpTypeFloat 16\n%Half = OpTypeStruct %half\n"
        f"%Half_ptr = OpTypePointer {storage} %Half\n"
        f"%half_buffer = OpVariable %Half_ptr {storage}\n"
        f"%half_ptr = OpTypePointer {storage} %half",
        body="%rounded = OpFConvert %half %float_1\n"
        "%member = OpAccessChain %half_ptr %half_buffer %uint_0\nOpStore %member %rounded",
    )


def test_rounding_mode_rte_on_stored_conversion_is_valid() -> None:
    assert _rules(_rounding("RTE")) == set()


def test_rounding_mode_rtp_is_reported_like_spirv_val() -> None:
    text = _rounding("RTP")
    assert rd.ROUNDING_MODE in _rules(text)
    assert_spirv_val_reports(text, rd.ROUNDING_MODE)


def test_rounding_mode_on_a_non_conversion_is_reported() -> None:
    text = _rounding("RTE").replace(
        "%rounded = OpFConvert %half %float_1", "%rounded = OpFNegate %half %half_1"
    )
    text = text.replace(
        "%half = OpTypeFloat 16", "%half = OpTypeFloat 16\n%half_1 = OpConstant %half 1"
    )
    assert rd.ROUNDING_MODE_USE in _rules(text)
    accepted, _ = _spirv_val(text)
    assert not accepted


# The real shaders
def test_glslang_fragment_shader_with_flat_and_blocks_is_clean() -> None:
    source = """#version 450
layout(location = 0) flat in int index;
layout(location = 1) in vec2 uv;
layout(location = 0) out vec4 color;
layout(set = 0, binding = 0) uniform Params { vec4 tint; };
layout(set = 0, binding = 1) buffer Values { float values[]; };
layout(push_constant) uniform Push { float scale; };
void main() { color = tint * values[index] * scale + vec4(uv, 0.0, 1.0); }
"""
    words = compile_glsl(source, "frag")
    assert validate_words(words, families=FAMILY) == []


@pytest.mark.parametrize("corpus_shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_corpus_shaders_are_clean(corpus_shader: CorpusShader) -> None:
    for debug in ("none", "gV"):
        words = corpus_shader.compile(debug)
        target_env = corpus_shader.target_env
        assert validate_words(words, families=FAMILY, target_env=target_env) == []


def test_integer_builtin_fragment_input_needs_flat_like_spirv_val() -> None:
    decorations = "OpDecorate %sample BuiltIn SampleId"
    types = _VARYING.format(name="sample", storage="Input", type="%uint")
    text = shader(
        "Fragment",
        capabilities="OpCapability SampleRateShading",
        interface="%sample",
        decorations=decorations,
        types=types,
    )
    assert rd.FLAT_REQUIRED in _rules(text)
    assert_spirv_val_reports(text, rd.FLAT_REQUIRED)
    flat = text.replace(decorations, decorations + "\nOpDecorate %sample Flat")
    assert _rules(flat) == set()


# VUID-StandaloneSpirv-UniformConstant-04655
def test_uniform_constant_scalar_is_reported_like_spirv_val() -> None:
    text = shader(
        decorations="OpDecorate %constant DescriptorSet 0\nOpDecorate %constant Binding 0",
        types="%uint_cptr = OpTypePointer UniformConstant %uint\n"
        "%constant = OpVariable %uint_cptr UniformConstant",
        body="%loaded = OpLoad %uint %constant",
    )
    assert rr.UNIFORM_CONSTANT_TYPE in _rules(text)
    assert_spirv_val_reports(text, rr.UNIFORM_CONSTANT_TYPE)


# VUID-StandaloneSpirv-Uniform-06925
def _uniform_write(decoration: str) -> str:
    return _buffer(
        "Uniform",
        _SET_BINDING + f"OpDecorate %Data {decoration}",
        body="%member = OpAccessChain %uint_uptr %data %int_0\nOpStore %member %uint_1",
    ).replace("%data = OpVariable", "%uint_uptr = OpTypePointer Uniform %uint\n%data = OpVariable")


def test_writing_a_uniform_buffer_is_reported_like_spirv_val() -> None:
    assert rr.UNIFORM_BLOCK_WRITE in _rules(_uniform_write("Block"))
    assert_spirv_val_reports(_uniform_write("Block"), rr.UNIFORM_BLOCK_WRITE)


def test_writing_a_buffer_block_is_valid() -> None:
    assert _rules(_uniform_write("BufferBlock")) == set()


# VUID-StandaloneSpirv-Invariant-04677, VUID-StandaloneSpirv-InputAttachmentIndex-06678
def test_invariant_on_private_variable_is_reported_like_spirv_val() -> None:
    text = shader(
        decorations="OpDecorate %private Invariant",
        types="%float_pptr = OpTypePointer Private %float\n"
        "%private = OpVariable %float_pptr Private",
    )
    assert rd.INVARIANT_STORAGE in _rules(text)
    assert_spirv_val_reports(text, rd.INVARIANT_STORAGE)
    invariant_output = _varying("Vertex", "Output", "OpDecorate %value Invariant")
    assert _rules(invariant_output) == set()


def test_input_attachment_index_on_storage_buffer_is_reported_like_spirv_val() -> None:
    text = _buffer(
        decorations=_SET_BINDING
        + "OpDecorate %Data Block\nOpDecorate %data InputAttachmentIndex 0",
        capabilities="OpCapability InputAttachment",
    )
    assert rd.INPUT_ATTACHMENT_STORAGE in _rules(text)
    assert_spirv_val_reports(text, rd.INPUT_ATTACHMENT_STORAGE)


_RESOURCE_RULES = {
    rr.UNIFORM_CONSTANT_TYPE,
    rr.BUFFER_TYPE,
    rr.PUSH_CONSTANT_TYPE,
    rr.BLOCK_REQUIRED,
    rr.UNIFORM_BLOCK_REQUIRED,
    rr.DESCRIPTOR_DECORATIONS,
}


@pytest.mark.parametrize(
    "invalid",
    [s for s in invalid_shaders() if s.expected_error in _RESOURCE_RULES],
    ids=lambda shader: shader.name,
)
def test_invalid_glslang_shaders_are_reported_like_spirv_val(invalid: InvalidShader) -> None:
    # tests/shaders/invalid: glslang compiles them, spirv-val rejects them with this VUID.
    found = validate_words(invalid.compile(), families=FAMILY, target_env=invalid.target_env)
    assert invalid.expected_error in {d.rule for d in found}


def test_flat_on_vertex_output_is_valid() -> None:
    # Seed 004 (1.1.97) also forbade these decorations on non-fragment interfaces; today's
    # spec (06201/06202) allows them on vertex outputs, glslang emits them there, and
    # spirv-val accepts them: the current text decides.
    text = _varying("Vertex", "Output", "OpDecorate %value Flat", "%uint")
    assert _rules(text) == set()
    assert _spirv_val(text)[0]
