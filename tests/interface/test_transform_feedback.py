"""Transform-feedback captures and rules (seed 004): offsets, sizes, strides, streams,
overlaps and the VK_EXT_transform_feedback limits, on corpus shaders and small modules."""

from __future__ import annotations

import pytest

from gpuav.spirv import read
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.validate import rules_interface
from gpuav.validate.interface import analyze_interfaces
from gpuav.validate.transform_feedback import TransformFeedback, XfbCapture
from tests.shaders.glsl import CORPUS_DIR, compile_glsl
from tests.validate.asm import assemble, rules, spirv_val, validate_words

FAMILY = [rules_interface.check]


def _captures(words: list[int]) -> list[XfbCapture]:
    module = read(words)
    feedback = TransformFeedback(module, Types(DefUse(module).defs), Decorations(module))
    (entry,) = analyze_interfaces(module)
    return feedback.captures(entry)


def _corpus(name: str) -> list[int]:
    path = CORPUS_DIR / name
    return compile_glsl(path, path.suffix[1:])


def _summary(captures: list[XfbCapture]) -> set[tuple[str, int | None, int | None, int, int]]:
    return {(c.name, c.buffer, c.stride, c.offset, c.size) for c in captures}


def test_variables_and_block_members_of_the_corpus_shader() -> None:
    captures = _captures(_corpus("transform_feedback_outputs.vert"))
    assert _summary(captures) == {
        ("outPosition", 0, 32, 0, 16),
        ("outVelocity", 0, 32, 16, 16),
        ("extra.age", 1, 8, 0, 4),
        ("extra.energy", 1, 8, 4, 4),
        ("gl_PerVertex.gl_Position", 2, 16, 0, 16),
    }


def test_struct_member_with_64_bit_data_is_packed_at_8_bytes() -> None:
    captures = _captures(_corpus("xfb_struct_double_locations.vert"))
    by_name = {c.name: c for c in captures}
    # Frame: dvec3 origin (24 bytes), dmat3x4 basis at 24 (96 bytes), float weight at 120,
    # padded to 128 because it holds doubles.
    assert (by_name["captured.frame"].offset, by_name["captured.frame"].size) == (0, 128)
    assert by_name["captured.frame"].wide
    assert (by_name["captured.id"].offset, by_name["captured.id"].size) == (128, 4)
    assert (by_name["preciseXy"].buffer, by_name["preciseXy"].size) == (1, 16)


@pytest.mark.parametrize(
    "name",
    [
        "transform_feedback_outputs.vert",
        "xfb_struct_double_locations.vert",
        "isolines_transform_feedback.tese",
        "multiple_streams_xfb.geom",
        "points_to_quads_xfb.geom",
    ],
)
def test_corpus_xfb_shaders_pass_with_their_own_limits(name: str) -> None:
    words = _corpus(name)
    assert _captures(words)
    limits = {
        "maxTransformFeedbackStreams": 4,
        "maxTransformFeedbackBuffers": 4,
        "maxTransformFeedbackBufferDataSize": 512,
        "maxTransformFeedbackStreamDataSize": 512,
        "maxTransformFeedbackBufferDataStride": 512,
    }
    assert validate_words(words, families=FAMILY, limits=limits) == []


VERTEX = """
OpCapability Shader
OpCapability TransformFeedback
OpCapability Float64
OpCapability Float16
OpCapability GeometryStreams
OpMemoryModel Logical GLSL450
OpEntryPoint Geometry %main "main" %a %b
OpExecutionMode %main Xfb
OpExecutionMode %main Triangles
OpExecutionMode %main Invocations 1
OpExecutionMode %main OutputPoints
OpExecutionMode %main OutputVertices 1
OpName %a "a"
OpName %b "b"
OpDecorate %a Location 0
OpDecorate %b Location 2
{decorations}
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%double = OpTypeFloat 64
%half = OpTypeFloat 16
%int = OpTypeInt 32 1
%int_5 = OpConstant %int 5
%v4 = OpTypeVector %float 4
%dv2 = OpTypeVector %double 2
%pa = OpTypePointer Output {a_type}
%pb = OpTypePointer Output %v4
%a = OpVariable %pa Output
%b = OpVariable %pb Output
%main = OpFunction %void None %fn
%entry = OpLabel
{body}
OpReturn
OpFunctionEnd
"""


def _xfb(decorations: str, a_type: str = "%v4", body: str = "") -> list[int]:
    return assemble(VERTEX.format(decorations=decorations, a_type=a_type, body=body))


XFB = "OpDecorate %a XfbBuffer 0\nOpDecorate %a XfbStride 32\nOpDecorate %b XfbBuffer 0\n"
XFB += "OpDecorate %b XfbStride 32\n"

