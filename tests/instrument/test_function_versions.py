"""Entry points with an unchecked copy, on lavapipe: the copy runs only where the test at the
function's start proves every check would pass, so a correct program computes what it
computes without the layer and reports nothing; where the test fails, the checked body runs
and gives exactly the records and results it gives without a copy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuav.instrument import memory_guards
from gpuav.instrument.api import instrument_module
from gpuav.instrument.descriptor_state import binding_table_word, range_word, region_words
from gpuav.instrument.record import ErrorRecord
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import Op, StorageClass
from gpuav.spirv.module import Module
from gpuav.spirv.reader import read
from gpuav.spirv.writer import write
from tests.harness import Binding, VulkanContext
from tests.instrument.util import DEBUG_SET, SHADER_ID, bound_sets_area, gpuav_set
from tests.shaders.glsl import DebugMode, compile_glsl, optimize, spirv_val

pytestmark = pytest.mark.vulkan

INVOCATIONS = 8
DATA_WORDS = 24
FRAME_LOOP = Path(__file__).parents[2] / "benchmarks" / "shaders" / "frame_loop.frag"

# Every access is provable at the start: ``at`` is a remainder of the runtime array's own
# length (stored once in a variable, as glslang leaves it), ``i & 7`` fits the fixed array,
# and ``params.pick`` is a uniform read whose value the test compares with the range.
PROVABLE = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Out { uint v[8]; } o;
layout(set = 0, binding = 2) uniform Params { uint pick; uint base; } params;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint at = (i * 7u + params.base) % uint(data.v.length());
    o.v[i & 7u] = data.v[at] * 100u + data.v[params.pick];
}
"""

# The second index is read from memory: no test can bound it.
UNBOUNDED = PROVABLE.replace("data.v[params.pick]", "data.v[data.v[i]]")

# Derivatives and a uniform block: the test must read only values that are the same in every
# invocation, or the two copies would split a quad.
DERIVATIVES = """#version 450
layout(set = 0, binding = 0) uniform sampler2D colors;
layout(set = 0, binding = 1) uniform Light { vec4 tint; float scale; } light;
layout(location = 0) in vec2 uv;
layout(location = 0) out vec4 color;
void main() {
    vec4 texel = texture(colors, uv * light.scale);
    color = texel * light.tint + vec4(dFdx(uv.x), dFdy(uv.y), 0.0, 0.0);
}
"""


def _compiled(source: str, optimized: bool = False, debug: DebugMode = "none") -> list[int]:
    words = compile_glsl(source, "comp", target_env="vulkan1.2", debug=debug)
    return optimize(words) if optimized else words


def _instrument(words: list[int], target_env: str = "vulkan1.2") -> tuple[list[int], int]:
    result = instrument_module(
        read(words), shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    )
    out = write(result.module)
    spirv_val(out, target_env)  # type: ignore[arg-type]
    return out, result.functions_copied


def _run(
    vk: VulkanContext,
    words: list[int],
    pick: int,
    out_bytes: int = 32,
    data_written: bool = True,
) -> tuple[list[int], list[ErrorRecord]]:
    data = vk.buffer(data=np.arange(1, 1 + DATA_WORDS, dtype=np.uint32))
    out = vk.buffer(32)
    debug = vk.debug_buffer(capacity_words=4096)
    state = region_words({0: 1, 1: 1, 2: 1})
    sizes = {0: 4 * DATA_WORDS if data_written else None, 1: out_bytes, 2: 8}
    for binding, size in sizes.items():
        state[state[binding_table_word(binding)]] = 0 if size is None else range_word(size)
    app = [
        Binding(0, "storage_buffer", [data]),
        Binding(1, "storage_buffer", [out]),
        Binding(2, "uniform_buffer", [vk.buffer(data=np.array([pick, 5], np.uint32))]),
    ]
    ours = gpuav_set(vk, debug, state, bound_sets_area(state, 0))
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours})
    records = sorted(debug.records(), key=lambda r: (r.instruction_index, r.stage_words))
    return result.buffer(out).tolist(), records


