"""Block layout (spec "Offset and Stride Assignment", VUID-StandaloneSpirv-None-10684): one
module per rule, each judged by spirv-val 2025.1 with the matching layout options too."""

from __future__ import annotations

import pytest

from gpuav.validate import rules_block_layout as rules
from tests.validate.asm import assemble, newer_spirv_val, validate_words
from tests.validate.asm import rules as rules_of

FAMILIES = [rules.check]

MODULE = """OpCapability Shader
{capabilities}
OpExtension "SPV_KHR_storage_buffer_storage_class"
{extensions}
OpMemoryModel {addressing} GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %S {block}
OpDecorate %var DescriptorSet 0
OpDecorate %var Binding 0
{decorations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%uint = OpTypeInt 32 0
%v2 = OpTypeVector %float 2
%v3 = OpTypeVector %float 3
%v4 = OpTypeVector %float 4
%uint_2 = OpConstant %uint 2
%uint_4 = OpConstant %uint 4
{types}
%ptr = OpTypePointer {storage} %S
%var = OpVariable %ptr {storage}
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""

SPIRV_VAL_OPTIONS = {
    "scalarBlockLayout": "--scalar-block-layout",
    "uniformBufferStandardLayout": "--uniform-buffer-standard-layout",
    "workgroupMemoryExplicitLayoutScalarBlockLayout": "--workgroup-scalar-block-layout",
}

UBO = {"storage": "Uniform", "block": "Block"}
SSBO = {"storage": "StorageBuffer", "block": "Block"}
PUSH = {"storage": "PushConstant", "block": "Block"}


def _offsets(*offsets: int) -> str:
    return "\n".join(f"OpMemberDecorate %S {i} Offset {o}" for i, o in enumerate(offsets))


# Naga's `globals` output: a uniform mat3x2 (columns of vec2) with MatrixStride 8, and arrays
# of mat4x2 whose member carries no MatrixStride at all.
NAGA_MAT3X2 = {
    **UBO,
    "decorations": "OpMemberDecorate %S 0 Offset 0\nOpMemberDecorate %S 0 ColMajor\n"
    "OpMemberDecorate %S 0 MatrixStride 8",
    "types": "%m3x2 = OpTypeMatrix %v2 3\n%S = OpTypeStruct %m3x2",
}
NAGA_NESTED_MATRICES = {
    **UBO,
    "decorations": "OpDecorate %inner ArrayStride 32\nOpDecorate %outer ArrayStride 64\n"
    "OpMemberDecorate %S 0 Offset 0",
    "types": "%m4x2 = OpTypeMatrix %v2 4\n%inner = OpTypeArray %m4x2 %uint_2\n"
    "%outer = OpTypeArray %inner %uint_2\n%S = OpTypeStruct %outer",
}

# (id, parts, target env, features, broken?)
CASES = [
    (
        "std140-vec4-at-4",
        {**UBO, "decorations": _offsets(0, 4), "types": "%S = OpTypeStruct %float %v4"},
        "vulkan1.0",
        (),
        True,
    ),
    (
        "std140-vec4-at-16",
        {**UBO, "decorations": _offsets(0, 16), "types": "%S = OpTypeStruct %float %v4"},
        "vulkan1.0",
        (),
        False,
    ),
    (
        "relaxed-vec3-at-4",
        {**UBO, "decorations": _offsets(0, 4), "types": "%S = OpTypeStruct %float %v3"},
        "vulkan1.1",
        (),
        False,
    ),
    (
        "relaxed-vec3-at-4-vulkan1.0",
        {**UBO, "decorations": _offsets(0, 4), "types": "%S = OpTypeStruct %float %v3"},
        "vulkan1.0",
        (),
        True,
    ),
    (
        "relaxed-vec4-straddles",
        {**SSBO, "decorations": _offsets(0, 4), "types": "%S = OpTypeStruct %float %v4"},
        "vulkan1.1",
        (),
        True,
    ),
    (
        "scalar-vec4-at-4",
        {**SSBO, "decorations": _offsets(0, 4), "types": "%S = OpTypeStruct %float %v4"},
        "vulkan1.2",
        ("scalarBlockLayout",),
        False,
    ),
    (
        "push-vec2-at-4-vulkan1.0",
        {**PUSH, "decorations": _offsets(0, 4), "types": "%S = OpTypeStruct %float %v2"},
        "vulkan1.0",
        (),
        True,
    ),
    (
        "std140-float-array-stride-4",
        {
            **UBO,
            "decorations": "OpDecorate %a ArrayStride 4\n" + _offsets(0),
            "types": "%a = OpTypeArray %float %uint_4\n%S = OpTypeStruct %a",
        },
        "vulkan1.1",
        (),
        True,
    ),
    (
        "standard-layout-float-array-stride-4",
        {
            **UBO,
            "decorations": "OpDecorate %a ArrayStride 4\n" + _offsets(0),
            "types": "%a = OpTypeArray %float %uint_4\n%S = OpTypeStruct %a",
        },
        "vulkan1.2",
        ("uniformBufferStandardLayout",),
        False,
    ),
    (
        "std430-float-array-stride-4",
        {
            **SSBO,
            "decorations": "OpDecorate %a ArrayStride 4\n" + _offsets(0),
            "types": "%a = OpTypeArray %float %uint_4\n%S = OpTypeStruct %a",
        },
        "vulkan1.1",
        (),
        False,
    ),
    (
        "missing-array-stride",
        {
            **SSBO,
            "decorations": _offsets(0),
            "types": "%a = OpTypeRuntimeArray %float\n%S = OpTypeStruct %a",
        },
        "vulkan1.1",
        (),
        True,
    ),
    (
        "array-stride-smaller-than-element",
        {
            **SSBO,
            "decorations": "OpDecorate %a ArrayStride 8\n" + _offsets(0),
            "types": "%a = OpTypeRuntimeArray %v4\n%S = OpTypeStruct %a",
        },
        "vulkan1.1",
        (),
        True,
    ),
    (
        "missing-offset",
        {**SSBO, "decorations": _offsets(0), "types": "%S = OpTypeStruct %float %float"},
        "vulkan1.1",
        (),
        True,
    ),
    (
        "members-overlap",
        {**SSBO, "decorations": _offsets(0, 4, 8), "types": "%S = OpTypeStruct %float %v2 %float"},
        "vulkan1.1",
        (),
        True,
    ),
    (
        "offsets-out-of-order",
        {**SSBO, "decorations": _offsets(8, 0), "types": "%S = OpTypeStruct %v2 %v2"},
        "vulkan1.1",
        (),
        False,
    ),
    (
        "std140-member-in-struct-padding",
        {
            **UBO,
            "decorations": "OpMemberDecorate %T 0 Offset 0\n" + _offsets(0, 4),
            "types": "%T = OpTypeStruct %float\n%S = OpTypeStruct %T %float",
        },
        "vulkan1.1",
        (),
        True,
    ),
    (
        "std430-member-after-struct",
        {
            **SSBO,
            "decorations": "OpMemberDecorate %T 0 Offset 0\n" + _offsets(0, 4),
            "types": "%T = OpTypeStruct %float\n%S = OpTypeStruct %T %float",
        },
        "vulkan1.1",
        (),
        False,
    ),
    (
        "nested-struct-vector-straddles",
        {
            **SSBO,
            "decorations": "OpMemberDecorate %T 0 Offset 0\nOpMemberDecorate %T 1 Offset 4\n"
            + _offsets(0, 16, 24),
            "types": "%T = OpTypeStruct %float %v2\n%S = OpTypeStruct %v4 %float %T",
        },
        "vulkan1.1",
        (),
        True,
    ),
    ("naga-globals-mat3x2-stride-8", NAGA_MAT3X2, "vulkan1.1", (), True),
    (
        "naga-globals-mat3x2-standard-layout",
        NAGA_MAT3X2,
        "vulkan1.2",
        ("uniformBufferStandardLayout",),
        False,
    ),
    (
        "naga-globals-matrices-without-stride",
        NAGA_NESTED_MATRICES,
        "vulkan1.2",
        ("uniformBufferStandardLayout",),
        True,
    ),
    (
        "buffer-block-std430",
        {
            "storage": "Uniform",
            "block": "BufferBlock",
            "decorations": "OpDecorate %a ArrayStride 4\n" + _offsets(0),
            "types": "%a = OpTypeRuntimeArray %float\n%S = OpTypeStruct %a",
        },
        "vulkan1.1",
        (),
        False,
    ),
]


def _module(parts: dict[str, str]) -> str:
    fields = {"capabilities": "", "extensions": "", "addressing": "Logical", "decorations": ""}
    return MODULE.format(**{**fields, **parts})


@pytest.mark.parametrize(
    ("parts", "target_env", "features", "broken"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_layout_rule(
    parts: dict[str, str], target_env: str, features: tuple[str, ...], broken: bool
) -> None:
    words = assemble(_module(parts), target_env)
    found = validate_words(words, families=FAMILIES, target_env=target_env, features=features)
    assert rules_of(found) == ({rules.RULE} if broken else set()), found
    options = [SPIRV_VAL_OPTIONS[feature] for feature in features]
    accepted, message = newer_spirv_val(words, target_env, *options)
    assert accepted == (not broken), message


def test_naga_globals_messages_name_the_stride_and_the_missing_decoration() -> None:
    words = assemble(_module(NAGA_MAT3X2))
    (found,) = validate_words(words, families=FAMILIES)
    assert "MatrixStride 8, not a multiple of its alignment 16 (std140 (relaxed))" in found.message
    words = assemble(_module(NAGA_NESTED_MATRICES), "vulkan1.2")
    messages = [d.message for d in validate_words(words, families=FAMILIES, target_env="vulkan1.2")]
    assert any("matrix with no MatrixStride" in message for message in messages), messages


PHYSICAL = """OpCapability Shader
OpCapability PhysicalStorageBufferAddresses
OpExtension "SPV_KHR_physical_storage_buffer"
OpMemoryModel PhysicalStorageBuffer64 GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %S Block
OpMemberDecorate %S 0 Offset 0
OpMemberDecorate %S 1 Offset {offset}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%v4 = OpTypeVector %float 4
%S = OpTypeStruct %float %v4
%ptr = OpTypePointer PhysicalStorageBuffer %S
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""