NEGATIVE = [
    ("OpDecorate %a Offset 0\n", "%v4", "VUID-StandaloneSpirv-Offset-04716", {}),
    (
        XFB.replace("32", "48") + "OpDecorate %a Offset 20\nOpDecorate %b Offset 0",
        "%dv2",
        "VUID-StandaloneSpirv-Offset-04687",
        {},
    ),
    (
        XFB + "OpDecorate %a Offset 2\nOpDecorate %b Offset 16",
        "%float",
        "VUID-StandaloneSpirv-Offset-04691",
        {},
    ),
    (
        XFB + "OpDecorate %a Offset 0\nOpDecorate %b Offset 16",
        "%half",
        "VUID-StandaloneSpirv-Offset-04692",
        {},
    ),
    (
        XFB + "OpDecorate %a Offset 0\nOpDecorate %b Offset 8",
        "%v4",
        "VUID-StandaloneSpirv-XfbBuffer-04696",
        {},
    ),
    (
        "OpDecorate %a XfbBuffer 0\nOpDecorate %a XfbStride 32\nOpDecorate %b XfbBuffer 0\n"
        "OpDecorate %b XfbStride 48\nOpDecorate %a Offset 0\nOpDecorate %b Offset 16",
        "%v4",
        "VUID-StandaloneSpirv-XfbBuffer-04693",
        {},
    ),
    (
        XFB + "OpDecorate %a Offset 0\nOpDecorate %b Offset 16\nOpDecorate %b Stream 1",
        "%v4",
        "VUID-StandaloneSpirv-Stream-04694",
        {},
    ),
    (
        "OpDecorate %a XfbBuffer 0\nOpDecorate %a XfbStride 36\nOpDecorate %b XfbBuffer 0\n"
        "OpDecorate %b XfbStride 36\nOpDecorate %a Offset 0\nOpDecorate %b Offset 16",
        "%dv2",
        "GPUAV-XfbStride-alignment",
        {},
    ),
    (XFB + "OpDecorate %a Offset 0\nOpDecorate %b Offset 24", "%v4", "GPUAV-XfbStride-extent", {}),
    (
        XFB + "OpDecorate %a Offset 0\nOpDecorate %b Offset 16",
        "%v4",
        "VUID-RuntimeSpirv-Offset-06308",
        {"maxTransformFeedbackBufferDataSize": 24},
    ),
    (
        XFB + "OpDecorate %a Offset 0\nOpDecorate %b Offset 16",
        "%v4",
        "VUID-RuntimeSpirv-XfbBuffer-06309",
        {"maxTransformFeedbackStreamDataSize": 16},
    ),
    (
        XFB + "OpDecorate %a Offset 0\nOpDecorate %b Offset 16",
        "%v4",
        "VUID-RuntimeSpirv-XfbStride-06313",
        {"maxTransformFeedbackBufferDataStride": 16},
    ),
    (
        XFB + "OpDecorate %a Offset 0\nOpDecorate %b Offset 16\nOpDecorate %a Stream 2\n"
        "OpDecorate %b Stream 2",
        "%v4",
        "VUID-RuntimeSpirv-Stream-06312",
        {"maxTransformFeedbackStreams": 2},
    ),
    (
        "OpDecorate %a XfbBuffer 3\nOpDecorate %a XfbStride 16\nOpDecorate %a Offset 0",
        "%v4",
        "GPUAV-XfbBuffer-maxTransformFeedbackBuffers",
        {"maxTransformFeedbackBuffers": 2},
    ),
]


@pytest.mark.parametrize(("decorations", "a_type", "rule", "limits"), NEGATIVE)
def test_broken_transform_feedback_rule(
    decorations: str, a_type: str, rule: str, limits: dict[str, int]
) -> None:
    words = _xfb(decorations, a_type)
    found = rules(validate_words(words, families=FAMILY, limits=limits))
    assert rule in found
    assert found <= {rule, "VUID-RuntimeSpirv-XfbBuffer-06309", "VUID-RuntimeSpirv-Offset-06308"}


def test_the_same_module_without_the_fault_is_clean() -> None:
    words = _xfb(XFB + "OpDecorate %a Offset 0\nOpDecorate %b Offset 16")
    assert spirv_val(words)[0]
    limits = {
        "maxTransformFeedbackBufferDataSize": 32,
        "maxTransformFeedbackStreamDataSize": 32,
        "maxTransformFeedbackBufferDataStride": 32,
        "maxTransformFeedbackStreams": 1,
        "maxTransformFeedbackBuffers": 1,
    }
    assert validate_words(words, families=FAMILY, limits=limits) == []


def test_emit_stream_vertex_beyond_max_streams() -> None:
    words = _xfb("", body="OpEmitStreamVertex %int_5")
    found = validate_words(words, families=FAMILY, limits={"maxTransformFeedbackStreams": 4})
    assert rules(found) == {"VUID-RuntimeSpirv-OpEmitStreamVertex-06310"}
    assert validate_words(words, families=FAMILY, limits={"maxTransformFeedbackStreams": 6}) == []
