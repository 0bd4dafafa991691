"""Every image instruction family of seed 000, on each image descriptor type, is guarded.

Each case is a fragment shader indexing a descriptor array with a flat input; CHECK lines say
that the index is checked (by the helper that also writes the record, given the consumer's
original instruction index) and that the consumer runs only on the in-bounds branch.
"""

from __future__ import annotations

import pytest

from gpuav.spirv.disassembler import disassemble
from gpuav.spirv.grammar import OPCODES_BY_NAME
from tests.instrument.filecheck import filecheck
from tests.instrument.util import instrumented, origins
from tests.shaders.glsl import compile_glsl

S2D = "uniform sampler2D d[4];"
SHADOW = "uniform sampler2DShadow d[4];"
IMAGE = "layout(rgba8) uniform image2D d[4];"
UIMAGE = "layout(r32ui) uniform uimage2D d[4];"
P2 = "vec2(0.5)"

# (consumer, declaration, statements computing `vec4 v`)
CASES = [
    ("OpImageSampleImplicitLod", S2D, f"v = texture(d[k], {P2});"),
    ("OpImageSampleExplicitLod", S2D, f"v = textureLod(d[k], {P2}, 0.0);"),
    ("OpImageSampleDrefImplicitLod", SHADOW, "v = vec4(texture(d[k], vec3(0.5)));"),
    ("OpImageSampleDrefExplicitLod", SHADOW, "v = vec4(textureLod(d[k], vec3(0.5), 0.0));"),
    ("OpImageSampleProjImplicitLod", S2D, "v = textureProj(d[k], vec3(0.5, 0.5, 1.0));"),
    ("OpImageSampleProjExplicitLod", S2D, "v = textureProjLod(d[k], vec3(0.5, 0.5, 1.0), 0.0);"),
    ("OpImageSampleProjDrefImplicitLod", SHADOW, "v = vec4(textureProj(d[k], vec4(0.5)));"),
    ("OpImageSampleProjDrefExplicitLod", SHADOW, "v = vec4(textureProjLod(d[k], vec4(0.5), 0.0));"),
    ("OpImageGather", S2D, f"v = textureGather(d[k], {P2});"),
    ("OpImageDrefGather", SHADOW, f"v = textureGather(d[k], {P2}, 0.5);"),
    ("OpImageQueryLod", S2D, f"v = vec4(textureQueryLod(d[k], {P2}), 0.0, 0.0);"),
    ("OpImageSparseSampleImplicitLod", S2D, f"v.x = float(sparseTextureARB(d[k], {P2}, v));"),
    (
        "OpImageSparseSampleExplicitLod",
        S2D,
        f"v.x = float(sparseTextureLodARB(d[k], {P2}, 0.0, v));",
    ),
    (
        "OpImageSparseSampleDrefImplicitLod",
        SHADOW,
        "v.y = float(sparseTextureARB(d[k], vec3(0.5), v.x));",
    ),
    ("OpImageSparseGather", S2D, f"v.x = float(sparseTextureGatherARB(d[k], {P2}, v));"),
    (
        "OpImageSparseDrefGather",
        SHADOW,
        f"v.x = float(sparseTextureGatherARB(d[k], {P2}, 0.5, v));",
    ),
    ("OpImageFetch", S2D, "v = texelFetch(d[k], ivec2(0), 0);"),
    ("OpImageFetch", "uniform samplerBuffer d[4];", "v = texelFetch(d[k], 1);"),
    ("OpImageFetch", "uniform texture2D d[4];", "v = texelFetch(sampler2D(d[k], s), ivec2(0), 0);"),
    ("OpImageRead", IMAGE, "v = imageLoad(d[k], ivec2(0));"),
    ("OpImageRead", "layout(rgba8) uniform imageBuffer d[4];", "v = imageLoad(d[k], 2);"),
    ("OpImageQuerySizeLod", S2D, "v = vec4(textureSize(d[k], 0), 0.0, 0.0);"),
    ("OpImageQuerySize", IMAGE, "v = vec4(imageSize(d[k]), 0.0, 0.0);"),
    ("OpImageQuerySize", "uniform samplerBuffer d[4];", "v = vec4(textureSize(d[k]));"),
    ("OpImageQueryLevels", S2D, "v = vec4(textureQueryLevels(d[k]));"),
    ("OpImageQuerySamples", "uniform sampler2DMS d[4];", "v = vec4(textureSamples(d[k]));"),
    ("OpImageSparseFetch", S2D, "v.x = float(sparseTexelFetchARB(d[k], ivec2(0), 0, v));"),
    ("OpImageSparseRead", IMAGE, "v.x = float(sparseImageLoadARB(d[k], ivec2(0), v));"),
    ("OpImageWrite", IMAGE, "imageStore(d[k], ivec2(0), vec4(1.0));"),
    (
        "OpImageWrite",
        "layout(rgba8) uniform imageBuffer d[4];",
        "imageStore(d[k], 1, vec4(1.0));",
    ),
    ("OpImageTexelPointer", UIMAGE, "v.x = float(imageAtomicAdd(d[k], ivec2(0), 1u));"),
]

SOURCE = """#version 450
#extension GL_ARB_sparse_texture2 : require
layout(set = 0, binding = 0) {declaration}
layout(set = 0, binding = 1) uniform sampler s;
layout(location = 0) flat in int k;
layout(location = 0) out vec4 color;
void main() {{
    vec4 v = vec4(0.0);
    {statements}
    color = v;
}}
"""


@pytest.mark.parametrize(
    ("consumer", "declaration", "statements"),
    CASES,
    ids=[f"{case[0]}-{case[1].split()[-2]}" for case in CASES],
)
def test_image_instruction_is_guarded(consumer: str, declaration: str, statements: str) -> None:
    words = compile_glsl(
        SOURCE.format(declaration=declaration, statements=statements),
        "frag",
        target_env="vulkan1.2",
    )
    (origin,) = origins(words, OPCODES_BY_NAME[consumer])
    text = disassemble(instrumented(words))
    filecheck(
        text,
        f"""
        CHECK: OpFunctionCall %bool %gpuav_check_bounds %uint_{origin} {{{{%[0-9]+}}}} %uint_4 %true
        CHECK-NEXT: OpUMod %uint {{{{%[0-9]+}}}} %uint_4
        CHECK-NEXT: OpSelectionMerge
        CHECK-NEXT: OpBranchConditional
        CHECK-NEXT: OpLabel
        CHECK: OpAccessChain {{{{.*}}}} %d %
        CHECK: {consumer}
        CHECK: OpBranch
        CHECK-NEXT: OpLabel
        CHECK-NOT: {consumer}
        CHECK: %gpuav_check_bounds = OpFunction %bool
        CHECK: OpULessThan %bool
        CHECK: OpFunctionCall %void %gpuav_write_record {{{{%[0-9]+}}}} %uint_0
                """,
    )
    assert text.count(f"= {consumer} ") + text.count(f"{consumer} %") >= 1
