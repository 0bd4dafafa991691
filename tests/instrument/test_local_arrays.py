"""Local-array checks on lavapipe: indices into Function, Private and Workgroup arrays, arrays
of arrays, struct members, vectors, matrix columns and specialization-constant lengths are
compared with their lengths. Exact records for in range, one past the end, far out and
negative indices; a failing load gives zero, a failing store does nothing; correct programs
give bit-identical results. Every emitted module passes spirv-val."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from gpuav.instrument import record
from gpuav.instrument.api import instrument_shader
from gpuav.instrument.descriptor_state import region_words
from gpuav.instrument.record import ErrorCode, ErrorRecord, Stage, pack_compute_yz
from gpuav.spirv import read
from gpuav.spirv.grammar import Op
from tests.harness import Binding, DescriptorSetSpec, VulkanContext
from tests.instrument.util import DEBUG_SET, SHADER_ID, bound_sets_area, load_origins, origins
from tests.shaders.glsl import compile_glsl, spirv_val

pytestmark = pytest.mark.vulkan

LOCAL = ErrorCode.LOCAL_INDEX_OUT_OF_BOUNDS
SIGNED = record.LOCAL_SIGNED

# One index per invocation: in range, the last element, one past the end of each array, far
# out and negative.
INDICES = [0, 3, 4, 5, 8, 100, -1, 7]

STORAGE_CLASSES = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Indices { int index[8]; } indices;
layout(set = 0, binding = 1) buffer Out { float o[8]; } o;
float table[4];
shared float tile[8];
void main() {
    uint x = gl_GlobalInvocationID.x;
    int at = indices.index[x];
    float weights[5];
    for (int k = 0; k < 5; ++k) weights[k] = float(k + 1);
    for (int k = 0; k < 4; ++k) table[k] = 100.0 + float(k);
    tile[x] = 10.0 * float(x);
    barrier();
    float sum = weights[at];
    sum += tile[at];
    sum += table[at];
    o.o[x] = sum;
    weights[at] = 0.5;
    o.o[x] += weights[4];
}
"""


def _instrument(words: list[int], descriptor_state: bool = False) -> list[int]:
    out = instrument_shader(
        words, shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=descriptor_state
    )
    spirv_val(out, "vulkan1.2")
    return out


def _run(
    vk: VulkanContext,
    words: list[int],
    indices: list[int],
    outputs: int = 8,
    specialization: dict[int, int] | None = None,
) -> tuple[list[float], list[ErrorRecord]]:
    out = vk.buffer(4 * outputs)
    debug = vk.debug_buffer(capacity_words=2048)
    app = [
        Binding(0, "storage_buffer", [vk.buffer(data=np.array(indices, np.int32))]),
        Binding(1, "storage_buffer", [out]),
    ]
    # The descriptor state of set 0 (ranges unknown), for modules instrumented with it.
    state = np.array(region_words({0: 1, 1: 1}), np.uint32)
    bound = bound_sets_area(state, 0)
    ours = DescriptorSetSpec(
        [
            debug.binding(),
            Binding(1, "uniform_buffer", [vk.buffer(data=bound)]),
            Binding(2, "storage_buffer", [vk.buffer(data=state)]),
        ]
    )
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours}, specialization=specialization)
    records = sorted(debug.records(), key=lambda r: (r.instruction_index, r.stage_words))
    return result.buffer(out, np.float32).tolist(), records


def _local(instruction: int, x: int, where: int, index: int, length: int) -> ErrorRecord:
    return ErrorRecord(
        SHADER_ID,
        instruction,
        Stage.COMPUTE,
        (x, pack_compute_yz(0, 0)),
        LOCAL,
        where,
        details=(index & 0xFFFF_FFFF, length),
    )


def _sorted(records: list[ErrorRecord]) -> list[ErrorRecord]:
    return sorted(records, key=lambda r: (r.instruction_index, r.stage_words, r.details))


def _stores_through(words: list[int], variable_name: str) -> list[int]:
    """Original indices of the OpStores through an access chain into the named variable."""
    module = read(words)
    variable = next(
        i.operands[0]
        for i in module.debug_names
        if i.opcode == Op.Name and i.string(1) == variable_name
    )
    chains = {
        i.operands[1]
        for i in module.instructions()
        if i.opcode == Op.AccessChain and i.operands[2] == variable
    }
    return [
        i.origin
        for i in module.instructions()
        if i.opcode == Op.Store and i.operands[0] in chains and i.origin is not None
    ]


