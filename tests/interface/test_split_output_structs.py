"""The split-output-structs pass on glslang-compiled shaders: nested structs, arrays inside
structs, 64-bit members, blocks with member locations, partial access chains, whole-struct
loads and stores; what it leaves alone and what it declines. Every result passes spirv-val."""

from __future__ import annotations

import pytest

from gpuav.errors import UnsupportedShader
from gpuav.spirv import read, write
from gpuav.spirv.grammar import Op
from gpuav.transform.split_output_structs import split_output_structs, split_output_structs_words
from gpuav.validate.interface import InterfaceVariable, analyze_interfaces
from tests.shaders.glsl import CorpusShader, compile_glsl, corpus_shaders, spirv_val
from tests.validate.asm import assemble

OUTPUT = 3  # StorageClass.Output


def _split(words: list[int], target_env: str = "vulkan1.1") -> list[int]:
    result = split_output_structs_words(words)
    spirv_val(result, target_env)  # type: ignore[arg-type]
    return result


def _outputs(words: list[int]) -> list[InterfaceVariable]:
    (entry,) = analyze_interfaces(read(words))
    return entry.user(OUTPUT)


def _placement(words: list[int]) -> dict[str, tuple[int | None, int | None, int]]:
    return {v.name: (v.location, v.component, v.locations_used) for v in _outputs(words)}


NESTED = """#version 450
struct Inner { dvec3 p; float q[3]; };
struct Outer { vec2 a; Inner inner; mat3 m; int flags[2]; };
layout(location = 1) flat out Outer o;
layout(location = 0) out vec4 plain;
layout(location = 0) in vec4 position;
void main() {
    o.a = position.xy;
    o.inner.p = dvec3(position.xyz);
    for (int i = 0; i < 3; ++i) o.inner.q[i] = position[i];   // dynamic index into a leaf
    o.m = mat3(position.x);
    o.flags[gl_VertexIndex % 2] = gl_VertexIndex;
    plain = position;
    gl_Position = position;
}
"""


def test_nested_struct_with_arrays_and_doubles() -> None:
    before = compile_glsl(NESTED, "vert")
    after = _split(before)
    assert _placement(after) == {
        "plain": (0, None, 1),
        "o.a": (1, None, 1),
        "o.inner.p": (2, None, 2),
        "o.inner.q": (4, None, 3),
        "o.m": (7, None, 3),
        "o.flags": (10, None, 2),
    }
    # Every slot of the old variable is still written, by exactly one new variable.
    old = {s for v in _outputs(before) for s in v.slots}
    new = {s for v in _outputs(after) for s in v.slots}
    assert old == new
    module = read(after)
    names = [i.string(1) for i in module.debug_names if i.opcode == Op.Name]
    assert "o" not in names
    # Flat travels from the struct variable to every leaf.
    flat_targets = {
        i.operands[0] for i in module.annotations if i.opcode == Op.Decorate and i.operands[1] == 14
    }
    assert {v.variable for v in _outputs(after) if v.name.startswith("o.")} <= flat_targets


def test_whole_struct_store_and_load_are_rewritten() -> None:
    source = """#version 450
    struct S { vec4 a; double b; ivec2 c; };
    layout(location = 0) flat out S s;
    layout(location = 4) out vec4 echo;
    layout(set = 0, binding = 0) uniform U { S value; } u;
    void main() {
        s = u.value;                 // OpStore of a whole struct
        S copy = s;                  // OpLoad of a whole struct (outputs may be read)
        echo = copy.a + vec4(float(copy.b), vec2(copy.c), 0.0);
    }
    """
    after = _split(compile_glsl(source, "vert"))
    assert _placement(after) == {
        "echo": (4, None, 1),
        "s.a": (0, None, 1),
        "s.b": (1, None, 1),
        "s.c": (2, None, 1),
    }
    opcodes = [i.opcode for f in read(after).functions for b in f.blocks for i in b.instructions]
    assert opcodes.count(Op.CompositeExtract) >= 3
    assert Op.CompositeConstruct in opcodes


def test_block_members_keep_their_locations_and_xfb_offsets() -> None:
    source = """#version 450
    layout(xfb_buffer = 1, xfb_stride = 48) out Block {
        layout(location = 3, xfb_offset = 0) vec4 x;
        layout(location = 1, xfb_offset = 16) dvec2 y;
        layout(location = 7, xfb_offset = 32) vec3 z;
    } block;
    void main() { block.x = vec4(1.0); block.y = dvec2(2.0); block.z = vec3(3.0); }
    """
    after = _split(compile_glsl(source, "vert"))
    outputs = {v.name: v for v in _outputs(after)}
    assert {n: (v.location, v.xfb) for n, v in outputs.items()} == {
        "block.x": (3, {"XfbBuffer": 1, "XfbStride": 48, "Offset": 0}),
        "block.y": (1, {"XfbBuffer": 1, "XfbStride": 48, "Offset": 16}),
        "block.z": (7, {"XfbBuffer": 1, "XfbStride": 48, "Offset": 32}),
    }


def test_corpus_struct_block_with_double_members() -> None:
    shader = next(s for s in corpus_shaders() if s.name == "xfb_struct_double_locations.vert")
    after = _split(shader.compile())
    placement = {v.name: (v.location, v.xfb.get("Offset")) for v in _outputs(after)}
    assert placement == {
        "captured.frame.origin": (0, 0),
        "captured.frame.basis": (2, 24),
        "captured.frame.weight": (8, 120),
        "captured.id": (9, 128),
        "preciseXy": (14, 0),
    }