WORKGROUP = """OpCapability Shader
OpCapability WorkgroupMemoryExplicitLayoutKHR
OpExtension "SPV_KHR_workgroup_memory_explicit_layout"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main" %shared
OpExecutionMode %main LocalSize 1 1 1
OpDecorate %S Block
OpMemberDecorate %S 0 Offset 0
OpMemberDecorate %S 1 Offset {offset}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%v4 = OpTypeVector %float 4
%S = OpTypeStruct %float %v4
%ptr = OpTypePointer Workgroup %S
%shared = OpVariable %ptr Workgroup
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize(
    ("template", "feature", "option", "spirv_val_checks"),
    [
        # spirv-val 2025.1 does not check the layout a PhysicalStorageBuffer pointer points to.
        (PHYSICAL, "scalarBlockLayout", "--scalar-block-layout", False),
        (
            WORKGROUP,
            "workgroupMemoryExplicitLayoutScalarBlockLayout",
            "--workgroup-scalar-block-layout",
            True,
        ),
    ],
    ids=["physical-storage-buffer", "workgroup-explicit-layout"],
)
def test_device_address_and_workgroup_blocks(
    template: str, feature: str, option: str, spirv_val_checks: bool
) -> None:
    """A vec4 at 4 straddles (relaxed std430) unless the scalar feature for the class is on."""
    target_env = "vulkan1.2"
    straddling = assemble(template.format(offset=4), target_env)
    found = validate_words(straddling, families=FAMILIES, target_env=target_env)
    assert rules_of(found) == {rules.RULE}
    assert newer_spirv_val(straddling, target_env)[0] != spirv_val_checks
    scalar = validate_words(
        straddling, families=FAMILIES, target_env=target_env, features=[feature]
    )
    assert scalar == []
    assert newer_spirv_val(straddling, target_env, option)[0]
    aligned = assemble(template.format(offset=16), target_env)
    assert validate_words(aligned, families=FAMILIES, target_env=target_env) == []
    accepted, message = newer_spirv_val(aligned, target_env)
    assert accepted, message
