"""NonUniform rules on glslang-compiled shaders: which descriptor-array indices the taint
analysis finds varying, and the ...ArrayNonUniformIndexing features.

spirv-val does not check VUID-RuntimeSpirv-NonUniform-06274 (it needs run-time knowledge),
so there is no differential test; every module here still passes spirv-val.
"""

from __future__ import annotations

import pytest

from gpuav.spirv import read, write
from gpuav.spirv.grammar import Capability
from gpuav.validate import rules_nonuniform
from gpuav.validate.diagnostics import Diagnostic, Severity
from tests.shaders.glsl import CorpusShader, compile_glsl, corpus_shaders, spirv_val
from tests.validate.asm import validate_words

FAMILY = [rules_nonuniform.check]
FEATURES = (
    "shaderSampledImageArrayNonUniformIndexing",
    "shaderStorageBufferArrayNonUniformIndexing",
    "shaderStorageImageArrayNonUniformIndexing",
)


def _diagnostics(source: str, stage: str, features: tuple[str, ...] = FEATURES) -> list[Diagnostic]:
    words = compile_glsl(source, stage, target_env="vulkan1.2")
    spirv_val(words, "vulkan1.2")
    return validate_words(words, families=FAMILY, target_env="vulkan1.2", features=features)


FRAGMENT = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(set = 0, binding = 0) uniform sampler2D textures[4];
layout(set = 0, binding = 1) uniform Params { uint chosen; };
layout(push_constant) uniform Push { uint pushed; };
layout(location = 0) flat in uint varying_index;
layout(location = 1) in vec2 uv;
layout(location = 0) out vec4 color;
void main() { color = texture(textures[INDEX], uv); }
"""


def _fragment(index: str) -> list[Diagnostic]:
    return _diagnostics(FRAGMENT.replace("INDEX", index), "frag")


def test_varying_index_without_non_uniform_is_a_warning() -> None:
    found = _fragment("varying_index")
    assert [(d.rule, d.severity) for d in found] == [
        (rules_nonuniform.MISSING_NON_UNIFORM, Severity.WARNING)
    ]
    assert found[0].instruction_index is not None


def test_derived_varying_index_is_found() -> None:
    assert len(_fragment("(varying_index * 3u + 1u) % 4u")) == 1


@pytest.mark.parametrize(
    "index", ["nonuniformEXT(varying_index)", "chosen", "pushed", "2", "chosen + pushed"]
)
def test_decorated_or_uniform_indices_are_clean(index: str) -> None:
    assert _fragment(index) == []


COMPUTE = """#version 450
#extension GL_EXT_nonuniform_qualifier : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint values[]; } buffers[8];
uint pick(uint value) { return value % 8u; }
void main() {
    uint through_local = 0u;
    for (uint i = 0u; i < gl_LocalInvocationIndex; ++i) { through_local += 1u; }
    buffers[INDEX].values[0] = 1u;
}
"""


@pytest.mark.parametrize(
    ("index", "varying"),
    [
        ("gl_WorkGroupID.x % 8u", False),
        ("gl_LocalInvocationIndex % 8u", True),
        ("pick(gl_GlobalInvocationID.x)", True),
        ("pick(gl_WorkGroupID.y)", False),
        ("nonuniformEXT(gl_LocalInvocationIndex % 8u)", False),
    ],
)
def test_compute_indices(index: str, varying: bool) -> None:
    found = _diagnostics(COMPUTE.replace("INDEX", index), "comp")
    assert bool(found) == varying, found


def test_index_through_a_function_variable_is_found() -> None:
    # through_local is stored in a loop whose trip count varies: its value is tainted only by
    # control flow, which the analysis does not follow (no report); storing the input is.
    assert _diagnostics(COMPUTE.replace("INDEX", "through_local % 8u"), "comp") == []
    stored = COMPUTE.replace(
        "buffers[INDEX]",
        "through_local = gl_LocalInvocationIndex;\n    buffers[through_local % 8u]",
    )
    assert len(_diagnostics(stored, "comp")) == 1


def test_non_uniform_indexing_needs_the_feature_when_the_capability_is_missing() -> None:
    source = FRAGMENT.replace("INDEX", "nonuniformEXT(varying_index)")
    words = compile_glsl(source, "frag", target_env="vulkan1.2")
    module = read(words)
    module.capabilities = [
        instruction
        for instruction in module.capabilities
        if instruction.operands[:1] != [Capability.SampledImageArrayNonUniformIndexing]
    ]
    stripped = write(module)
    found = validate_words(stripped, families=FAMILY, target_env="vulkan1.2")
    assert [d.rule for d in found] == [rules_nonuniform.INDEXING_FEATURE]
    with_feature = validate_words(
        stripped, families=FAMILY, target_env="vulkan1.2", features=FEATURES
    )
    assert with_feature == []
    # With the capability declared, the capability table reports a missing feature instead.
    assert validate_words(words, families=FAMILY, target_env="vulkan1.2") == []


def test_workgroup_id_shader_warns_only_for_the_local_index() -> None:
    shader = next(s for s in corpus_shaders() if s.name == "workgroup_id_descriptor_index.comp")
    found = validate_words(shader.compile(), families=FAMILY, target_env=shader.target_env)
    # tiles[tile], tileInfo[tile] and tileOutputs[tile] use the workgroup id; only
    # tileOutputs[local % 16u] varies within a workgroup.
    assert len(found) == 1


@pytest.mark.parametrize("corpus_shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_corpus_shaders_have_no_errors(corpus_shader: CorpusShader) -> None:
    words = corpus_shader.compile()
    target_env = corpus_shader.target_env
    found = validate_words(words, families=FAMILY, target_env=target_env, features=FEATURES)
    assert [d for d in found if d.severity is Severity.ERROR] == []
