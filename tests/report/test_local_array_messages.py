"""Local-array messages: the variable, its type and storage class, the indexed level, the index
and length, what was skipped, the source line; and the same facts as JSON fields."""

from __future__ import annotations

import pytest

from gpuav.instrument.record import (
    LOCAL_SIGNED,
    LOCAL_WIDE,
    ErrorCode,
    ErrorRecord,
    Stage,
    pack_compute_yz,
)
from gpuav.report.context import ActionContext, ShaderContext
from gpuav.report.messages import Message, compose_messages
from gpuav.spirv import read
from gpuav.spirv.grammar import Op
from tests.instrument.test_local_arrays import load_through
from tests.instrument.util import origins
from tests.shaders.glsl import DebugMode, compile_glsl

SHADER_ID = 17
SOURCE = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Indices { int index[8]; } indices;
layout(set = 0, binding = 1) buffer Out { float o[8]; } o;
struct Particle { vec4 position; float history[3]; };
float table[4];
shared float tile[8];
const float kWeights[2] = float[](0.5, 0.25);
void main() {
    int at = indices.index[gl_GlobalInvocationID.x];
    float weights[8];
    float grid[2][3];
    Particle p;
    o.o[0] = weights[at];
    o.o[1] = grid[1][at];
    o.o[2] = p.history[at];
    tile[at] = 1.0;
    o.o[3] = table[at] + p.position[at];
    o.o[4] = (vec3(1.0) + 1.0)[at] + kWeights[at];
}
"""


def _words(debug: DebugMode = "g") -> list[int]:
    return compile_glsl(
        SOURCE, "comp", debug=debug, source_name="particles.comp", target_env="vulkan1.2"
    )


def _message(words: list[int], instruction: int, where: int, index: int, length: int) -> Message:
    context = ActionContext(
        0xBC24B0,
        "Sim",
        1,
        "vkCmdDispatch",
        0x45,
        "SimPipeline",
        (ShaderContext(SHADER_ID, 0x43, "particles.comp", 0x45, tuple(words)),),
    )
    record = ErrorRecord(
        SHADER_ID,
        instruction,
        Stage.COMPUTE,
        (5, pack_compute_yz(0, 0)),
        ErrorCode.LOCAL_INDEX_OUT_OF_BOUNDS,
        where,
        details=(index & 0xFFFF_FFFF, length),
    )
    (message,) = compose_messages([record, record], context)
    return message


def _tile_store(words: list[int]) -> int:
    module = read(words)
    tile = next(
        i.operands[0] for i in module.debug_names if i.opcode == Op.Name and i.string(1) == "tile"
    )
    chain = next(
        i.operands[1]
        for i in module.instructions()
        if i.opcode == Op.AccessChain and i.operands[2] == tile
    )
    return next(
        i.origin
        for i in module.instructions()
        if i.opcode == Op.Store and i.operands[0] == chain and i.origin is not None
    )


def test_whole_message_for_one_past_the_end_of_a_function_array() -> None:
    words = _words()
    load = load_through(words, "weights", (None,))
    message = _message(words, load, LOCAL_SIGNED, 8, 8)
    assert message.message_id == "GPUAV-local-array-index-out-of-bounds"
    assert message.severity.value == "error"
    assert message.count == 2
    assert message.text == (
        "Index 8 (one past the end) out of bounds of local array `weights` (float[8], Function "
        "storage). At particles.comp line 14.\n"
        "  14: o.o[0] = weights[at];\n"
        "  The array has length 8; indices run from 0 to 7.\n"
        "  The read was skipped: it gave zero.\n"
        "  Command buffer (Sim)(0xbc24b0). Dispatch Index 1 (vkCmdDispatch).\n"
        "  Pipeline (SimPipeline)(0x45). Shader Module (particles.comp)(0x43).\n"
        f"  Shader Instruction Index = {load}.\n"
        "  Stage = Compute. Global invocation ID (x, y, z) = (5, 0, 0).\n"
        "  (and 1 more invocation with this error)"
    )
    assert message.fields["error"] == {
        "code": "local-index-out-of-bounds",
        "descriptor_index": LOCAL_SIGNED,
        "array_length": 8,
        "details": [8, 8],
        "index": 8,
        "index_fits_32_bits": True,
        "level": 0,
        "access": "read",
        "indexed": {
            "kind": "array",
            "path": "weights",
            "type": "float[8]",
            "root": "weights",
            "root_kind": "variable",
            "root_type": "float[8]",
            "storage_class": "Function",
        },
    }
    assert message.fields["source"]["line"] == 14


@pytest.mark.parametrize(
    ("variable", "pattern", "where", "index", "length", "first_line", "skipped"),
    [
        (
            "grid",
            (1, None),
            LOCAL_SIGNED | 1,
            -1,
            3,
            "Index -1 out of bounds of `grid[1]` (float[3]) in local array `grid` (float[2][3], "
            "Function storage). At particles.comp line 15.",
            "The read was skipped: it gave zero.",
        ),
        (
            "p",
            (1, None),
            LOCAL_SIGNED | 1,
            3,
            3,
            "Index 3 (one past the end) out of bounds of `p.history` (float[3]) in local "
            "variable `p` (Particle, Function storage). At particles.comp line 16.",
            "The read was skipped: it gave zero.",
        ),
        (
            "table",
            (None,),
            LOCAL_SIGNED,
            100,
            4,
            "Index 100 out of bounds of private array `table` (float[4], Private storage). "
            "At particles.comp line 18.",
            "The read was skipped: it gave zero.",
        ),
        (
            "p",
            (0, None),
            LOCAL_SIGNED | 1,
            1000,
            4,
            "Index 1000 out of bounds of `p.position` (vec4) in local variable `p` (Particle, "
            "Function storage). At particles.comp line 18.",
            "The read was skipped: it gave zero.",
        ),
        (
            "indexable",
            (None,),
            LOCAL_SIGNED,
            2,
            2,
            "Index 2 (one past the end) out of bounds of local array `indexable` (float[2], "
            "Function storage, glslang's copy of a constant array). At particles.comp line 19.",
            "The read was skipped: it gave zero.",
        ),
    ],
)
def test_first_lines_name_the_level_the_variable_and_the_storage(
    variable: str,
    pattern: tuple[int | None, ...],
    where: int,
    index: int,
    length: int,
    first_line: str,
    skipped: str,
) -> None:
    words = _words()
    message = _message(words, load_through(words, variable, pattern), where, index, length)
    lines = message.text.splitlines()
    assert lines[0] == first_line
    assert lines[3] == "  " + skipped


def test_shared_array_store_with_a_wide_index_and_a_vector_value() -> None:
    words = _words()
    store = _message(words, _tile_store(words), LOCAL_SIGNED | LOCAL_WIDE, 5, 8)
    assert store.text.splitlines()[:4] == [
        "64-bit index past the 32-bit range (low word 5) out of bounds of shared array `tile` "
        "(float[8], Workgroup storage). At particles.comp line 17.",
        "  17: tile[at] = 1.0;",
        "  The array has length 8; indices run from 0 to 7.",
        "  The write was skipped.",
    ]
    assert store.fields["error"]["index_fits_32_bits"] is False
    (extract,) = origins(words, Op.VectorExtractDynamic)
    value = _message(words, extract, LOCAL_SIGNED, -2, 3)
    assert value.text.splitlines()[0] == (
        "Index -2 out of bounds of a vec3 value. At particles.comp line 19."
    )
    assert value.text.splitlines()[3] == "  The component read was skipped: it gave zero."
    assert value.fields["error"]["indexed"]["path"] is None


def test_without_debug_information_and_with_a_record_that_fits_no_access() -> None:
    words = _words("none")
    load = load_through(words, "weights", (None,))
    message = _message(words, load, LOCAL_SIGNED, 9, 8)
    assert message.text.splitlines()[0] == (
        "Index 9 out of bounds of local array `weights` (float[8], Function storage). "
        f"At SPIR-V instruction {load} (the shader has no source line information)."
    )
    # An instruction that is no local access (a corrupt or foreign record) still gets the numbers.
    (variable,) = origins(words, Op.Variable)[:1]
    fallback = _message(words, variable, 0, 4, 4)
    assert fallback.text.splitlines()[0].startswith(
        "Index 4 (one past the end) out of bounds of a local array, vector or matrix of length 4."
    )