def test_left_alone_builtin_blocks_single_location_structs_and_arrays() -> None:
    source = """#version 450
    struct One { float x; };
    struct Two { vec4 a; vec4 b; };
    layout(location = 0) out One one;
    layout(location = 1) out Two pair[2];
    void main() { one.x = 1.0; pair[1].b = vec4(2.0); gl_Position = vec4(0.0); }
    """
    before = compile_glsl(source, "vert")
    assert split_output_structs_words(before) == before


def test_split_is_idempotent_and_keeps_inputs() -> None:
    source = """#version 450
    struct S { vec4 a; vec4 b; };
    layout(location = 0) in vec4 position;
    layout(location = 0) out S s;
    void main() { s.a = position; s.b = position * 2.0; }
    """
    once = _split(compile_glsl(source, "vert"))
    assert split_output_structs_words(once) == once
    (entry,) = analyze_interfaces(read(once))
    assert [v.name for v in entry.user(1)] == ["position"]


def test_tessellation_and_geometry_stages() -> None:
    geometry = """#version 450
    layout(points) in;
    layout(points, max_vertices = 1) out;
    struct V { vec3 n; float w; dvec2 d; };
    layout(location = 2) flat out V v;
    void main() { v.n = vec3(1.0); v.w = 2.0; v.d = dvec2(3.0); EmitVertex(); }
    """
    after = _split(compile_glsl(geometry, "geom"))
    assert _placement(after) == {"v.n": (2, None, 1), "v.w": (3, None, 1), "v.d": (4, None, 1)}


def test_uses_it_cannot_rewrite_are_declined() -> None:
    text = """
    OpCapability Shader
    OpMemoryModel Logical GLSL450
    OpEntryPoint Vertex %main "main" %s
    OpDecorate %s Location 0
    %void = OpTypeVoid
    %fn = OpTypeFunction %void
    %float = OpTypeFloat 32
    %v4 = OpTypeVector %float 4
    %S = OpTypeStruct %v4 %v4
    %ptr = OpTypePointer Output %S
    %s = OpVariable %ptr Output
    %main = OpFunction %void None %fn
    %entry = OpLabel
    %copy = OpCopyObject %ptr %s
    OpReturn
    OpFunctionEnd
    """
    words = assemble(text)
    with pytest.raises(UnsupportedShader):
        split_output_structs(read(words))
    # Declined before anything changed: the module still writes back to the same words.
    module = read(words)
    with pytest.raises(UnsupportedShader):
        split_output_structs(module)
    assert write(module)[5:] == words[5:]


def test_debug_info_naming_the_variable_is_declined() -> None:
    source = """#version 450
    struct S { vec4 a; vec4 b; };
    layout(location = 0) out S s;
    void main() { s.a = vec4(1.0); s.b = vec4(2.0); }
    """
    words = compile_glsl(source, "vert", debug="gV")
    with pytest.raises(UnsupportedShader, match="outside a function"):
        split_output_structs_words(words)


def test_malformed_input_raises_only_project_errors() -> None:
    words = compile_glsl(NESTED, "vert")
    module = read(words)
    # Point the struct output at a type id that does not exist.
    for instruction in module.globals:
        if instruction.opcode == Op.TypePointer and instruction.operands[1] == OUTPUT:
            instruction.operands[2] = module.bound + 7
    with pytest.raises(UnsupportedShader):
        split_output_structs(module)


@pytest.mark.parametrize("shader", corpus_shaders(), ids=lambda shader: shader.name)
def test_every_corpus_shader_splits_to_a_valid_module(shader: CorpusShader) -> None:
    """Split whatever the corpus offers; the result validates and keeps every output slot."""
    words = shader.compile()
    env = shader.target_env
    after = split_output_structs_words(words)
    spirv_val(after, env)
    before_entries, after_entries = analyze_interfaces(read(words)), analyze_interfaces(read(after))
    for before, split in zip(before_entries, after_entries, strict=True):
        for storage_class in (1, OUTPUT):
            old = sorted(s for v in before.user(storage_class) for s in v.slots)
            new = sorted(s for v in split.user(storage_class) for s in v.slots)
            assert old == new, (before.name, storage_class)
        # No struct output spanning several locations is left, per-vertex arrays aside.
        assert not [
            v.name
            for v in split.user(OUTPUT)
            if v.members and v.locations_used > 1 and not v.per_vertex
        ]


def test_partial_struct_stores_loads_and_struct_array_leaves() -> None:
    source = """#version 450
    struct Inner { vec2 uv; float w[3]; };
    struct Outer { vec4 c; Inner inner; Inner more[2]; };
    layout(location = 0) out Outer o;
    layout(location = 0) in vec4 p;
    void main() {
        Inner t; t.uv = p.xy; t.w = float[3](p.x, p.y, p.z);
        o.inner = t;                 // store through a chain that stops at a struct
        Inner back = o.inner;        // load of a sub-struct, rebuilt from its leaves
        o.c = vec4(back.uv, back.w[int(p.w) % 3], 1.0);
        o.more[int(p.x)] = back;     // an array of structs stays one leaf variable
        o.more[1].w[int(p.y) % 3] = 5.0;
    }
    """
    after = _split(compile_glsl(source, "vert"))
    assert _placement(after) == {
        "o.c": (0, None, 1),
        "o.inner.uv": (1, None, 1),
        "o.inner.w": (2, None, 3),
        "o.more": (5, None, 8),
    }