@pytest.mark.parametrize("descriptor_state", [False, True])
def test_function_private_and_workgroup_arrays(vk: VulkanContext, descriptor_state: bool) -> None:
    words = compile_glsl(STORAGE_CLASSES, "comp", target_env="vulkan1.2")
    out, records = _run(vk, _instrument(words, descriptor_state), INDICES)
    weights_load, weights_last = load_origins(words, "weights")
    (tile_load,) = load_origins(words, "tile")
    (table_load,) = load_origins(words, "table")
    weights_store = _stores_through(words, "weights")[1]  # after the loop's store
    expected = []
    for x, at in enumerate(INDICES):
        for instruction, length in (
            (weights_load, 5),
            (tile_load, 8),
            (table_load, 4),
            (weights_store, 5),
        ):
            if not 0 <= at < length:
                expected.append(_local(instruction, x, SIGNED, at, length))
    assert _sorted(records) == _sorted(expected)
    assert all(r.instruction_index != weights_last for r in records)
    # Out-of-range loads gave zero and the out-of-range store wrote nothing: weights[4] stays
    # 5.0 unless at == 4 wrote 0.5 there.
    table = [100.0 + k for k in range(4)]
    for x, at in enumerate(INDICES):
        value = (at + 1.0 if 0 <= at < 5 else 0.0) + (10.0 * at if 0 <= at < 8 else 0.0)
        value += table[at] if 0 <= at < 4 else 0.0
        value += 0.5 if at == 4 else 5.0
        assert out[x] == np.float32(value), (x, at)


def test_correct_program_is_bit_identical_and_silent(vk: VulkanContext) -> None:
    words = compile_glsl(STORAGE_CLASSES, "comp", target_env="vulkan1.2")
    inside = [3, 2, 1, 0, 0, 1, 2, 3]
    plain, _ = _run(vk, words, inside)
    checked, records = _run(vk, _instrument(words), inside)
    assert records == []
    assert np.array_equal(np.array(plain, np.float32), np.array(checked, np.float32))


NESTED = """#version 450
layout(local_size_x = 8) in;
layout(constant_id = 0) const int N = 6;
layout(set = 0, binding = 0) readonly buffer Indices { int index[8]; } indices;
layout(set = 0, binding = 1) buffer Out { float o[48]; } o;
struct Particle { vec4 position; float history[3]; };
void main() {
    uint x = gl_GlobalInvocationID.x;
    int at = indices.index[x];
    float grid[2][3];
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) grid[r][c] = float(10 * r + c);
    Particle p;
    p.position = vec4(1.0, 2.0, 3.0, 4.0);
    p.history[0] = 7.0; p.history[1] = 8.0; p.history[2] = 9.0;
    mat3 m = mat3(1.0);
    float sized[N];
    for (int k = 0; k < N; ++k) sized[k] = float(k);
    vec4 v = p.position * float(x + 1u);
    o.o[6 * x + 0] = grid[1][at];
    o.o[6 * x + 1] = grid[at][0];
    o.o[6 * x + 2] = p.position[at] + p.history[at];
    o.o[6 * x + 3] = m[at].y;
    o.o[6 * x + 4] = sized[at];
    o.o[6 * x + 5] = v[at];
}
"""


def load_through(words: list[int], name: str, pattern: tuple[int | None, ...]) -> int:
    """The original index of the one OpLoad through an access chain into variable ``name``
    whose indices are ``pattern`` (constant values, None for a dynamic index)."""
    module = read(words)
    names = {i.operands[0]: i.string(1) for i in module.debug_names if i.opcode == Op.Name}
    constants = {i.operands[1]: i.operands[2] for i in module.globals if i.opcode == Op.Constant}
    chains = {
        i.operands[1]
        for i in module.instructions()
        if i.opcode == Op.AccessChain
        and names.get(i.operands[2]) == name
        and tuple(constants.get(index) for index in i.operands[3:]) == pattern
    }
    found = [
        i.origin
        for i in module.instructions()
        if i.opcode == Op.Load and i.operands[2] in chains and i.origin is not None
    ]
    assert len(found) == 1, (name, pattern, found)
    return found[0]