@pytest.mark.parametrize("optimized", [False, True], ids=["glslang", "spirv-opt"])
def test_proven_function_runs_its_copy_and_matches_no_layer(
    vk: VulkanContext, optimized: bool
) -> None:
    words = _compiled(PROVABLE, optimized)
    instrumented, copied = _instrument(words)
    assert copied == 1
    plain, _ = _run(vk, words, pick=DATA_WORDS - 1)
    out, records = _run(vk, instrumented, pick=DATA_WORDS - 1)
    assert records == []
    assert out == plain
    assert out == [(1 + (i * 7 + 5) % DATA_WORDS) * 100 + DATA_WORDS for i in range(INVOCATIONS)]


@pytest.mark.parametrize(
    ("pick", "out_bytes", "data_written"),
    [(DATA_WORDS + 3, 32, True), (0, 16, True), (0, 32, False)],
    ids=["uniform-index-past-the-range", "fixed-array-past-a-short-range", "unwritten"],
)
def test_failing_test_runs_the_checked_body_with_every_record(
    vk: VulkanContext,
    monkeypatch: pytest.MonkeyPatch,
    pick: int,
    out_bytes: int,
    data_written: bool,
) -> None:
    words = _compiled(PROVABLE)
    versioned, copied = _instrument(words)
    assert copied == 1
    monkeypatch.setattr(memory_guards, "version_entry_functions", lambda *_, **__: set())
    checked, copied = _instrument(words)
    assert copied == 0
    with_copy = _run(vk, versioned, pick, out_bytes, data_written)
    without = _run(vk, checked, pick, out_bytes, data_written)
    assert with_copy[1], "the checked body reports"
    assert with_copy == without


def test_index_read_from_memory_gets_no_copy() -> None:
    _, copied = _instrument(_compiled(UNBOUNDED))
    assert copied == 0


def test_debug_info_stays_valid() -> None:
    """The function's debug definition must stay in its first block, once."""
    out, copied = _instrument(_compiled(PROVABLE, debug="gV"))
    assert copied == 1
    definitions = [
        i for i in read(out).instructions() if i.opcode == Op.ExtInst and i.operands[3] == 101
    ]
    assert len(definitions) == 1


@pytest.mark.parametrize("shader", ["derivatives", "frame_loop"])
def test_fragment_test_reads_only_values_uniform_over_the_draw(shader: str) -> None:
    source = DERIVATIVES if shader == "derivatives" else FRAME_LOOP.read_text()
    words = compile_glsl(source, "frag", target_env="vulkan1.2")
    out, copied = _instrument(words)
    assert copied == 1
    module = read(out)
    main = next(f for f in module.functions if f.id == module.entry_points[0].operands[1])
    test = main.blocks[0].terminator
    assert test.opcode == Op.BranchConditional
    assert _invocation_dependent(module, test.operands[0]) == set()


def _invocation_dependent(module: Module, value: int) -> set[int]:
    """The variables of storage classes that differ between invocations that ``value`` is
    computed from, through the ids it uses (not into the functions it calls, whose
    arguments are followed)."""
    definitions = {i.result_id: i for i in module.instructions() if i.result_id is not None}
    id_operands = IdOperands(module)
    varying = {StorageClass.Input, StorageClass.Private, StorageClass.Function}
    found: set[int] = set()
    stack, seen = [value], set()
    while stack:
        current = stack.pop()
        if current in seen or current not in definitions:
            continue
        seen.add(current)
        definition = definitions[current]
        if definition.opcode == Op.Variable:
            if definition.operands[2] in varying:
                found.add(current)
            continue
        if definition.opcode == Op.Function:
            continue
        stack.extend(
            definition.operands[at]
            for at in id_operands.positions(definition)
            if definition.operands[at] != current
        )
    return found
