"""Entry points, recursion, addressing model and execution modes: one passing and one failing
module per rule, the verdict compared with spirv-val where it checks the same rule."""

from __future__ import annotations

import pytest

from gpuav.validate import rules_execution as rules
from tests.validate.asm import assemble, spirv_val, validate_asm, validate_words
from tests.validate.asm import rules as broken

FAMILY = [rules.check]

COMPUTE = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
{modes}
{annotations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%v3uint = OpTypeVector %uint 3
%uint_1 = OpConstant %uint 1
%uint_2 = OpConstant %uint 2
%uint_3 = OpConstant %uint 3
{globals}
%main = OpFunction %void None %fn
%entry = OpLabel
{body}
OpReturn
OpFunctionEnd
{functions}
"""

FRAGMENT = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint Fragment %main "main"
{modes}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""


def compute(
    modes: str = "OpExecutionMode %main LocalSize 1 1 1",
    annotations: str = "",
    globals_: str = "",
    body: str = "",
    functions: str = "",
) -> str:
    return COMPUTE.format(
        modes=modes, annotations=annotations, globals=globals_, body=body, functions=functions
    )


def check_both(text: str, rule: str | None, target_env: str = "vulkan1.1") -> None:
    """Our verdict on ``text`` names ``rule`` (or nothing), and spirv-val agrees."""
    words = assemble(text, target_env)
    found = broken(validate_words(words, families=FAMILY, target_env=target_env))
    accepted, message = spirv_val(words, target_env)
    if rule is None:
        assert found == set(), found
        assert accepted, message
    else:
        assert rule in found, found
        assert not accepted, "spirv-val accepted a module breaking " + rule


def test_valid_compute_module_is_clean() -> None:
    check_both(compute(), None)


def test_entry_point_with_parameter() -> None:
    text = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%uint = OpTypeInt 32 0
%fn = OpTypeFunction %void %uint
%main = OpFunction %void None %fn
%p = OpFunctionParameter %uint
%entry = OpLabel
OpReturn
OpFunctionEnd
"""
    check_both(text, rules.ENTRY_POINT_SIGNATURE)


def test_entry_point_returning_a_value() -> None:
    text = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%uint = OpTypeInt 32 0
%uint_0 = OpConstant %uint 0
%fn = OpTypeFunction %uint
%main = OpFunction %uint None %fn
%entry = OpLabel
OpReturnValue %uint_0
OpFunctionEnd
"""
    check_both(text, rules.ENTRY_POINT_SIGNATURE)


CALLS = """
%f = OpFunction %void None %fn
%f_entry = OpLabel
%r1 = OpFunctionCall %void %g
OpReturn
OpFunctionEnd
%g = OpFunction %void None %fn
%g_entry = OpLabel
{g_body}
OpReturn
OpFunctionEnd
"""


def test_call_chain_without_cycle_is_clean() -> None:
    check_both(
        compute(body="%r0 = OpFunctionCall %void %f", functions=CALLS.format(g_body="")), None
    )


def test_recursion_through_two_functions() -> None:
    text = compute(
        body="%r0 = OpFunctionCall %void %f",
        functions=CALLS.format(g_body="%r2 = OpFunctionCall %void %f"),
    )
    words = assemble(text)
    diagnostics = validate_words(words, families=FAMILY)
    assert broken(diagnostics) == {rules.RECURSION}
    assert len(diagnostics) == 1  # the cycle is reported once
    # spirv-val checks recursion only once its structured-CFG checks ran; both reject.
    assert not spirv_val(words)[0]


def test_recursion_in_unreachable_function_is_not_reported() -> None:
    """The rule is about the call graph of an entry point; a cycle no entry point reaches is
    not one (spirv-val rejects any cycle: the spec text decides)."""
    text = compute(functions=CALLS.format(g_body="%r2 = OpFunctionCall %void %f"))
    assert validate_asm(text, families=FAMILY) == []


def test_physical_addressing_model() -> None:
    text = compute().replace(
        "OpCapability Shader\nOpMemoryModel Logical GLSL450",
        "OpCapability Shader\nOpCapability Addresses\nOpMemoryModel Physical64 GLSL450",
    )
    check_both(text, rules.ADDRESSING_MODEL)


def test_physical_storage_buffer_addressing_model_is_allowed() -> None:
    text = compute().replace(
        "OpCapability Shader\nOpMemoryModel Logical GLSL450",
        "OpCapability Shader\nOpCapability PhysicalStorageBufferAddresses\n"
        'OpExtension "SPV_KHR_physical_storage_buffer"\n'
        "OpMemoryModel PhysicalStorageBuffer64 GLSL450",
    )
    check_both(text, None)


def test_fragment_with_origin_upper_left_is_clean() -> None:
    check_both(FRAGMENT.format(modes="OpExecutionMode %main OriginUpperLeft"), None)


@pytest.mark.parametrize(
    ("modes", "rule"),
    [
        ("", rules.ORIGIN_LOWER_LEFT),
        ("OpExecutionMode %main OriginLowerLeft", rules.ORIGIN_LOWER_LEFT),
        (
            "OpExecutionMode %main OriginUpperLeft\nOpExecutionMode %main PixelCenterInteger",
            rules.PIXEL_CENTER_INTEGER,
        ),
    ],
    ids=["no-origin", "lower-left", "pixel-center-integer"],
)
def test_fragment_origin_rules(modes: str, rule: str) -> None:
    check_both(FRAGMENT.format(modes=modes), rule)


def test_compute_without_local_size() -> None:
    check_both(compute(modes=""), rules.COMPUTE_LOCAL_SIZE)


def test_compute_with_local_size_id_needs_maintenance4() -> None:
    text = compute(modes="OpExecutionModeId %main LocalSizeId %uint_1 %uint_1 %uint_1")
    words = assemble(text, "vulkan1.3")
    clean = validate_words(
        words, families=FAMILY, target_env="vulkan1.3", features=["maintenance4"]
    )
    assert clean == []
    found = broken(validate_words(words, families=FAMILY, target_env="vulkan1.3"))
    assert found == {rules.LOCAL_SIZE_ID_FEATURE}
    assert spirv_val(words, "vulkan1.3")[0]  # a device rule: spirv-val accepts


def test_workgroup_size_builtin_replaces_local_size() -> None:
    text = compute(
        modes="",
        annotations="OpDecorate %size BuiltIn WorkgroupSize",
        globals_="%size = OpConstantComposite %v3uint %uint_2 %uint_1 %uint_1",
    )
    check_both(text, None)


def test_specialization_constant_workgroup_size_replaces_local_size() -> None:
    text = compute(
        modes="",
        annotations="OpDecorate %size BuiltIn WorkgroupSize\nOpDecorate %x SpecId 0",
        globals_="%x = OpSpecConstant %uint 4\n"
        "%size = OpSpecConstantComposite %v3uint %x %uint_1 %uint_1",
    )
    check_both(text, None)


def test_workgroup_size_builtin_of_wrong_type() -> None:
    text = compute(
        annotations="OpDecorate %size BuiltIn WorkgroupSize",
        globals_="%v2uint = OpTypeVector %uint 2\n"
        "%size = OpConstantComposite %v2uint %uint_2 %uint_1",
    )
    check_both(text, rules.WORKGROUP_SIZE_TYPE)


DERIVATIVES = """
OpCapability Shader
OpCapability ComputeDerivativeGroup{kind}NV
OpExtension "SPV_NV_compute_shader_derivatives"
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize {size}
OpExecutionMode %main DerivativeGroup{kind}NV
%void = OpTypeVoid
%fn = OpTypeFunction %void
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize(
    ("kind", "size", "rule"),
    [
        ("Quads", "2 4 1", None),
        ("Quads", "3 2 1", rules.DERIVATIVE_QUADS),
        ("Linear", "2 2 1", None),
        ("Linear", "3 1 1", rules.DERIVATIVE_LINEAR),
    ],
)
def test_derivative_groups(kind: str, size: str, rule: str | None) -> None:
    """spirv-val (this version) does not check the workgroup size of derivative groups: it
    accepts every one of these modules, the spec text decides."""
    text = DERIVATIVES.format(kind=kind, size=size)
    found = broken(validate_asm(text, families=FAMILY, target_env="vulkan1.3"))
    assert found == ({rule} if rule else set())
    words = assemble(text, "vulkan1.3")
    assert spirv_val(words, "vulkan1.3")[0]


def test_broken_module_never_raises() -> None:
    """An entry point naming a missing function, a bare memory model: no exception."""
    text = compute().replace('OpEntryPoint GLCompute %main "main"', 'OpEntryPoint GLCompute %x "x"')
    words = assemble(text.replace("OpExecutionMode %main", "OpExecutionMode %x"))
    assert rules.COMPUTE_LOCAL_SIZE not in broken(validate_words(words, families=FAMILY))


def test_local_size_against_device_limits() -> None:
    text = compute(modes="OpExecutionMode %main LocalSize 64 4 1")
    roomy = {"maxComputeWorkGroupInvocations": 256, "maxComputeWorkGroupSize[0]": 64}
    assert validate_asm(text, families=FAMILY, limits=roomy) == []
    tight = {"maxComputeWorkGroupInvocations": 128, "maxComputeWorkGroupSize[0]": 32}
    found = broken(validate_asm(text, families=FAMILY, limits=tight))
    assert found == {rules.WORKGROUP_INVOCATIONS_LIMIT, rules.WORKGROUP_SIZE_LIMITS[0]}
    # The WorkgroupSize built-in overrides LocalSize.
    overridden = compute(
        modes="OpExecutionMode %main LocalSize 64 4 1",
        annotations="OpDecorate %size BuiltIn WorkgroupSize",
        globals_="%size = OpConstantComposite %v3uint %uint_2 %uint_1 %uint_1",
    )
    assert validate_asm(overridden, families=FAMILY, limits=tight) == []


def test_workgroup_size_builtin_used_in_a_vertex_shader() -> None:
    text = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint Vertex %main "main"
OpDecorate %size BuiltIn WorkgroupSize
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%v3uint = OpTypeVector %uint 3
%uint_1 = OpConstant %uint 1
%size = OpConstantComposite %v3uint %uint_1 %uint_1 %uint_1
%main = OpFunction %void None %fn
%entry = OpLabel
%x = OpCompositeExtract %uint %size 0
OpReturn
OpFunctionEnd
"""
    check_both(text, rules.WORKGROUP_SIZE_STAGE)