def test_nested_levels_vectors_matrices_and_specialization_lengths(vk: VulkanContext) -> None:
    words = compile_glsl(NESTED, "comp", target_env="vulkan1.2")
    # (load, where, length, the value an in-range index reads, for invocation x and index at)
    checked = [
        (load_through(words, "grid", (1, None)), SIGNED | 1, 3, lambda x, at: 10.0 + at),
        (load_through(words, "grid", (None, 0)), SIGNED, 2, lambda x, at: 10.0 * at),
        (load_through(words, "p", (0, None)), SIGNED | 1, 4, lambda x, at: at + 1.0),
        (load_through(words, "p", (1, None)), SIGNED | 1, 3, lambda x, at: 7.0 + at),
        (load_through(words, "m", (None, 1)), SIGNED, 3, lambda x, at: float(at == 1)),
        (load_through(words, "sized", (None,)), SIGNED, 5, lambda x, at: float(at)),
        (load_through(words, "v", (None,)), SIGNED, 4, lambda x, at: (at + 1.0) * (x + 1)),
    ]
    out, records = _run(vk, _instrument(words), INDICES, outputs=48, specialization={0: 5})
    expected = [
        _local(load, x, where, at, length)
        for x, at in enumerate(INDICES)
        for load, where, length, _ in checked
        if not 0 <= at < length
    ]
    assert _sorted(records) == _sorted(expected)
    # Each output sums what its loads read; out-of-range loads read zero.
    slots = [[0], [1], [2, 3], [4], [5], [6]]
    for x, at in enumerate(INDICES):
        for k, loads in enumerate(slots):
            value = sum(checked[i][3](x, at) if 0 <= at < checked[i][2] else 0.0 for i in loads)
            assert out[6 * x + k] == np.float32(value), (x, at, k)


ATOMICS_AND_VALUES = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Indices { int index[8]; } indices;
layout(set = 0, binding = 1) buffer Out { float o[8]; } o;
shared uint counters[4];
const float kWeights[4] = float[](1.0, 2.0, 3.0, 4.0);
void main() {
    uint x = gl_GlobalInvocationID.x;
    int at = indices.index[x];
    if (x < 4u) counters[x] = 0u;
    barrier();
    atomicAdd(counters[at], 1u);
    barrier();
    o.o[x] = kWeights[at] + (vec3(float(x), 2.0, 3.0) + 1.0)[at] + 100.0 * float(counters[x & 3u]);
}
"""


def test_atomics_constant_arrays_and_dynamic_vector_extracts(vk: VulkanContext) -> None:
    words = compile_glsl(ATOMICS_AND_VALUES, "comp", target_env="vulkan1.2")
    (atomic,) = origins(words, Op.AtomicIAdd)
    (constant,) = load_origins(words, "indexable")  # glslang's Function copy of kWeights
    (extract,) = origins(words, Op.VectorExtractDynamic)
    out, records = _run(vk, _instrument(words), INDICES)
    expected = [
        _local(instruction, x, SIGNED, at, length)
        for x, at in enumerate(INDICES)
        for instruction, length in ((atomic, 4), (constant, 4), (extract, 3))
        if not 0 <= at < length
    ]
    assert _sorted(records) == _sorted(expected)
    counts = [sum(1 for at in INDICES if at == k) for k in range(4)]
    for x, at in enumerate(INDICES):
        value = (at + 1.0 if 0 <= at < 4 else 0.0) + 100.0 * counts[x & 3]
        value += [x + 1.0, 3.0, 4.0][at] if 0 <= at < 3 else 0.0
        assert out[x] == np.float32(value), (x, at)


def test_modules_without_dynamic_local_indices_get_no_local_helper() -> None:
    words = compile_glsl(
        """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Out { float o[4]; } o;
void main() { float a[4] = float[](1.0, 2.0, 3.0, 4.0); vec4 v = vec4(a[1]); o.o[2] = v[3]; }
""",
        "comp",
        target_env="vulkan1.2",
    )
    assert instrument_shader(words, shader_id=1, descriptor_set=DEBUG_SET) == words
    checked = _instrument(words, descriptor_state=True)
    names = [i.string(1) for i in read(checked).debug_names if i.opcode == Op.Name]
    assert "gpuav_report_local_index" not in names
    assert "gpuav_write_local_record" not in names


def test_a_module_with_only_local_arrays_is_instrumented() -> None:
    words = compile_glsl(
        """#version 450
