"""Location diagnostics: missing Locations, overlaps and Component ranges (each checked
against spirv-val where it has the same rule), device limits, and the whole corpus."""

from __future__ import annotations

import pytest

from gpuav.spirv import read
from gpuav.validate import rules_interface
from gpuav.validate.interface import analyze_interfaces
from gpuav.validate.interface_rules import VULKAN_MINIMUM_LIMITS
from tests.shaders.glsl import CorpusShader, compile_glsl, corpus_shaders
from tests.validate.asm import assemble, rules, spirv_val, validate_words

FAMILY = [rules_interface.check]

FRAGMENT = """
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint Fragment %main "main" %a %b
OpExecutionMode %main OriginUpperLeft
OpName %a "a"
OpName %b "b"
{decorations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%v2 = OpTypeVector %float 2
%v4 = OpTypeVector %float 4
%block = OpTypeStruct %v4 %v4
%pa = OpTypePointer {a_class} {a_type}
%pb = OpTypePointer Output %v2
%a = OpVariable %pa {a_class}
%b = OpVariable %pb Output
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""


def _module(decorations: str, a_type: str = "%v4", a_class: str = "Output") -> list[int]:
    return assemble(FRAGMENT.format(decorations=decorations, a_type=a_type, a_class=a_class))


CASES = [
    # (decorations, type of a, rule we report, what spirv-val says; True: the same VUID)
    ("OpDecorate %b Location 1", "%v4", "VUID-StandaloneSpirv-Location-04916", True),
    (
        "OpDecorate %a Location 0\nOpDecorate %b Location 0\nOpDecorate %b Component 2",
        "%v4",
        "VUID-StandaloneSpirv-OpEntryPoint-08722",
        "conflicting output location assignment at location 0, component 2",
    ),
    (
        "OpDecorate %block Block\nOpMemberDecorate %block 0 Location 2\nOpDecorate %b Location 0",
        "%block",
        "VUID-StandaloneSpirv-Location-04919",
        True,
    ),
    (
        "OpDecorate %block Block\nOpDecorate %a Location 2\nOpMemberDecorate %block 0 Location 2\n"
        "OpDecorate %b Location 0",
        "%block",
        "VUID-StandaloneSpirv-Location-04918",
        True,
    ),
    (
        "OpDecorate %a Location 0\nOpDecorate %b Location 1\nOpDecorate %b Component 3",
        "%v4",
        "VUID-StandaloneSpirv-Component-04921",
        True,
    ),
]


@pytest.mark.parametrize(("decorations", "a_type", "rule", "spirv_val_says"), CASES)
def test_location_rule_against_spirv_val(
    decorations: str, a_type: str, rule: str, spirv_val_says: str | bool
) -> None:
    words = _module(decorations, a_type)
    assert rule in rules(validate_words(words, families=FAMILY))
    valid, said = spirv_val(words)
    assert not valid
    assert (rule if spirv_val_says is True else str(spirv_val_says)) in said


COMPONENT_64 = """
OpCapability Shader
OpCapability Float64
OpMemoryModel Logical GLSL450
OpEntryPoint Vertex %main "main" %a
OpDecorate %a Location 0
OpDecorate %a Component {component}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%double = OpTypeFloat 64
%dv2 = OpTypeVector %double 2
%dv3 = OpTypeVector %double 3
%pa = OpTypePointer Output {type}
%a = OpVariable %pa Output
%main = OpFunction %void None %fn
%entry = OpLabel
OpReturn
OpFunctionEnd
"""


@pytest.mark.parametrize(
    ("type_", "component", "rule"),
    [
        ("%double", 1, "VUID-StandaloneSpirv-Component-04923"),
        ("%dv2", 2, "VUID-StandaloneSpirv-Component-04922"),
        ("%dv3", 0, "VUID-StandaloneSpirv-Component-07703"),
        ("%double", 2, None),
        ("%dv2", 0, None),
    ],
)
def test_component_on_64_bit_types(type_: str, component: int, rule: str | None) -> None:
    words = assemble(COMPONENT_64.format(type=type_, component=component))
    found = rules(validate_words(words, families=FAMILY))
    assert found == ({rule} if rule else set())
    assert spirv_val(words)[0] == (rule is None)


def test_spec_constant_array_interface_is_a_warning() -> None:
    words = compile_glsl(
        """#version 450
        layout(constant_id = 0) const int N = 3;
        layout(location = 0) out vec4 colors[N];
        void main() { colors[0] = vec4(1.0); }
        """,
        "vert",
    )
    (diagnostic,) = validate_words(words, families=FAMILY)
    assert diagnostic.rule == "GPUAV-Interface-uncounted"
    assert diagnostic.severity.value == "warning"
    assert "specialization" in diagnostic.message


def test_valid_module_has_no_location_diagnostics() -> None:
    words = _module("OpDecorate %a Location 0\nOpDecorate %b Location 1")
    assert spirv_val(words)[0]
    assert validate_words(words, families=FAMILY) == []


def test_inputs_and_outputs_have_separate_location_spaces() -> None:
    words = _module("OpDecorate %a Location 0\nOpDecorate %b Location 0", a_class="Input")
    assert spirv_val(words)[0]
    assert validate_words(words, families=FAMILY) == []


def _outputs(count: int, stage: str = "vert", kind: str = "vec4") -> list[int]:
    body = "".join(f"layout(location = {i}) out {kind} o{i};\n" for i in range(count))
    extra = "layout(vertices = 1) out;\n" if stage == "tesc" else ""
    return compile_glsl(f"#version 450\n{extra}{body}void main() {{}}\n", stage)


def test_vertex_outputs_beyond_max_vertex_output_components() -> None:
    words = _outputs(17)
    found = validate_words(words, families=FAMILY, limits={"maxVertexOutputComponents": 64})
    assert rules(found) == {"VUID-RuntimeSpirv-Location-06272"}
    assert len(found) == 1 and "'o16'" in found[0].message and "0..15" in found[0].message
    assert validate_words(words, families=FAMILY, limits={"maxVertexOutputComponents": 68}) == []


def test_limits_are_only_checked_when_known() -> None:
    words = _outputs(40)
    assert validate_words(words, families=FAMILY) == []
    found = validate_words(words, families=FAMILY, limits=VULKAN_MINIMUM_LIMITS)
    assert len(found) == 40 - 16


def test_fragment_outputs_against_max_fragment_output_attachments() -> None:
    words = _outputs(5, "frag")
    found = validate_words(words, families=FAMILY, limits={"maxFragmentOutputAttachments": 4})
    assert [d.rule for d in found] == ["VUID-RuntimeSpirv-Location-06272"]
    assert "maxFragmentOutputAttachments" in found[0].message


def test_double_outputs_count_two_components_each() -> None:
    # 9 dvec4 outputs need 18 locations: over a 64-component (16-location) limit.
    body = "".join(f"layout(location = {2 * i}) out dvec4 d{i};\n" for i in range(9))
    words = compile_glsl(f"#version 450\n{body}void main() {{}}\n", "vert")
    found = validate_words(words, families=FAMILY, limits={"maxVertexOutputComponents": 64})
    assert [d.message.split("'")[1] for d in found] == ["d8"]


def test_tessellation_patch_outputs_use_the_per_patch_limit() -> None:
    words = compile_glsl(
        """#version 450
        layout(vertices = 1) out;
        layout(location = 0) patch out vec4 p[4];
        layout(location = 4) out vec4 v[];
        void main() { p[0] = vec4(1.0); v[gl_InvocationID] = vec4(0.0); }
        """,
        "tesc",
    )
    limits = {
        "maxTessellationControlPerPatchOutputComponents": 12,
        "maxTessellationControlPerVertexOutputComponents": 20,
    }
    found = validate_words(words, families=FAMILY, limits=limits)
    assert len(found) == 1 and "maxTessellationControlPerPatchOutputComponents" in found[0].message


@pytest.mark.parametrize("shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_corpus_shaders_have_no_interface_errors(shader: CorpusShader) -> None:
    """Every corpus shader passes spirv-val: we must not invent location or xfb errors."""
    words = shader.compile()
    entries = analyze_interfaces(read(words))
    assert entries
    assert validate_words(words, families=FAMILY) == []
    for entry in entries:
        for variable in entry.variables:
            assert variable.builtin or variable.slots, (entry.name, variable.name)
