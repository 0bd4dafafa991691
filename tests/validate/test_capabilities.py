"""Capabilities, SPIR-V extensions and SPIR-V version against the target environment and the
features and extensions enabled (rules_capabilities with capability_table.json)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gpuav.spirv.grammar import OPERAND_KINDS, Capability
from gpuav.validate import rules_capabilities
from gpuav.validate.rules_capabilities import (
    CAPABILITY_NOT_ENABLED_RULE,
    EXTENSION_NOT_ENABLED_RULE,
    SHADER_CAPABILITY_RULE,
    SPIRV_VERSION_RULE,
    TABLE_PATH,
    UNKNOWN_CAPABILITY_RULE,
    UNKNOWN_EXTENSION_RULE,
    load_table,
)
from tests.shaders.glsl import corpus_shaders
from tests.validate.asm import assemble, rules, spirv_val, validate_asm, validate_words
from tests.validate.asm_templates import compute_module
from tests.validate.features import package_names, table_names

FAMILY = [rules_capabilities.check]
TABLE = json.loads(TABLE_PATH.read_text())
ALL_FEATURES, ALL_EXTENSIONS = table_names()

# Every capability of seed 004's table (Vulkan 1.1.97), by its name there.
SEED_CAPABILITIES = [
    "Matrix",
    "Shader",
    "InputAttachment",
    "Sampled1D",
    "Image1D",
    "SampledBuffer",
    "ImageBuffer",
    "ImageQuery",
    "DerivativeControl",
    "Geometry",
    "Tessellation",
    "Float64",
    "Int64",
    "Int64Atomics",
    "Int16",
    "TessellationPointSize",
    "GeometryPointSize",
    "ImageGatherExtended",
    "StorageImageMultisample",
    "UniformBufferArrayDynamicIndexing",
    "SampledImageArrayDynamicIndexing",
    "StorageBufferArrayDynamicIndexing",
    "StorageImageArrayDynamicIndexing",
    "ClipDistance",
    "CullDistance",
    "ImageCubeArray",
    "SampleRateShading",
    "SparseResidency",
    "MinLod",
    "SampledCubeArray",
    "ImageMSArray",
    "StorageImageExtendedFormats",
    "InterpolationFunction",
    "StorageImageReadWithoutFormat",
    "StorageImageWriteWithoutFormat",
    "MultiViewport",
    "DrawParameters",
    "MultiView",
    "DeviceGroup",
    "VariablePointersStorageBuffer",
    "VariablePointers",
    "StencilExportEXT",
    "SubgroupBallotKHR",
    "SubgroupVoteKHR",
    "ImageReadWriteLodAMD",
    "ImageGatherBiasLodAMD",
    "FragmentMaskAMD",
    "SampleMaskOverrideCoverageNV",
    "GeometryShaderPassthroughNV",
    "ShaderViewportIndexLayerEXT",
    "ShaderViewportIndexLayerNV",
    "ShaderViewportMaskNV",
    "PerViewAttributesNV",
    "StorageBuffer16BitAccess",
    "UniformAndStorageBuffer16BitAccess",
    "StoragePushConstant16",
    "StorageInputOutput16",
    "GroupNonUniform",
    "GroupNonUniformVote",
    "GroupNonUniformArithmetic",
    "GroupNonUniformBallot",
    "GroupNonUniformShuffle",
    "GroupNonUniformShuffleRelative",
    "GroupNonUniformClustered",
    "GroupNonUniformQuad",
    "GroupNonUniformPartitionedNV",
    "SampleMaskPostDepthCoverage",
    "ShaderNonUniformEXT",
    "RuntimeDescriptorArrayEXT",
    "InputAttachmentArrayDynamicIndexingEXT",
    "UniformTexelBufferArrayDynamicIndexingEXT",
    "StorageTexelBufferArrayDynamicIndexingEXT",
    "UniformBufferArrayNonUniformIndexingEXT",
    "SampledImageArrayNonUniformIndexingEXT",
    "StorageBufferArrayNonUniformIndexingEXT",
    "StorageImageArrayNonUniformIndexingEXT",
    "InputAttachmentArrayNonUniformIndexingEXT",
    "UniformTexelBufferArrayNonUniformIndexingEXT",
    "StorageTexelBufferArrayNonUniformIndexingEXT",
    "Float16",
    "Int8",
    "StorageBuffer8BitAccess",
    "UniformAndStorageBuffer8BitAccess",
    "StoragePushConstant8",
    "VulkanMemoryModelKHR",
    "VulkanMemoryModelDeviceScopeKHR",
    "DenormPreserve",
    "DenormFlushToZero",
    "SignedZeroInfNanPreserve",
    "RoundingModeRTE",
    "RoundingModeRTZ",
    "ComputeDerivativeGroupQuadsNV",
    "ComputeDerivativeGroupLinearNV",
    "FragmentBarycentricNV",
    "ImageFootprintNV",
    "ShadingRateNV",
    "MeshShadingNV",
    "RayTracingNV",
    "TransformFeedback",
    "GeometryStreams",
    "FragmentDensityEXT",
    "PhysicalStorageBufferAddressesEXT",
]

# Feature and extension names newer than the `vulkan` package's headers (1.3.275).
NEWER_THAN_VULKAN_PACKAGE = {
    "VK_EXT_shader_replicated_composites",
    "VK_KHR_compute_shader_derivatives",
    "VK_KHR_shader_expect_assume",
    "VK_KHR_shader_float_controls2",
    "VK_KHR_shader_maximal_reconvergence",
    "VK_KHR_shader_quad_control",
    "VK_KHR_shader_relaxed_extended_instruction",
    "VK_KHR_shader_subgroup_rotate",
    "VK_NV_raw_access_chains",
    "shaderExpectAssume",
    "shaderFloatControls2",
    "shaderQuadControl",
    "shaderRawAccessChains",
    "shaderReplicatedComposites",
    "shaderSubgroupRotate",
}


def _check(text: str, target_env: str = "vulkan1.1", **kwargs: Any) -> set[str]:
    return rules(validate_asm(text, families=FAMILY, target_env=target_env, **kwargs))


# --- the table as data ------------------------------------------------------------------------


def test_every_seed_capability_is_in_the_table() -> None:
    table = load_table()
    missing = [
        name for name in SEED_CAPABILITIES if getattr(Capability, name) not in table.capabilities
    ]
    assert missing == []


def test_table_names_are_vulkan_feature_and_extension_names() -> None:
    features, extensions = package_names()
    unknown = (ALL_FEATURES - features) | (ALL_EXTENSIONS - extensions)
    assert unknown == NEWER_THAN_VULKAN_PACKAGE
    assert all(name.startswith("SPV_") for name in TABLE["extensions"])


def test_every_alternative_names_exactly_one_kind() -> None:
    for section in ("capabilities", "extensions"):
        for name, alternatives in TABLE[section].items():
            for alternative in alternatives:
                assert len(alternative) == 1, name
                assert set(alternative) <= {"feature", "extension", "version"}, name
                if "version" in alternative:
                    assert alternative["version"] in TABLE["spirv_versions"], name


# --- capabilities -----------------------------------------------------------------------------


def test_capability_whose_feature_is_not_enabled() -> None:
    text = compute_module("OpCapability Float64")
    assert CAPABILITY_NOT_ENABLED_RULE in _check(text)
    assert _check(text, features={"shaderFloat64"}) == set()


def test_diagnostic_points_at_the_capability_and_names_the_feature() -> None:
    words = assemble(compute_module("OpCapability Int64"))
    (diagnostic,) = validate_words(words, families=FAMILY)
    assert diagnostic.rule == CAPABILITY_NOT_ENABLED_RULE
    assert diagnostic.instruction_index == 1  # OpCapability Shader is instruction 0
    assert "Int64" in diagnostic.message and "shaderInt64" in diagnostic.message


def test_capability_with_no_requirement_is_always_allowed() -> None:
    assert _check(compute_module("OpCapability ImageQuery\nOpCapability Sampled1D")) == set()


def test_capability_allowed_by_an_extension_instead_of_a_feature() -> None:
    text = compute_module(
        "OpCapability DrawParameters", 'OpExtension "SPV_KHR_shader_draw_parameters"'
    )
    assert CAPABILITY_NOT_ENABLED_RULE in _check(text)
    assert _check(text, extensions={"VK_KHR_shader_draw_parameters"}) == set()
    assert _check(text, features={"shaderDrawParameters"}) == set()


def test_capability_allowed_by_a_later_vulkan_version() -> None:
    text = compute_module("OpCapability StorageImageReadWithoutFormat")
    assert CAPABILITY_NOT_ENABLED_RULE in _check(text, "vulkan1.2")
    # Vulkan 1.3 reports formatless reads per format (VK_KHR_format_feature_flags2, core).
    assert _check(text, "vulkan1.3") == set()


def test_subgroup_capability_needs_the_subgroup_operation() -> None:
    text = compute_module("OpCapability GroupNonUniform\nOpCapability GroupNonUniformBallot")
    assert _check(text, features={"VK_SUBGROUP_FEATURE_BASIC_BIT"}) == {CAPABILITY_NOT_ENABLED_RULE}
    both = {"VK_SUBGROUP_FEATURE_BASIC_BIT", "VK_SUBGROUP_FEATURE_BALLOT_BIT"}
    assert _check(text, features=both) == set()


@pytest.mark.parametrize("capability", ["Kernel", "Addresses", "Linkage", "ImageRect"])
def test_capability_vulkan_does_not_allow(capability: str) -> None:
    assert UNKNOWN_CAPABILITY_RULE in _check(compute_module(f"OpCapability {capability}"))


def test_module_without_the_shader_capability() -> None:
    text = compute_module().replace("OpCapability Shader", "OpCapability Matrix")
    assert SHADER_CAPABILITY_RULE in _check(text)
    # Geometry implicitly declares Shader.
    geometry = compute_module().replace("OpCapability Shader", "OpCapability Geometry")
    assert SHADER_CAPABILITY_RULE not in _check(geometry, features={"geometryShader"})


# --- SPIR-V extensions ------------------------------------------------------------------------


def test_extension_needs_its_device_extension_or_core_version() -> None:
    text = compute_module(extensions='OpExtension "SPV_KHR_8bit_storage"')
    assert _check(text) == {EXTENSION_NOT_ENABLED_RULE}
    assert _check(text, extensions={"VK_KHR_8bit_storage"}) == set()
    assert _check(text, "vulkan1.2") == set()  # promoted to core in Vulkan 1.2


def test_extension_vulkan_does_not_list() -> None:
    words = assemble(compute_module(extensions='OpExtension "SPV_INTEL_made_up"'))
    (diagnostic,) = validate_words(words, families=FAMILY)
    assert diagnostic.rule == UNKNOWN_EXTENSION_RULE
    assert "SPV_INTEL_made_up" in diagnostic.message
    # spirv-val accepts extension names it does not know; the environment appendix allows
    # only the listed ones (VUID-VkShaderModuleCreateInfo-pCode-08741), so we report it.
    assert spirv_val(words)[0]


# --- SPIR-V version ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("assembled_for", "target_env", "broken"),
    [
        ("vulkan1.1", "vulkan1.0", True),  # SPIR-V 1.3 for Vulkan 1.0
        ("vulkan1.0", "vulkan1.0", False),
        ("vulkan1.2", "vulkan1.1", True),  # SPIR-V 1.5 for Vulkan 1.1
        ("vulkan1.2", "vulkan1.2", False),
        ("vulkan1.3", "vulkan1.2", True),  # SPIR-V 1.6 for Vulkan 1.2
        ("vulkan1.3", "vulkan1.4", False),
    ],
)
def test_spirv_version_against_target_env(
    assembled_for: str, target_env: str, broken: bool
) -> None:
    words = assemble(compute_module(), assembled_for)
    found = rules(validate_words(words, families=FAMILY, target_env=target_env))
    assert (SPIRV_VERSION_RULE in found) == broken
    if target_env != "vulkan1.4":  # spirv-val 2023 does not know vulkan1.4
        assert spirv_val(words, target_env)[0] == (not broken)


# --- against spirv-val ------------------------------------------------------------------------


def _core_capabilities() -> list[str]:
    """Capabilities of SPIR-V <= 1.3 that need no SPIR-V extension: spirv-val checks those
    against the Vulkan environment by itself."""
    enumerants = OPERAND_KINDS["Capability"][1]
    assert isinstance(enumerants, dict)
    return [
        info[0]
        for info in enumerants.values()
        if not info[3] and info[4] not in ("None",) and info[4] <= "1.3"
    ]


def test_capabilities_vulkan_forbids_agree_with_spirv_val() -> None:
    # With every feature enabled, the capabilities we call "not allowed in Vulkan" are exactly
    # those spirv-val rejects. (For capabilities behind a SPIR-V extension spirv-val accepts
    # any one whose extension is declared; there the appendix's table decides, as here.)
    disagreements = []
    for name in _core_capabilities():
        words = assemble(compute_module(f"OpCapability {name}"))
        accepted = spirv_val(words)[0]
        found = rules(validate_words(words, families=FAMILY, features=ALL_FEATURES))
        if accepted == (UNKNOWN_CAPABILITY_RULE in found):
            disagreements.append(name)
    assert disagreements == []


# --- real shaders -----------------------------------------------------------------------------


def test_corpus_is_clean_with_every_feature_and_flags_what_lavapipe_lacks() -> None:
    flagged = {}
    for shader in corpus_shaders():
        words = shader.compile()
        everything = validate_words(
            words,
            families=FAMILY,
            target_env=shader.target_env,
            features=ALL_FEATURES,
            extensions=ALL_EXTENSIONS,
        )
        assert everything == [], shader.name
        nothing = rules(validate_words(words, families=FAMILY, target_env=shader.target_env))
        if nothing:
            flagged[shader.name] = nothing
    # Without features, shaders using optional capabilities are reported, the others are not.
    assert "switch_call_chain.comp" not in flagged
    assert "shared_memory_reduction.comp" not in flagged
    assert flagged["int64_and_double_math.comp"] == {CAPABILITY_NOT_ENABLED_RULE}
    assert EXTENSION_NOT_ENABLED_RULE in flagged["texture_footprint_nv.frag"]
