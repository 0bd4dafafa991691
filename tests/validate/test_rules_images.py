"""Image and sampler rules: a positive and a negative module per rule, spirv-val where it agrees.

Where spirv-val checks the same rule the negative module is also given to it and its answer
must name the same VUID; rules it does not check say so next to the test.
"""

from __future__ import annotations

from typing import Any

import pytest

from gpuav.spirv import read
from gpuav.validate import rules_image_operands, rules_images
from gpuav.validate.context import ValidationContext
from gpuav.validate.rules_images import image_formats, vulkan_format
from tests.shaders.glsl import CorpusShader, corpus_shaders
from tests.validate.asm import (
    assemble,
    assert_spirv_val_reports,
    rules,
    spirv_val,
    validate_asm,
    validate_words,
)
from tests.validate.asm_templates import shader

FAMILY = [rules_images.check]
EVERY_FEATURE = ("shaderStorageImageReadWithoutFormat", "shaderStorageImageWriteWithoutFormat")


def _rules(text: str, **options: Any) -> set[str]:
    return rules(validate_asm(text, families=FAMILY, **options))


def _image_type(declaration: str, capabilities: str = "", extensions: str = "") -> str:
    return shader(capabilities=capabilities, extensions=extensions, types=declaration)


# VUID-StandaloneSpirv-OpTypeImage-04656: the Sampled Type
def test_sampled_type_32_bit_scalar_is_valid() -> None:
    assert _rules(_image_type("%image = OpTypeImage %uint 2D 0 0 0 1 Unknown")) == set()


def test_sampled_type_vector_is_reported() -> None:
    text = _image_type("%image = OpTypeImage %v4float 2D 0 0 0 1 Unknown")
    assert rules_images.SAMPLED_TYPE in _rules(text)


def test_sampled_type_void_is_reported_like_spirv_val() -> None:
    text = _image_type("%image = OpTypeImage %void 2D 0 0 0 1 Unknown")
    assert rules_images.SAMPLED_TYPE in _rules(text)
    assert_spirv_val_reports(text, rules_images.SAMPLED_TYPE)


def test_sampled_type_64_bit_needs_int64_image_capability() -> None:
    long = "%ulong = OpTypeInt 64 0\n%image = OpTypeImage %ulong 2D 0 0 0 2 R64ui"
    without = _image_type(long.replace("2 R64ui", "1 Unknown"), "OpCapability Int64")
    assert rules_images.SAMPLED_TYPE in _rules(without)
    # spirv-val reports it as a missing capability, without the VUID.
    accepted, output = spirv_val(assemble(without), "vulkan1.1")
    assert not accepted and "Int64ImageEXT" in output, output
    with_capability = _image_type(
        long,
        "OpCapability Int64\nOpCapability Int64ImageEXT",
        'OpExtension "SPV_EXT_shader_image_int64"',
    )
    assert _rules(with_capability) == set()


# VUID-StandaloneSpirv-OpTypeImage-04657: Sampled 1 or 2
def test_sampled_operand_zero_is_reported_like_spirv_val() -> None:
    text = _image_type("%image = OpTypeImage %float 2D 0 0 0 0 Unknown")
    assert rules_images.SAMPLED_OPERAND in _rules(text)
    assert_spirv_val_reports(text, rules_images.SAMPLED_OPERAND)
    assert _rules(_image_type("%image = OpTypeImage %float 2D 0 0 0 2 Rgba8")) == set()


# VUID-StandaloneSpirv-OpTypeSampledImage-06671
def test_sampled_image_of_storage_image_is_reported_like_spirv_val() -> None:
    good = "%image = OpTypeImage %float 2D 0 0 0 1 Unknown\n%combined = OpTypeSampledImage %image"
    assert _rules(_image_type(good)) == set()
    bad = "%image = OpTypeImage %float 2D 0 0 0 2 Rgba8\n%combined = OpTypeSampledImage %image"
    assert rules_images.SAMPLED_IMAGE_SAMPLED in _rules(_image_type(bad))
    # spirv-val (2023.1) rejects it too but tags it 04657; the spec's VUID for this text is
    # 06671 ("OpTypeSampledImage must have a OpTypeImage with a Sampled operand of 1").
    accepted, output = spirv_val(assemble(_image_type(bad)), "vulkan1.1")
    assert not accepted and "Sampled" in output, output


