"""Interface rules through ``gpuav.validate.validate``, and bad input: mutated modules make the
rule family answer (never raise) and make the split pass raise only gpuav's errors."""

from __future__ import annotations

import contextlib

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuav.errors import DecodeError, GpuavError
from gpuav.spirv import read, write
from gpuav.spirv.grammar import Op
from gpuav.transform.split_output_structs import split_output_structs
from gpuav.validate.api import validate
from gpuav.validate.context import ValidationContext
from gpuav.validate.interface_rules import UNCOUNTED_RULE
from gpuav.validate.rules_interface import check
from tests.shaders.glsl import CORPUS_DIR, compile_glsl


def _corpus(name: str) -> list[int]:
    path = CORPUS_DIR / name
    return compile_glsl(path, path.suffix[1:])


SHADERS = [
    _corpus("xfb_struct_double_locations.vert"),
    _corpus("patch_struct_block_array.tesc"),
    _corpus("multiple_streams_xfb.geom"),
]


def test_interface_family_is_registered_with_validate() -> None:
    body = "".join(f"layout(location = {i}) out vec4 o{i};\n" for i in range(20))
    words = compile_glsl(f"#version 450\n{body}void main() {{}}\n", "vert")
    found = validate(words, limits={"maxVertexOutputComponents": 64})
    assert [d.rule for d in found] == ["VUID-RuntimeSpirv-Location-06272"] * 4
    assert validate(words, limits={"maxVertexOutputComponents": 128}) == []


# Each example reads, analyzes and rewrites a whole module: a few hundred are enough here
# (the reader's own fuzzing lives in tests/spirv).
@settings(max_examples=300)
@given(
    shader=st.sampled_from(range(len(SHADERS))),
    position=st.integers(min_value=5),
    value=st.integers(min_value=0, max_value=0xFFFFFFFF),
)
def test_mutated_modules(shader: int, position: int, value: int) -> None:
    words = list(SHADERS[shader])
    words[position % len(words) or 5] = value
    try:
        module = read(words)
    except DecodeError:
        return
    list(check(ValidationContext(module)))  # never raises
    with contextlib.suppress(GpuavError):
        split_output_structs(module)


def test_corrupt_counts_are_refused_not_walked() -> None:
    """A vector or matrix count of 2^20 or more (one corrupt word) made the analysis list a
    slot per component: gigabytes and minutes for one shader creation."""
    huge = 1 << 20
    for shader in SHADERS:
        module = read(shader)
        for instruction in module.globals:
            if instruction.opcode in (Op.TypeVector, Op.TypeMatrix):
                instruction.operands[2] = huge
        diagnostics = list(check(ValidationContext(read(write(module)))))
        assert diagnostics and all(d.rule == UNCOUNTED_RULE for d in diagnostics[:1])