layout(location = 0) flat in int at;
layout(location = 0) out vec4 color;
void main() { float a[2] = float[](0.25, 0.5); color = vec4(a[at]); }
""",
        "frag",
        target_env="vulkan1.2",
    )
    checked = _instrument(words)
    names = [i.string(1) for i in read(checked).debug_names if i.opcode == Op.Name]
    assert "gpuav_report_local_index" in names


LOCAL_VERT = """#version 450
layout(push_constant) uniform P { int bad_vertex; int bad_index; } p;
void main() {
    vec2 corners[3] = vec2[](vec2(-1.0, -1.0), vec2(3.0, -1.0), vec2(-1.0, 3.0));
    int k = gl_VertexIndex == p.bad_vertex ? p.bad_index : gl_VertexIndex;
    gl_Position = vec4(corners[k], 0.0, 1.0);
}
"""
LOCAL_FRAG = """#version 450
layout(push_constant) uniform P { layout(offset = 8) uvec2 target; int bad_index; } p;
layout(location = 0) out vec4 color;
void main() {
    float shades[4] = float[](0.25, 0.5, 0.75, 1.0);
    uvec2 pixel = uvec2(gl_FragCoord.xy);
    int k = pixel == p.target ? p.bad_index : int(pixel.x & 3u);
    color = vec4(shades[k], 0.0, 0.0, 1.0);
}
"""


def _draw(
    vk: VulkanContext, vert: list[int], frag: list[int], push: tuple[int, ...]
) -> tuple[np.ndarray, list[ErrorRecord]]:
    debug = vk.debug_buffer(capacity_words=256)
    result = vk.run_graphics(
        vert,
        frag,
        debug.sets(),
        width=8,
        height=8,
        push_constants=struct.pack("<iiIIi", *push),
    )
    return result.color, debug.records()


@pytest.mark.parametrize("bad_index", [4, 1000, -1])
def test_vertex_and_fragment_stages(vk: VulkanContext, bad_index: int) -> None:
    vert = compile_glsl(LOCAL_VERT, "vert", target_env="vulkan1.2")
    frag = compile_glsl(LOCAL_FRAG, "frag", target_env="vulkan1.2")
    # The fragment at pixel (2, 3) reads shades[bad_index] (4: one past the end); vertex 0
    # reads corners[bad_index] in a second draw (its triangle then has a corner at 0, 0).
    color, records = _draw(vk, vert, _instrument(frag), (-1, 0, 2, 3, bad_index))
    x_bits, y_bits = struct.unpack("<II", struct.pack("<ff", 2.5, 3.5))
    (shade,) = load_origins(frag, "shades")
    assert records == [
        ErrorRecord(
            SHADER_ID,
            shade,
            Stage.FRAGMENT,
            (x_bits, y_bits),
            LOCAL,
            SIGNED,
            details=(bad_index & 0xFFFF_FFFF, 4),
        )
    ]
    assert color[3, 2].tolist() == [0, 0, 0, 255]  # the skipped load gave 0.0
    assert color[3, 3].tolist() == [255, 0, 0, 255]
    _, records = _draw(vk, _instrument(vert), frag, (0, bad_index, 9, 9, 0))
    (corner,) = load_origins(vert, "corners")
    assert records == [
        ErrorRecord(
            SHADER_ID,
            corner,
            Stage.VERTEX,
            (0, 0),
            LOCAL,
            SIGNED,
            details=(bad_index & 0xFFFF_FFFF, 3),
        )
    ]


def test_graphics_in_range_images_are_identical(vk: VulkanContext) -> None:
    vert = compile_glsl(LOCAL_VERT, "vert", target_env="vulkan1.2")
    frag = compile_glsl(LOCAL_FRAG, "frag", target_env="vulkan1.2")
    plain, _ = _draw(vk, vert, frag, (0, 0, 2, 3, 1))
    checked, records = _draw(vk, _instrument(vert), _instrument(frag), (0, 0, 2, 3, 1))
    assert records == []
    assert np.array_equal(plain, checked)
