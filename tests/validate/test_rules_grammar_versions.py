"""Opcodes and enumerants against the module's SPIR-V version and declared extensions, from
the grammar's ``version`` and ``extensions`` (VUID-VkShaderModuleCreateInfo-pCode-08736)."""

from __future__ import annotations

import pytest

from gpuav.validate import rules_grammar_versions as rules
from tests.validate.asm import assemble, newer_spirv_val, validate_words
from tests.validate.asm import rules as rules_of

FAMILIES = [rules.check]

VERTEX = """OpCapability Shader
{capabilities}
{extensions}
OpMemoryModel Logical GLSL450
OpEntryPoint Vertex %main "main" {interface}
{decorations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%int = OpTypeInt 32 1
%ptr_in_int = OpTypePointer Input %int
%ptr_out_int = OpTypePointer Output %int
{types}
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""

DRAW_PARAMETERS = {
    "capabilities": "OpCapability DrawParameters",
    "interface": "%base",
    "decorations": "OpDecorate %base BuiltIn BaseVertex",
    "types": "%base = OpVariable %ptr_in_int Input",
}
SHADER_LAYER = {
    "capabilities": "OpCapability ShaderLayer",
    "interface": "%layer",
    "decorations": "OpDecorate %layer BuiltIn Layer",
    "types": "%layer = OpVariable %ptr_out_int Output",
}
STORAGE_BUFFER = {
    "decorations": "OpDecorate %S Block\nOpMemberDecorate %S 0 Offset 0\n"
    "OpDecorate %buffer DescriptorSet 0\nOpDecorate %buffer Binding 0",
    "types": "%S = OpTypeStruct %uint\n%ptr_sb = OpTypePointer StorageBuffer %S\n"
    "%buffer = OpVariable %ptr_sb StorageBuffer",
}


def _assemble(text: str, spirv: str) -> list[int]:
    """spirv-as refuses names its target version lacks: assemble for 1.5, then set the
    header's version to ``spirv`` ("spv1.4")."""
    words = assemble(text, "spv1.5")
    major, minor = spirv.removeprefix("spv").split(".")
    words[1] = (int(major) << 16) | (int(minor) << 8)
    return words


def _module(parts: dict[str, str], extensions: str = "") -> str:
    fields = {"capabilities": "", "interface": "", "decorations": "", "types": ""}
    return VERTEX.format(**{**fields, **parts, "extensions": extensions})


CASES = [
    # (what, parts, spirv-as version, spirv-val target, extension that allows it or None)
    ("DrawParameters", DRAW_PARAMETERS, "spv1.0", "vulkan1.0", "SPV_KHR_shader_draw_parameters"),
    ("ShaderLayer", SHADER_LAYER, "spv1.4", "vulkan1.2", None),
    (
        "StorageBuffer",
        STORAGE_BUFFER,
        "spv1.0",
        "vulkan1.0",
        "SPV_KHR_storage_buffer_storage_class",
    ),
]


@pytest.mark.parametrize(("what", "parts", "spirv", "target_env", "extension"), CASES)
def test_enumerant_newer_than_the_module_without_its_extension(
    what: str, parts: dict[str, str], spirv: str, target_env: str, extension: str | None
) -> None:
    words = _assemble(_module(parts), spirv)
    found = validate_words(words, families=FAMILIES, target_env=target_env)
    assert rules_of(found) == {rules.RULE}
    assert any(what in diagnostic.message for diagnostic in found), found
    accepted, message = newer_spirv_val(words, target_env)
    assert not accepted, message  # the reference agrees


@pytest.mark.parametrize(("what", "parts", "spirv", "target_env", "extension"), CASES)
def test_enumerant_allowed_by_its_extension_or_a_new_enough_version(
    what: str, parts: dict[str, str], spirv: str, target_env: str, extension: str | None
) -> None:
    if extension is not None:
        words = _assemble(_module(parts, f'OpExtension "{extension}"'), spirv)
        assert validate_words(words, families=FAMILIES, target_env=target_env) == []
        accepted, message = newer_spirv_val(words, target_env)
        assert accepted, message
    words = assemble(_module(parts), "spv1.5")
    assert validate_words(words, families=FAMILIES, target_env="vulkan1.2") == []
    accepted, message = newer_spirv_val(words, "vulkan1.2")
    assert accepted, message


def test_opcode_newer_than_the_module_is_reported() -> None:
    """OpTerminateInvocation: SPIR-V 1.6 or SPV_KHR_terminate_invocation."""
    text = (
        "OpCapability Shader\nOpMemoryModel Logical GLSL450\n"
        'OpEntryPoint Fragment %main "main"\nOpExecutionMode %main OriginUpperLeft\n'
        "%void = OpTypeVoid\n%fn = OpTypeFunction %void\n"
        "%main = OpFunction %void None %fn\n%entry = OpLabel\nOpTerminateInvocation\n"
        "OpFunctionEnd\n"
    )
    found = validate_words(_assemble(text, "spv1.3"), families=FAMILIES)
    assert rules_of(found) == {rules.RULE}
    assert "OpTerminateInvocation" in found[0].message
    allowed = text.replace(
        "OpMemoryModel", 'OpExtension "SPV_KHR_terminate_invocation"\nOpMemoryModel'
    )
    assert validate_words(_assemble(allowed, "spv1.3"), families=FAMILIES) == []


def test_an_extension_of_the_capability_an_opcode_needs_allows_it_earlier() -> None:
    """OpDemoteToHelperInvocation is SPIR-V 1.6, or earlier through its capability's
    SPV_EXT_demote_to_helper_invocation (the grammar lists the extension on the capability)."""
    text = (
        "OpCapability Shader\nOpCapability DemoteToHelperInvocation\n{extension}"
        "OpMemoryModel Logical GLSL450\n"
        'OpEntryPoint Fragment %main "main"\nOpExecutionMode %main OriginUpperLeft\n'
        "%void = OpTypeVoid\n%fn = OpTypeFunction %void\n"
        "%main = OpFunction %void None %fn\n%entry = OpLabel\nOpDemoteToHelperInvocation\n"
        "OpReturn\nOpFunctionEnd\n"
    )
    declared = _assemble(
        text.format(extension='OpExtension "SPV_EXT_demote_to_helper_invocation"\n'), "spv1.4"
    )
    assert validate_words(declared, families=FAMILIES, target_env="vulkan1.2") == []
    assert newer_spirv_val(declared, "vulkan1.2")[0]
    missing = _assemble(text.format(extension=""), "spv1.4")
    found = validate_words(missing, families=FAMILIES, target_env="vulkan1.2")
    assert {d.message.split()[0] for d in found} == {"OpDemoteToHelperInvocation", "Capability"}