# VUID-StandaloneSpirv-OpTypeImage-09638
def test_rect_dim_is_reported() -> None:
    text = _image_type(
        "%image = OpTypeImage %float Rect 0 0 0 1 Unknown", "OpCapability SampledRect"
    )
    assert rules_images.RECT in _rules(text)


# VUID-StandaloneSpirv-Image-04965: the format table, as data
@pytest.mark.parametrize(
    ("sampled_type", "image_format", "valid"),
    [
        ("%float", "R32f", True),
        ("%int", "R32f", False),
        ("%uint", "Rgba8ui", True),
        ("%int", "Rgba8i", True),
        ("%float", "Rgba8ui", False),
        ("%float", "Rgba8", True),
        ("%uint", "Rgba16Snorm", False),
    ],
)
def test_format_and_sampled_type_must_match(
    sampled_type: str, image_format: str, valid: bool
) -> None:
    text = _image_type(
        f"%image = OpTypeImage {sampled_type} 2D 0 0 0 2 {image_format}",
        "OpCapability StorageImageExtendedFormats",
    )
    found = rules_images.FORMAT_TYPE in _rules(text)
    assert found != valid
    # spirv-val 2023.1 predates its 04965 check: it accepts every row, so only the valid rows
    # are compared (the spec's Image Format and Type Matching decides the others).
    if valid:
        accepted, output = spirv_val(assemble(text), "vulkan1.1")
        assert accepted, output


def test_format_table_is_the_appendix_table() -> None:
    formats = image_formats()
    assert len(formats) == 41  # 39 rows of seed 004 plus R64i/R64ui
    r32f = {"vulkan_format": "VK_FORMAT_R32_SFLOAT", "numeric": "float", "width": 32}
    assert formats["R32f"] == r32f
    assert formats["Rgba8ui"]["numeric"] == "uint"
    assert vulkan_format(1) == "VK_FORMAT_R32G32B32A32_SFLOAT"  # Rgba32f
    assert vulkan_format(0) is None  # Unknown


# VUID-StandaloneSpirv-OpImageQuerySizeLod-04659 and the SPIR-V query kinds
_STORAGE_IMAGE = """
%image = OpTypeImage %float 2D 0 0 0 {sampled} {image_format}
%image_ptr = OpTypePointer UniformConstant %image
%var = OpVariable %image_ptr UniformConstant
"""
_BINDING = "OpDecorate %var DescriptorSet 0\nOpDecorate %var Binding 0"


def _query(sampled: int, query: str, image_format: str = "Unknown", ms: bool = False) -> str:
    types = _STORAGE_IMAGE.format(sampled=sampled, image_format=image_format)
    if ms:
        types = types.replace("2D 0 0 0", "2D 0 0 1")
    return shader(
        capabilities="OpCapability ImageQuery",
        decorations=_BINDING + "\nOpDecorate %var NonWritable",
        types=types,
        body=f"%loaded = OpLoad %image %var\n{query}",
    )


def test_query_levels_of_sampled_image_is_valid() -> None:
    assert _rules(_query(1, "%levels = OpImageQueryLevels %int %loaded")) == set()


def test_query_levels_of_storage_image_is_reported_like_spirv_val() -> None:
    text = _query(2, "%levels = OpImageQueryLevels %int %loaded", "Rgba8")
    assert rules_images.QUERY_SAMPLED in _rules(text)
    assert_spirv_val_reports(text, rules_images.QUERY_SAMPLED)


def test_query_size_lod_of_storage_image_is_reported() -> None:
    text = _query(2, "%size = OpImageQuerySizeLod %v2int %loaded %int_0", "Rgba8")
    assert rules_images.QUERY_SAMPLED in _rules(text)


def test_query_samples_needs_multisampled_image() -> None:
    good = _query(1, "%count = OpImageQuerySamples %int %loaded", ms=True)
    assert _rules(good) == set()
    bad = _query(1, "%count = OpImageQuerySamples %int %loaded")
    assert rules_images.QUERY_KIND in _rules(bad)
    accepted, _ = spirv_val(assemble(bad), "vulkan1.1")
    assert not accepted


def test_query_size_of_sampled_single_sample_image_is_reported() -> None:
    bad = _query(1, "%size = OpImageQuerySize %v2int %loaded")
    assert rules_images.QUERY_KIND in _rules(bad)
    assert _rules(_query(2, "%size = OpImageQuerySize %v2int %loaded", "Rgba8")) == set()


