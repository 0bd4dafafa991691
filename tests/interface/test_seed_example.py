"""Seed 001's example: the tessellation evaluation shader with ``OuterStruct goku``.

The blog counts 22 locations because it reads ``dmat3x4`` as "effectively dvec3[4]" (four
dvec3 columns, 8 locations). In GLSL, ``dmatCxR`` has C columns of R rows, so ``dmat3x4`` is
three dvec4 columns: 6 locations, and ``goku`` as written takes 18. The blog's reading is
GLSL's ``dmat4x3``; with it ``goku`` takes the blog's 22, 23 with the point size zink always
emits. Both are tested. The 31 components per TestStruct (62 in all) agree either way.
"""

from __future__ import annotations

import pytest

from gpuav.spirv import read, write
from gpuav.transform.split_output_structs import split_output_structs
from gpuav.validate.interface import EntryPointInterface, analyze_interfaces
from tests.shaders.glsl import compile_glsl, spirv_val

SEED_SHADER = """#version 430 core
#extension GL_ARB_enhanced_layouts : require

layout(isolines, point_mode) in;

struct TestStruct {
   dmat3x4 a;
   double b;
   float c;
   dvec2 d;
};
struct OuterStruct {
    TestStruct inner_struct_a;
    TestStruct inner_struct_b;
};
layout (location = 0, xfb_offset = 0) flat out OuterStruct goku;

layout(std140, binding = 0) uniform Goku {
    TestStruct uni_goku;
};

void main()
{

    goku.inner_struct_a = uni_goku;
    goku.inner_struct_b = uni_goku;
}
"""

# zink's explicit point-size output, modelled as the one more location it takes.
POINT_SIZE = "layout(location = 22) out float zinkPointSize;\n"


def _compile(matrix: str, extra: str = "") -> list[int]:
    source = SEED_SHADER.replace("dmat3x4 a;", f"{matrix} a;")
    source = source.replace("void main()", extra + "void main()")
    if extra:
        source = source.replace(
            "goku.inner_struct_b = uni_goku;",
            "goku.inner_struct_b = uni_goku;\n    zinkPointSize = 1.0;",
        )
    return compile_glsl(source, "tese")


def _entry(words: list[int]) -> EntryPointInterface:
    (entry,) = analyze_interfaces(read(words))
    return entry


def _output_locations(entry: EntryPointInterface) -> int:
    return len({location for v in entry.user(3) for location, _ in v.slots})


@pytest.mark.parametrize(("matrix", "locations"), [("dmat3x4", 18), ("dmat4x3", 22)])
def test_goku_locations(matrix: str, locations: int) -> None:
    entry = _entry(_compile(matrix))
    (goku,) = entry.user(3)
    assert goku.name == "goku"
    assert goku.locations_used == locations
    assert goku.components_used == 62
    assert goku.xfb == {"XfbBuffer": 0, "XfbStride": 256, "Offset": 0}


def test_zink_point_size_makes_23() -> None:
    entry = _entry(_compile("dmat4x3", POINT_SIZE))
    assert _output_locations(entry) == 23
    # and 32 - 23 = 9 of the 32 guaranteed-in-GL locations remain, as the blog says
    assert 32 - _output_locations(entry) == 9


@pytest.mark.parametrize(
    ("matrix", "expected"),
    [
        ("dmat3x4", [0, 6, 7, 8, 9, 15, 16, 17]),
        ("dmat4x3", [0, 8, 9, 10, 11, 19, 20, 21]),
    ],
)
def test_split_gives_eight_outputs_at_member_locations(matrix: str, expected: list[int]) -> None:
    module = split_output_structs(read(_compile(matrix)))
    words = write(module)
    spirv_val(words)
    outputs = _entry(words).user(3)
    assert [v.name.rsplit(".", 2)[-2:] for v in outputs] == [
        [inner, member]
        for inner in ("inner_struct_a", "inner_struct_b")
        for member in ("a", "b", "c", "d")
    ]
    assert [v.location for v in outputs] == expected
    # Capture offsets follow GLSL packing: a 0, b 96, c 104, d 112 (aligned to 8), then +128.
    assert [v.xfb["Offset"] for v in outputs] == [0, 96, 104, 112, 128, 224, 232, 240]
    assert all(v.xfb["XfbBuffer"] == 0 and v.xfb["XfbStride"] == 256 for v in outputs)
    assert sum(v.locations_used for v in outputs) == expected[-1] + 1
    assert sum(v.components_used for v in outputs) == 62
