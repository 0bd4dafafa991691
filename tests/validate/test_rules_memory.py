"""Scopes and memory semantics: one passing and one failing module per rule, compared with
spirv-val (SPIRV-Tools 2023.1) where it checks the same rule.

Where spirv-val disagrees, the spec text decides and the case says so (``val`` is what
spirv-val answers: True accepted, False rejected).
"""

from __future__ import annotations

import pytest

from gpuav.validate import rules_memory as rules
from gpuav.validate.diagnostics import Severity
from tests.validate.asm import assemble, spirv_val, validate_words
from tests.validate.asm import rules as broken

FAMILY = [rules.check]
ENV = "vulkan1.2"

# Semantics: Acquire 0x2, Release 0x4, AcquireRelease 0x8, SequentiallyConsistent 0x10,
# UniformMemory 0x40, WorkgroupMemory 0x100, MakeAvailable 0x2000, MakeVisible 0x4000,
# Volatile 0x8000.
MODULE = """
OpCapability Shader
{capabilities}
OpMemoryModel Logical {memory_model}
OpEntryPoint {model} %main "main" {interface}
{modes}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%ptr = OpTypePointer {storage} %uint
%var = OpVariable %ptr {storage}
%uint_1 = OpConstant %uint 1
%cross_device = OpConstant %uint 0
%device = OpConstant %uint 1
%workgroup = OpConstant %uint 2
%subgroup = OpConstant %uint 3
%invocation = OpConstant %uint 4
%queue_family = OpConstant %uint 5
%sem = OpConstant %uint {semantics}
%unequal = OpConstant %uint {unequal}
%main = OpFunction %void None %fn
%entry = OpLabel
{body}
OpReturn
OpFunctionEnd
"""


def module(
    body: str,
    semantics: int = 0,
    unequal: int = 0,
    model: str = "GLCompute",
    capabilities: str = "",
    memory_model: str = "GLSL450",
) -> str:
    compute = model == "GLCompute"
    modes = {
        "GLCompute": "OpExecutionMode %main LocalSize 1 1 1",
        "Fragment": "OpExecutionMode %main OriginUpperLeft",
        "TessellationControl": "OpExecutionMode %main OutputVertices 3",
    }.get(model, "")
    return MODULE.format(
        capabilities=capabilities,
        memory_model=memory_model,
        model=model,
        interface="%var",
        modes=modes,
        storage="Workgroup" if compute else "Private",
        semantics=semantics,
        unequal=unequal,
        body=body,
    )


VULKAN_MODEL = "OpCapability VulkanMemoryModel"

CASES = [
    # (id, module text, rule or None, spirv-val accepts)
    ("barrier", module("OpControlBarrier %workgroup %workgroup %sem", 0x108), None, True),
    ("atomic", module("%r = OpAtomicIAdd %uint %var %device %sem %uint_1", 0), None, True),
    (
        "execution-scope-device",
        module("OpControlBarrier %device %workgroup %sem", 0x108),
        rules.EXECUTION_SCOPE,
        False,
    ),
    (
        "fragment-workgroup-barrier",
        module("OpControlBarrier %workgroup %invocation %sem", 0, model="Fragment"),
        rules.CONTROL_BARRIER_STAGE,
        False,
    ),
    (
        "fragment-subgroup-barrier",
        module("OpControlBarrier %subgroup %invocation %sem", 0, model="Fragment"),
        None,
        True,
    ),
    (
        "memory-scope-cross-device",
        module("OpMemoryBarrier %cross_device %sem", 0x108),
        rules.MEMORY_SCOPE,
        False,
    ),
    (
        "memory-scope-workgroup-in-fragment",
        module("OpMemoryBarrier %workgroup %sem", 0x48, model="Fragment"),
        rules.MEMORY_SCOPE_WORKGROUP_STAGE,
        False,
    ),
    (
        "invocation-scope-acquire",
        module("%r = OpAtomicIAdd %uint %var %invocation %sem %uint_1", 0x102),
        rules.MEMORY_SCOPE_INVOCATION,
        False,
    ),
    (
        "subgroup-scope-without-capability",
        module("%r = OpAtomicIAdd %uint %var %subgroup %sem %uint_1", 0),
        rules.MEMORY_SCOPE_SUBGROUP_CAPABILITY,
        True,  # VUID-StandaloneSpirv-SubgroupVoteKHR-07951 is newer than spirv-val 2023.1
    ),
    (
        "subgroup-scope-with-capability",
        module(
            "%r = OpAtomicIAdd %uint %var %subgroup %sem %uint_1",
            0,
            capabilities="OpCapability GroupNonUniform",
        ),
        None,
        True,
    ),
    (
        "queue-family-without-feature",
        module(
            "%r = OpAtomicIAdd %uint %var %queue_family %sem %uint_1",
            0,
            capabilities=VULKAN_MODEL,
            memory_model="Vulkan",
        ),
        rules.QUEUE_FAMILY_SCOPE_FEATURE,
        True,  # a feature rule: spirv-val does not know the device
    ),
    (
        "two-orders",
        module("OpMemoryBarrier %workgroup %sem", 0x106),
        rules.ONE_ORDER,
        False,
    ),
    (
        "atomic-store-acquire",
        module("OpAtomicStore %var %device %sem %uint_1", 0x102),
        rules.ATOMIC_STORE_ORDER,
        False,
    ),
    (
        "atomic-load-release",
        module("%r = OpAtomicLoad %uint %var %device %sem", 0x104),
        rules.ATOMIC_LOAD_ORDER,
        False,
    ),
    (
        "memory-barrier-relaxed",
        module("OpMemoryBarrier %workgroup %sem", 0x100),
        rules.MEMORY_BARRIER_RELAXED,
        False,
    ),
    (
        "barrier-order-without-storage",
        module("OpControlBarrier %workgroup %workgroup %sem", 0x8),
        rules.ORDER_NEEDS_STORAGE,
        True,  # spirv-val 2023.1 checks the storage bits of OpMemoryBarrier only
    ),
    (
        "atomic-storage-without-order",
        module("%r = OpAtomicIAdd %uint %var %device %sem %uint_1", 0x100),
        rules.STORAGE_NEEDS_ORDER,
        True,  # VUID 10871 (current spec) is newer than spirv-val 2023.1
    ),
    (
        "make-visible-with-release",
        module(
            "OpMemoryBarrier %workgroup %sem",
            0x4104,
            capabilities=VULKAN_MODEL,
            memory_model="Vulkan",
        ),
        rules.MAKE_VISIBLE_ORDER,
        False,
    ),
    (
        "volatile-barrier",
        module(
            "OpMemoryBarrier %workgroup %sem",
            0x8108,
            capabilities=VULKAN_MODEL,
            memory_model="Vulkan",
        ),
        rules.BARRIER_VOLATILE,
        False,
    ),
    (
        "compare-exchange",
        module(
            "%r = OpAtomicCompareExchange %uint %var %device %sem %unequal %uint_1 %uint_1",
            0x108,
            0x102,
        ),
        None,
        True,
    ),
    (
        "compare-exchange-unequal-release",
        module(
            "%r = OpAtomicCompareExchange %uint %var %device %sem %unequal %uint_1 %uint_1",
            0x108,
            0x104,
        ),
        rules.UNEQUAL_RELEASE,
        False,
    ),
    (
        "compare-exchange-unequal-storage",
        module(
            "%r = OpAtomicCompareExchange %uint %var %device %sem %unequal %uint_1 %uint_1",
            0x48,
            0x102,
        ),
        rules.UNEQUAL_STORAGE,
        True,  # VUID 10877 (current spec) is newer than spirv-val 2023.1
    ),
]


