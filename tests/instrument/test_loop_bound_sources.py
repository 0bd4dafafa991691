"""Bounds of loop indices from a local stored once in the loop and from a remainder of a
runtime array's length, on lavapipe: the loop's unchecked copy runs where the test before it
passes, so a correct program computes what it computes without the layer and reports nothing;
where the test fails, the checked loop runs and gives exactly the records and results it
gives without a copy."""

from __future__ import annotations

import numpy as np
import pytest

from gpuav.instrument import memory_guards
from gpuav.instrument.record import ErrorRecord
from tests.harness import Binding, VulkanContext
from tests.instrument.util import (
    DEBUG_SET,
    bound_sets_area,
    buffer_region,
    gpuav_set,
    instrumented_with_state,
)
from tests.shaders.glsl import DebugMode, compile_glsl, optimize

pytestmark = pytest.mark.vulkan

INVOCATIONS = 8
DATA_WORDS = 24

# ``at`` is a remainder of the runtime array's own length, kept in a variable stored once in
# the loop (as glslang leaves a local); ``params.pick`` is a uniform read the test compares
# with the range.
PROVABLE = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Out { uint v[8]; } o;
layout(set = 0, binding = 2) uniform Params { uint pick; uint base; } params;
void main() {
    uint i = gl_GlobalInvocationID.x;
    uint acc = 0u;
    for (uint k = 0u; k < 4u; ++k) {
        uint at = (i * 7u + k + params.base) % uint(data.v.length());
        acc += data.v[at] * 100u + data.v[params.pick];
    }
    o.v[i] = acc;
}
"""

# The second index is read from memory: no test can bound it.
UNBOUNDED = PROVABLE.replace("data.v[params.pick]", "data.v[data.v[i]]")


def _compiled(source: str, optimized: bool = False, debug: DebugMode = "none") -> list[int]:
    words = compile_glsl(source, "comp", target_env="vulkan1.2", debug=debug)
    return optimize(words) if optimized else words


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
    state = buffer_region([4 * DATA_WORDS if data_written else None, out_bytes, 8])
    app = [
        Binding(0, "storage_buffer", [data]),
        Binding(1, "storage_buffer", [out]),
        Binding(2, "uniform_buffer", [vk.buffer(data=np.array([pick, 5], np.uint32))]),
    ]
    ours = gpuav_set(vk, debug, state, bound_sets_area(state, 0))
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours})
    records = sorted(debug.records(), key=lambda r: (r.instruction_index, r.stage_words))
    return result.buffer(out).tolist(), records


def _expected(pick: int) -> list[int]:
    return [
        sum((1 + (i * 7 + k + 5) % DATA_WORDS) * 100 + 1 + pick for k in range(4))
        for i in range(INVOCATIONS)
    ]


@pytest.mark.parametrize("debug", ["none", "gV"])
@pytest.mark.parametrize("optimized", [False, True], ids=["glslang", "spirv-opt"])
def test_proven_loop_runs_its_copy_and_matches_no_layer(
    vk: VulkanContext, optimized: bool, debug: DebugMode
) -> None:
    words = _compiled(PROVABLE, optimized, debug)
    instrumented, copied = instrumented_with_state(words)
    assert copied == 1
    plain, _ = _run(vk, words, pick=DATA_WORDS - 1)
    out, records = _run(vk, instrumented, pick=DATA_WORDS - 1)
    assert records == []
    assert out == plain == _expected(DATA_WORDS - 1)


@pytest.mark.parametrize(
    ("pick", "data_written"),
    [(DATA_WORDS + 3, True), (0, False)],
    ids=["uniform-index-past-the-range", "unwritten"],
)
def test_failing_test_runs_the_checked_loop_with_every_record(
    vk: VulkanContext, monkeypatch: pytest.MonkeyPatch, pick: int, data_written: bool
) -> None:
    words = _compiled(PROVABLE)
    versioned, copied = instrumented_with_state(words)
    assert copied == 1
    monkeypatch.setattr(memory_guards, "version_loops", lambda *_, **__: 0)
    checked, copied = instrumented_with_state(words)
    assert copied == 0
    with_copy = _run(vk, versioned, pick, data_written=data_written)
    without = _run(vk, checked, pick, data_written=data_written)
    assert with_copy[1], "the checked loop reports"
    assert with_copy == without


def test_index_read_from_memory_gets_no_copy() -> None:
    _, copied = instrumented_with_state(_compiled(UNBOUNDED))
    assert copied == 0