# Subpass data: VUID-StandaloneSpirv-OpTypeImage-06214, VUID-StandaloneSpirv-SubpassData-04660
_SUBPASS = """
%subpass = OpTypeImage %float SubpassData 0 {arrayed} 0 2 Unknown
%subpass_ptr = OpTypePointer UniformConstant %subpass
%var = OpVariable %subpass_ptr UniformConstant
%coord = OpConstantComposite %v2int {u} %int_0
"""
_SUBPASS_DECORATIONS = _BINDING + "\nOpDecorate %var InputAttachmentIndex 0"


def _subpass(u: str = "%int_0", arrayed: int = 0, model: str = "Fragment") -> str:
    return shader(
        model,
        capabilities="OpCapability InputAttachment",
        decorations=_SUBPASS_DECORATIONS,
        types=_SUBPASS.format(u=u, arrayed=arrayed),
        body="%loaded = OpLoad %subpass %var\n%texel = OpImageRead %v4float %loaded %coord",
    )


def test_subpass_read_at_zero_is_valid() -> None:
    assert _rules(_subpass()) == set()


def test_subpass_read_at_nonzero_coordinate_is_reported() -> None:
    text = _subpass(u="%int_1")
    assert rules_images.SUBPASS_COORDINATE in _rules(text)
    # spirv-val 2023.1 does not check 04660: it accepts the module; the spec text decides.
    accepted, _ = spirv_val(assemble(text), "vulkan1.1")
    assert accepted


def test_arrayed_subpass_image_is_reported() -> None:
    assert rules_images.SUBPASS_TYPE in _rules(_subpass(arrayed=1))


def test_subpass_outside_fragment_is_reported_like_spirv_val() -> None:
    text = _subpass(model="GLCompute")
    assert rules_images.SUBPASS_STAGE in _rules(text)
    accepted, output = spirv_val(assemble(text), "vulkan1.1")
    assert not accepted and "Fragment" in output, output


# VUID-StandaloneSpirv-OpTypeImage-06924: opaque objects are never stored
def test_storing_an_image_is_reported() -> None:
    text = shader(
        decorations=_BINDING,
        types=_STORAGE_IMAGE.format(sampled=1, image_format="Unknown")
        + "%image_fptr = OpTypePointer Function %image",
        variables="%copy = OpVariable %image_fptr Function",
        body="%loaded = OpLoad %image %var\nOpStore %copy %loaded",
    )
    assert rules_images.OPAQUE_STORE in _rules(text)
    # spirv-val 2023.1 accepts a store of an image into a Function variable; 06924 forbids it.
    accepted, _ = spirv_val(assemble(text), "vulkan1.1")
    assert accepted


def test_loading_an_image_is_valid() -> None:
    text = shader(
        decorations=_BINDING,
        types=_STORAGE_IMAGE.format(sampled=1, image_format="Unknown"),
        body="%loaded = OpLoad %image %var",
    )
    assert _rules(text) == set()


# VUID-RuntimeSpirv-apiVersion-07954 / -07955: storage images without a format
def _formatless(decorations: str = "") -> str:
    return shader(
        decorations=_BINDING + decorations,
        types=_STORAGE_IMAGE.format(sampled=2, image_format="Unknown"),
    )


def test_formatless_storage_image_needs_features_or_decorations() -> None:
    found = _rules(_formatless())
    assert {rules_images.READ_WITHOUT_FORMAT, rules_images.WRITE_WITHOUT_FORMAT} <= found
    assert _rules(_formatless(), features=EVERY_FEATURE) == set()
    decorated = _formatless("\nOpDecorate %var NonReadable\nOpDecorate %var NonWritable")
    assert _rules(decorated) == set()
    only_write = _rules(_formatless(), features=["shaderStorageImageReadWithoutFormat"])
    assert only_write == {rules_images.WRITE_WITHOUT_FORMAT}


def test_formatless_storage_image_is_checked_per_format_from_vulkan_1_3() -> None:
    assert _rules(_formatless(), target_env="vulkan1.3") == set()
    assert _rules(_formatless(), extensions=["VK_KHR_format_feature_flags2"]) == set()


# Robustness and the real shaders
def test_undefined_sampled_type_never_raises() -> None:
    text = _image_type("%image = OpTypeImage %undefined 2D 0 0 0 1 Unknown")
    context = ValidationContext(read(assemble(text)))
    found = list(rules_images.check(context))
    assert [diagnostic.rule for diagnostic in found] == [rules_images.SAMPLED_TYPE]
    assert found[0].instruction_index is not None


