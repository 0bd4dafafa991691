"""Source lookup on real glslangValidator output: OpLine/OpString/OpSource with and without
``#line`` directives, NonSemantic.Shader.DebugInfo.100, and no debug information at all."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from gpuav.report.shader_info import ShaderInfo, SourceLocation, shader_info
from gpuav.report.source_text import SourceText
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction, encode_string
from gpuav.spirv.reader import read
from gpuav.spirv.writer import write
from tests.report.helpers import compile_with_source_debug_info, instruction_indices
from tests.shaders.glsl import CORPUS_DIR, compile_glsl, spirv_val, tool

FACE = """#version 450
layout(set = 0, binding = 1) uniform sampler2D tex[6];
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;
layout(push_constant) uniform Push { int index; } push;
void main() {
    vec4 base = vec4(0.25);
    color = base * texture(tex[push.index], uv);
}
"""
FACE_LINE = "    color = base * texture(tex[push.index], uv);"

INCLUDED = """#version 450
#extension GL_GOOGLE_cpp_style_line_directive : require
layout(set = 0, binding = 0) uniform sampler2D shadows[4];
layout(set = 1, binding = 2) uniform texture2D albedo[8];
layout(set = 1, binding = 3) uniform sampler linear;
layout(location = 0) in vec2 uv;
layout(location = 1) flat in int material;
layout(location = 0) out vec4 color;
#line 1 "lighting.glsl"
// lighting helpers, pasted in by an include step
float shadow(int cascade, vec2 at) {
    return texture(shadows[cascade], at).r;
}
#line 12 "main.frag"
void main() {
    vec4 surface = texture(sampler2D(albedo[material], linear), uv);
    color = surface * shadow(material & 3, uv);
}
"""

ONE_LINE = """#version 450
layout(set = 0, binding = 0) uniform sampler2D tex[4];
layout(location = 0) in vec2 uv;
layout(location = 1) flat in ivec2 pick;
layout(location = 0) out vec4 color;
void main() {
    vec4 a = texture(tex[pick.x], uv); vec4 b = texture(tex[pick.y], uv); color = a + b;
}
"""
ONE_LINE_TEXT = (
    "    vec4 a = texture(tex[pick.x], uv); vec4 b = texture(tex[pick.y], uv); color = a + b;"
)


def samples(words: list[int]) -> list[int]:
    return instruction_indices(words, Op.ImageSampleImplicitLod)


def test_single_file_with_g() -> None:
    words = compile_glsl(FACE, "frag", debug="g", source_name="face.frag")
    (index,) = samples(words)
    info = ShaderInfo(words)
    assert info.location(index) == SourceLocation("face.frag", 8, 0, FACE_LINE)


def test_line_directives_with_file_names_find_the_included_file() -> None:
    words = compile_glsl(INCLUDED, "frag", debug="g", source_name="main.frag")
    info = ShaderInfo(words)
    main_sample, shadow_sample = samples(words)  # glslang emits main first
    assert info.location(main_sample) == SourceLocation(
        "main.frag", 13, 0, "    vec4 surface = texture(sampler2D(albedo[material], linear), uv);"
    )
    assert info.location(shadow_sample) == SourceLocation(
        "lighting.glsl", 3, 0, "    return texture(shadows[cascade], at).r;"
    )


def test_line_directives_without_file_names() -> None:
    """The corpus shader numbers its lines with ``#line 100``, ``#line 200 1``, ``#line 300``."""
    path = CORPUS_DIR / "line_directives_multi_statement.frag"
    words = compile_glsl(path, debug="g")
    source = path.read_text().splitlines()
    info = ShaderInfo(words)
    loop_sample, tail_sample = samples(words)
    loop = info.location(loop_sample)
    tail = info.location(tail_sample)
    assert loop == SourceLocation("line_directives_multi_statement.frag", 202, 0, source[11])
    assert "texture(layers[i], uv)" in source[11]
    assert tail == SourceLocation("line_directives_multi_statement.frag", 300, 0, source[13])
    assert "texture(layers[params.first], uv * 2.0)" in source[13]


def test_statements_sharing_a_line_share_its_text_and_keep_their_columns() -> None:
    words = compile_glsl(ONE_LINE, "frag", debug="g", source_name="pair.frag")
    first, second = samples(words)
    info = ShaderInfo(words)
    assert info.location(first) == info.location(second)
    assert info.location(first) == SourceLocation("pair.frag", 7, 0, ONE_LINE_TEXT)
    # glslang 12 writes column 0 inside functions; a compiler that writes columns gets them
    # reported: give the second statement its own OpLine with a column.
    module = read(words)
    file_id = next(item.operands[0] for item in module.debug_sources if item.opcode == Op.String)
    for block in module.functions[0].blocks:
        for at, item in enumerate(block.instructions):
            if item.opcode == Op.ImageSampleImplicitLod and item.origin == second:
                block.instructions.insert(at - 2, Instruction(Op.Line, [file_id, 7, 40]))
                break
    edited = write(module)
    spirv_val(edited)
    info = ShaderInfo(edited)
    first, second = samples(edited)
    assert info.location(first) == SourceLocation("pair.frag", 7, 0, ONE_LINE_TEXT)
    assert info.location(second) == SourceLocation("pair.frag", 7, 40, ONE_LINE_TEXT)


def test_source_without_any_line_directive_is_indexed_directly() -> None:
    """With ``--target-env`` glslang embeds the text as written, without a ``#line``; the 2019
    layer gave up there ("Unable to find suitable #line directive")."""
    words = compile_glsl(FACE, "frag", debug="g", source_name="face.frag")
    (source,) = [item for item in read(words).debug_sources if item.opcode == Op.Source]
    assert source.string(3) == FACE
    (index,) = samples(words)
    assert ShaderInfo(words).location(index) == SourceLocation("face.frag", 8, 0, FACE_LINE)


