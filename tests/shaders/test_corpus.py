"""The GLSL corpus compiles in every debug mode and validates; its size and coverage are pinned."""

from __future__ import annotations

import functools
import re
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.shaders.glsl import (
    DEBUG_MODES,
    CorpusShader,
    DebugMode,
    InvalidShader,
    SpirvValidationError,
    corpus_shaders,
    invalid_shaders,
    spirv_val,
)

SHADERS = corpus_shaders()
CASES = [(shader, debug) for shader in SHADERS for debug in DEBUG_MODES]

# Lower bounds, so that nobody shrinks the corpus silently.
MINIMUM_TOTAL = 70
MINIMUM_PER_STAGE = {"vert": 6, "frag": 6, "comp": 6, "tesc": 4, "tese": 4, "geom": 4}
# Known tool bugs are allowed in a few files only (see the spirv-val-fails header).
MAXIMUM_KNOWN_FAILURES = 2


@pytest.fixture(scope="module")
def compiled() -> dict[tuple[str, DebugMode], list[int] | AssertionError]:
    """Every (shader, debug mode) compiled up front on two threads; errors kept for their test."""

    def compile_case(case: tuple[CorpusShader, DebugMode]) -> list[int] | AssertionError:
        shader, debug = case
        try:
            return shader.compile(debug)
        except AssertionError as error:
            return error

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(compile_case, CASES))
    return {
        (shader.name, debug): result for (shader, debug), result in zip(CASES, results, strict=True)
    }


@pytest.mark.parametrize(
    ("shader", "debug"), CASES, ids=[f"{shader.name}-{debug}" for shader, debug in CASES]
)
def test_compiles_and_validates(
    compiled: dict[tuple[str, DebugMode], list[int] | AssertionError],
    shader: CorpusShader,
    debug: DebugMode,
) -> None:
    result = compiled[(shader.name, debug)]
    if isinstance(result, AssertionError):
        raise result
    if debug in shader.spirv_val_fails:
        with pytest.raises(SpirvValidationError):
            spirv_val(result, shader.target_env)
        return
    spirv_val(result, shader.target_env)


def test_debug_modes_differ() -> None:
    """-g adds OpSource/OpLine (opcode 3, 8) and -gV imports NonSemantic.Shader.DebugInfo.100."""
    shader = next(s for s in SHADERS if s.name == "combined_sampler_array_ubo_index.frag")
    plain, lines, nonsemantic = (shader.compile(debug) for debug in DEBUG_MODES)
    assert 8 not in _opcodes(plain)
    assert 8 in _opcodes(lines)
    assert b"NonSemantic.Shader.DebugInfo.100" in _bytes(nonsemantic)
    assert b"combined_sampler_array_ubo_index.frag" in _bytes(lines)


def _opcodes(words: list[int]) -> set[int]:
    opcodes, index = set(), 5
    while index < len(words):
        opcodes.add(words[index] & 0xFFFF)
        index += max(words[index] >> 16, 1)
    return opcodes


def _bytes(words: list[int]) -> bytes:
    return b"".join(word.to_bytes(4, "little") for word in words)


def test_corpus_size_and_stages() -> None:
    counts = Counter(shader.stage for shader in SHADERS)
    assert len(SHADERS) >= MINIMUM_TOTAL, counts
    for stage, minimum in MINIMUM_PER_STAGE.items():
        assert counts[stage] >= minimum, f"{stage}: {counts[stage]} < {minimum}"


def test_known_failures_stay_rare() -> None:
    known = [shader.name for shader in SHADERS if shader.spirv_val_fails]
    assert len(known) <= MAXIMUM_KNOWN_FAILURES, known
    assert all(shader.spirv_val_fails <= {"gV"} for shader in SHADERS)


@functools.cache
def _sources() -> str:
    return "\n".join(shader.path.read_text() for shader in SHADERS)


# Each entry: what the corpus must keep exercising, as a regular expression over all sources.
REQUIRED_FEATURES = {
    "sampled image array + sampler": r"uniform texture2D \w+\[\d+\];[\s\S]*uniform sampler ",
    "combined image sampler array": r"uniform sampler2D \w+\[\d+\]",
    "samplerCube array": r"uniform samplerCube \w+\[",
    "sampler2DArray array": r"uniform sampler2DArray \w+\[",
    "isampler2D array": r"uniform isampler2D \w+\[",
    "usampler3D array": r"uniform usampler3D \w+\[",
    "shadow sampler array": r"uniform sampler2DShadow \w+\[",
    "storage image array": r"uniform (readonly |writeonly )?image2D \w+\[",
    "imageAtomicAdd": r"imageAtomicAdd\(",
    "uniform texel buffer array": r"uniform samplerBuffer \w+\[",
    "textureBuffer": r"uniform textureBuffer ",
    "storage texel buffer array": r"uniform (readonly |writeonly )?imageBuffer \w+\[",
    "uniform block array": r"uniform \w+ \{[^}]*\} \w+\[\d+\];",
    "storage block array": r"buffer \w+ \{[^}]*\[\];\s*\} \w+\[\d+\];",
    "runtime descriptor array": r"uniform sampler2D \w+\[\];",
    "nonuniformEXT": r"nonuniformEXT\(",
    "index by gl_InstanceIndex": r"\[gl_InstanceIndex",
    "index by gl_GlobalInvocationID": r"gl_GlobalInvocationID",
    "index by push constant": r"\[pc\.\w+\]",
    "textureGrad": r"textureGrad\(",
    "textureProj": r"textureProj\(",
    "textureProjLod": r"textureProjLod\(",
    "textureProjGrad": r"textureProjGrad\(",
    "textureGather": r"textureGather\(",
    "textureGatherOffsets": r"textureGatherOffsets\(",
    "texelFetch": r"texelFetch\(",
    "textureQueryLod": r"textureQueryLod\(",
    "textureQueryLevels": r"textureQueryLevels\(",
    "textureSize": r"textureSize\(",
    "textureSamples": r"textureSamples\(",
    "imageSamples": r"imageSamples\(",
    "sparse texture": r"sparseTextureARB\(",
    "sparse image load": r"sparseImageLoadARB\(",
    "subpassLoad": r"subpassLoad\(",
    "specialization constant": r"constant_id",
    "push constants": r"push_constant",
    "shared memory": r"^shared ",
    "barrier": r"barrier\(\)",
    "int64": r"GL_ARB_gpu_shader_int64",
    "doubles": r"\bdvec\d|\bdouble\b",
    "16-bit types": r"GL_EXT_shader_explicit_arithmetic_types",
    "subgroup ops": r"GL_KHR_shader_subgroup_",
    "geometry streams": r"EmitStreamVertex\(",
    "patch variables": r"patch out ",
    "transform feedback": r"xfb_offset",
    "#line": r"^#line \d+",
    "switch": r"\bswitch \(",
    "macros": r"^#define \w+\(",
}


@pytest.mark.parametrize("feature", sorted(REQUIRED_FEATURES))
def test_corpus_covers_feature(feature: str) -> None:
    assert re.search(REQUIRED_FEATURES[feature], _sources(), re.MULTILINE), feature


def test_corpus_target_envs_are_varied() -> None:
    assert {shader.target_env for shader in SHADERS} >= {"vulkan1.1", "vulkan1.2", "vulkan1.3"}


@pytest.mark.parametrize("shader", invalid_shaders(), ids=lambda shader: shader.name)
def test_invalid_shader_is_rejected(shader: InvalidShader) -> None:
    words = shader.compile()
    with pytest.raises(SpirvValidationError, match=re.escape(shader.expected_error)):
        spirv_val(words, shader.target_env)