@pytest.mark.parametrize("corpus_shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_corpus_shaders_are_clean(corpus_shader: CorpusShader) -> None:
    words = corpus_shader.compile()
    target_env = corpus_shader.target_env
    found = validate_words(words, families=FAMILY, target_env=target_env, features=EVERY_FEATURE)
    assert found == []


# Image instructions (rules_image_operands): 04780, 04865, 04777, 04664
OPERAND_FAMILY = [rules_image_operands.check]
_SAMPLED_IMAGE = """
%image = OpTypeImage %float {dim} {depth} 0 0 1 Unknown
%combined = OpTypeSampledImage %image
%combined_ptr = OpTypePointer UniformConstant %combined
%var = OpVariable %combined_ptr UniformConstant
%coord2 = OpConstantComposite %v2float %float_0 %float_0
%coord3 = OpConstantComposite %v3float %float_0 %float_0 %float_0
%offset = OpConstantComposite %v2int %int_0 %int_0
"""


def _operand_rules(text: str) -> set[str]:
    return rules(validate_asm(text, families=OPERAND_FAMILY))


def _sampling(body: str, dim: str = "2D", depth: int = 0, capabilities: str = "") -> str:
    return shader(
        "Fragment",
        capabilities=capabilities,
        decorations=_BINDING,
        types=_SAMPLED_IMAGE.format(dim=dim, depth=depth),
        body="%loaded = OpLoad %combined %var\n" + body,
    )


def test_storage_image_read_of_two_components_is_reported_like_spirv_val() -> None:
    types = _STORAGE_IMAGE.format(sampled=2, image_format="Rgba8") + (
        "%coord = OpConstantComposite %v2int %int_0 %int_0"
    )
    good = shader(
        decorations=_BINDING,
        types=types,
        body="%loaded = OpLoad %image %var\n%texel = OpImageRead %v4float %loaded %coord",
    )
    assert _operand_rules(good) == set()
    bad = good.replace("OpImageRead %v4float", "OpImageRead %v2float")
    assert rules_image_operands.READ_RESULT in _operand_rules(bad)
    accepted, _ = spirv_val(assemble(bad), "vulkan1.1")
    assert not accepted


def test_offset_on_storage_image_read_is_reported() -> None:
    types = _STORAGE_IMAGE.format(sampled=2, image_format="Rgba8") + (
        "%coord = OpConstantComposite %v2int %int_0 %int_0"
    )
    text = shader(
        capabilities="OpCapability ImageGatherExtended",
        decorations=_BINDING,
        types=types,
        body="%loaded = OpLoad %image %var\n"
        "%texel = OpImageRead %v4float %loaded %coord ConstOffset %coord",
    )
    assert rules_image_operands.OFFSET_SAMPLED in _operand_rules(text)
    sampled = _sampling(
        "%texel = OpImageSampleImplicitLod %v4float %loaded %coord2 ConstOffset %offset"
    )
    assert _operand_rules(sampled) == set()


def test_dref_sampling_of_3d_image_is_reported_like_spirv_val() -> None:
    good = _sampling(
        "%depth = OpImageSampleDrefImplicitLod %float %loaded %coord2 %float_0", depth=1
    )
    assert _operand_rules(good) == set()
    bad = _sampling(
        "%depth = OpImageSampleDrefImplicitLod %float %loaded %coord3 %float_0", "3D", depth=1
    )
    assert rules_image_operands.DREF_3D in _operand_rules(bad)
    accepted, output = spirv_val(assemble(bad), "vulkan1.1")
    assert not accepted and rules_image_operands.DREF_3D in output, output


def test_gather_component_must_be_constant_like_spirv_val() -> None:
    good = _sampling("%texels = OpImageGather %v4float %loaded %coord2 %uint_1")
    assert _operand_rules(good) == set()
    bad = _sampling(
        "%component = OpIAdd %uint %uint_1 %uint_0\n"
        "%texels = OpImageGather %v4float %loaded %coord2 %component"
    )
    assert rules_image_operands.GATHER_COMPONENT in _operand_rules(bad)
    accepted, output = spirv_val(assemble(bad), "vulkan1.1")
    assert not accepted and rules_image_operands.GATHER_COMPONENT in output, output


@pytest.mark.parametrize("corpus_shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_corpus_image_instructions_are_clean(corpus_shader: CorpusShader) -> None:
    words = corpus_shader.compile()
    target_env = corpus_shader.target_env
    assert validate_words(words, families=OPERAND_FAMILY, target_env=target_env) == []