def test_comment_prefix_and_line_1_directive_of_plain_glslang() -> None:
    """Without ``--target-env``, glslang prefixes OpModuleProcessed comments and ``#line 1``."""
    module = read(compile_glsl(FACE, "frag", debug="g", source_name="face.frag"))
    (source,) = [item for item in module.debug_sources if item.opcode == Op.Source]
    prefix = "// OpModuleProcessed client vulkan100\n// OpModuleProcessed entry-point main\n"
    source.operands[3:] = encode_string(prefix + "#line 1\n" + FACE)
    words = write(module)
    spirv_val(words)
    (index,) = samples(words)
    assert ShaderInfo(words).location(index) == SourceLocation("face.frag", 8, 0, FACE_LINE)


def test_debug_info_100_lines_without_embedded_text() -> None:
    """``-gV``: DebugLine gives the file and line; this glslang embeds no source text."""
    words = compile_glsl(INCLUDED, "frag", debug="gV", source_name="main.frag")
    info = ShaderInfo(words)
    main_sample, shadow_sample = samples(words)
    assert info.location(main_sample) == SourceLocation("main.frag", 13, 0, None)
    assert info.location(shadow_sample) == SourceLocation("lighting.glsl", 3, 0, None)


def test_debug_info_100_with_embedded_source_text() -> None:
    """``-gVS``: the text comes from DebugSource (there is no OpSource text)."""
    words = compile_with_source_debug_info(FACE, "face.frag")
    assert not any(
        item.opcode == Op.Source and len(item.operands) > 3 for item in read(words).debug_sources
    )
    (index,) = samples(words)
    assert ShaderInfo(words).location(index) == SourceLocation("face.frag", 8, 0, FACE_LINE)


def test_no_debug_info_gives_the_instruction_as_spirv_dis_prints_it() -> None:
    words = compile_glsl(FACE, "frag")
    (index,) = samples(words)
    info = ShaderInfo(words)
    assert not info.has_line_info
    assert info.location(index) is None
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "face.spv"
        path.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
        listing = subprocess.run(
            [tool("spirv-dis"), "--no-header", str(path)], capture_output=True, text=True
        ).stdout.splitlines()
    assert info.instruction_text(index) == listing[index].strip()
    assert "OpImageSampleImplicitLod" in listing[index]


def test_out_of_range_indices_have_no_location() -> None:
    words = compile_glsl(FACE, "frag", debug="g", source_name="face.frag")
    info = ShaderInfo(words)
    count = len(info.instructions)
    for index in (-1, count, count + 100, 2**32 - 1):
        assert info.location(index) is None
        assert info.instruction_text(index) is None
        assert info.descriptor(index) is None


def test_malformed_words_are_reported_not_raised() -> None:
    info = ShaderInfo([0x07230203, 0x10000, 0, 10, 0, 0xFFFF0011])
    assert info.error is not None and "invalid SPIR-V" in info.error
    assert info.location(0) is None and info.instruction_text(0) is None


def test_shader_info_is_built_once_per_shader() -> None:
    words = compile_glsl(FACE, "frag", debug="g", source_name="face.frag")
    assert shader_info(words) is shader_info(tuple(words))
    assert shader_info(words) is not shader_info(compile_glsl(FACE, "frag"))


def test_line_directive_rules_on_plain_text() -> None:
    text = '#line 1\na\nb\n#line 10 "inc.h"\nc\nd\n#line 4\ne\n#line 3 2\nf\n'
    source = SourceText.parse("main.c", text)
    assert source.line_text("main.c", 1) == "a"
    assert source.line_text("main.c", 2) == "b"
    assert source.line_text("inc.h", 10) == "c"
    assert source.line_text("inc.h", 11) == "d"
    # ``#line 4`` names no file: it continues inc.h (the preprocessor's rule).
    assert source.line_text("inc.h", 4) == "e"
    # A numeric second argument is a source-string number, not a file name.
    assert source.line_text("inc.h", 3) == "f"
    assert source.line_text("main.c", 10) is None
    assert source.line_text("other.h", 1) is None
    assert source.line_text("main.c", 0) is None
    # Lines past the text, and lines that land on a directive, are not invented.
    assert source.line_text("inc.h", 40) is None
    assert source.line_text("main.c", 3) is None
    plain = SourceText.parse("x.frag", "one\ntwo\r\nthree")
    assert plain.line_text("x.frag", 2) == "two"
    assert plain.line_text(None, 3) == "three"
    assert plain.line_text("y.frag", 1) is None


def test_lines_before_the_first_directive_count_from_one() -> None:
    source = SourceText.parse("m.frag", "#version 450\nvoid f();\n#line 50\nvoid g();\n")
    assert source.line_text("m.frag", 2) == "void f();"
    assert source.line_text("m.frag", 50) == "void g();"
    assert source.line_text("m.frag", 3) is None


def test_the_cache_is_bounded() -> None:
    from gpuav.report import shader_info as module

    module.clear_cache()
    kept = [(0x07230203, 0x10000, 0, number, 0) for number in range(module.CACHED_SHADERS + 10)]
    infos = [shader_info(words) for words in kept]
    assert len(module._by_identity) == module.CACHED_SHADERS
    assert module._cached.cache_info().currsize == module.CACHED_SHADERS
    assert shader_info(kept[-1]) is infos[-1]