@pytest.mark.parametrize(
    ("text", "rule", "val"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_rule(text: str, rule: str | None, val: bool) -> None:
    words = assemble(text, "vulkan1.2")
    found = broken(validate_words(words, families=FAMILY, target_env="vulkan1.2"))
    if rule is None:
        assert found == set()
    else:
        assert rule in found
    accepted, message = spirv_val(words, "vulkan1.2")
    assert accepted == val, message


def test_sequentially_consistent_is_a_warning_with_glsl450_and_an_error_with_vulkan() -> None:
    """Seed 004 (1.1): "should not be used", treated as AcquireRelease; the Vulkan memory
    model forbids it outright."""
    glsl = module("OpMemoryBarrier %workgroup %sem", 0x110)
    (warning,) = validate_words(assemble(glsl, "vulkan1.2"), families=FAMILY)
    assert (warning.rule, warning.severity) == (rules.SEQUENTIALLY_CONSISTENT, Severity.WARNING)
    vulkan = module(
        "OpMemoryBarrier %workgroup %sem", 0x110, capabilities=VULKAN_MODEL, memory_model="Vulkan"
    )
    words = assemble(vulkan, "vulkan1.2")
    (error,) = validate_words(words, families=FAMILY, target_env="vulkan1.2")
    assert (error.rule, error.severity) == (rules.SEQUENTIALLY_CONSISTENT, Severity.ERROR)
    assert not spirv_val(words, "vulkan1.2")[0]


def test_workgroup_barrier_in_a_callable_shader() -> None:
    """Callable shaders are not in 04682's list, so 04637 is the rule broken there; in a
    fragment shader 04682 alone is reported for the same barrier."""
    text = module("OpControlBarrier %workgroup %invocation %sem", 0, model="CallableKHR")
    text = text.replace(
        "OpCapability Shader",
        'OpCapability Shader\nOpCapability RayTracingKHR\nOpExtension "SPV_KHR_ray_tracing"',
    )
    found = validate_words(assemble(text, ENV), families=FAMILY, target_env=ENV)
    assert broken(found) == {rules.EXECUTION_SCOPE_WORKGROUP_STAGE}
    fragment = module("OpControlBarrier %workgroup %invocation %sem", 0, model="Fragment")
    found = validate_words(assemble(fragment, ENV), families=FAMILY, target_env=ENV)
    assert broken(found) == {rules.CONTROL_BARRIER_STAGE}


def test_device_scope_with_memory_model_but_no_device_scope_feature() -> None:
    text = module("%r = OpAtomicIAdd %uint %var %device %sem %uint_1", 0)
    words = assemble(text, "vulkan1.2")
    assert validate_words(words, families=FAMILY, features=["vulkanMemoryModelDeviceScope"]) == []
    found = broken(validate_words(words, families=FAMILY, features=["vulkanMemoryModel"]))
    assert found == {rules.DEVICE_SCOPE_FEATURE}


def test_workgroup_memory_scope_in_tessellation_control_needs_vulkan_memory_model() -> None:
    text = module("OpControlBarrier %workgroup %workgroup %sem", 0, model="TessellationControl")
    text = text.replace("OpCapability Shader", "OpCapability Shader\nOpCapability Tessellation")
    words = assemble(text, "vulkan1.2")
    assert broken(validate_words(words, families=FAMILY)) == {
        rules.MEMORY_SCOPE_WORKGROUP_TESC_GLSL
    }
    assert "07320" in spirv_val(words, "vulkan1.2")[1]


def test_specialization_constant_scope_is_not_judged() -> None:
    text = module("OpControlBarrier %device %workgroup %sem", 0x108).replace(
        "%device = OpConstant %uint 1", "%device = OpSpecConstant %uint 1"
    )
    assert validate_words(assemble(text, "vulkan1.2"), families=FAMILY) == []
