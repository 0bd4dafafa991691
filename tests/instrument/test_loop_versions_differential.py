"""Loop copies against the checked loops alone, on lavapipe: for loops of many shapes
(nested, break, continue, do-while, a step of 2, counting down signed, unsigned and by two,
return inside, values used after the loop, a local array, stores, a counter the body moves),
as glslang and spirv-opt emit them, the module with copies computes exactly what the module
without them computes and writes exactly the same records, whether every access fits, some
do not, or the last one reaches the range's last word."""

from __future__ import annotations

import numpy as np
import pytest

from gpuav.instrument import memory_guards
from gpuav.instrument.api import instrument_module
from gpuav.instrument.descriptor_state import binding_table_word, range_word, region_words
from gpuav.instrument.record import ErrorRecord
from gpuav.spirv.reader import read
from gpuav.spirv.writer import write
from tests.harness import Binding, VulkanContext
from tests.instrument.util import DEBUG_SET, SHADER_ID, bound_sets_area, buffer_region, gpuav_set
from tests.shaders.glsl import compile_glsl, optimize, spirv_val

pytestmark = pytest.mark.vulkan

HEAD = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Out { uint o[]; } o;
layout(set = 0, binding = 2) uniform Params { uint n; uint base; } params;
"""
BODIES = {
    "nested": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    for (uint i = 0u; i < 3u; ++i) {
        for (uint j = 0u; j < params.n; ++j) { acc += data.v[i * 2u + j + x]; }
    }
    o.o[x] = acc;
}""",
    "break": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    uint k = params.base;
    while (k < params.n) {
        if (data.v[k + x] == 9u) break;
        acc += data.v[k + x];
        k += 1u;
    }
    o.o[x] = acc + 1000u * k;
}""",
    "continue": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    for (int k = 0; k < int(params.n); ++k) {
        if ((k & 1) == 0) continue;
        acc += data.v[uint(k) + x];
    }
    o.o[x] = acc;
}""",
    "do_while": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u, k = 0u;
    do { acc += data.v[(k + x) & 31u]; k++; } while (k < params.n);
    o.o[x] = acc;
}""",
    "step_two": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    for (uint k = 0u; k < params.n; k += 2u) { acc += data.v[k + x]; }
    o.o[x] = acc;
}""",
    "count_down": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    for (int k = int(params.n) - 1; k >= 0; --k) { acc += data.v[uint(k) + x]; }
    o.o[x] = acc;
}""",
    "count_down_unsigned": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    for (uint k = params.n; k > 0u; --k) { acc += data.v[k + x] * k; }
    o.o[x] = acc;
}""",
    "count_down_by_two": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    for (int k = int(params.n); k >= 0; k -= 2) { acc += data.v[uint(k) + x]; }
    o.o[x] = acc;
}""",
    "return_inside": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    for (uint k = 0u; k < params.n; ++k) {
        if (data.v[k + x] > 17u) { o.o[x] = 7u + k; return; }
        acc += data.v[k + x];
    }
    o.o[x] = acc;
}""",
    "value_after": """void main() {
    uint x = gl_GlobalInvocationID.x, last = 0u, k;
    for (k = 0u; k < params.n; ++k) { last = data.v[k + x] * (k + 1u); }
    o.o[x] = last + 100u * k;
}""",
    "store_in_body": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    for (uint k = 0u; k < params.n; ++k) { k += 1u; acc += data.v[k + x]; }
    o.o[x] = acc;
}""",
    "local_array": """void main() {
    uint x = gl_GlobalInvocationID.x, acc = 0u;
    uint w[9] = uint[9](1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u);
    for (uint k = 0u; k < params.n; ++k) { acc += w[k] * data.v[k + x]; }
    o.o[x] = acc;
}""",
    "stores": """void main() {
    uint x = gl_GlobalInvocationID.x;
    for (uint k = 0u; k < params.n; ++k) { o.o[x * 16u + k] = data.v[x + k] + k; }
}""",
}
# (n, base, words of data bound): every access fits; some reach past the range; the counter
# bound makes word 13 the last a read reaches, the last one bound (where the body moves the
# counter past the test, a read reaches word 14).
CASES = {"fits": (6, 0, 64), "overruns": (12, 2, 14), "edge": (7, 0, 14)}


def _instrumented(words: list[int], copies: bool, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    with monkeypatch.context() as patch:
        if not copies:
            patch.setattr(memory_guards, "version_loops", lambda *_: 0)
        result = instrument_module(
            read(words), shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
        )
    out = write(result.module)
    spirv_val(out, "vulkan1.2")
    return out


def _run(
    vk: VulkanContext, words: list[int], n: int, base: int, data_words: int
) -> tuple[list[int], list[ErrorRecord]]:
    out = vk.buffer(4 * 128)
    debug = vk.debug_buffer(capacity_words=16384)
    state = buffer_region([4 * data_words, 4 * 128, 8])
    app = [
        Binding(0, "storage_buffer", [vk.buffer(data=np.arange(1, 65, dtype=np.uint32) % 20)]),
        Binding(1, "storage_buffer", [out]),
        Binding(2, "uniform_buffer", [vk.buffer(data=np.array([n, base, 0, 0], np.uint32))]),
    ]
    ours = gpuav_set(vk, debug, state, bound_sets_area(state, 0))
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours})
    records = sorted(debug.records(), key=lambda r: (r.instruction_index, r.stage_words, r.details))
    return result.buffer(out).tolist(), records


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("optimized", [False, True], ids=["glslang", "spirv-opt"])
@pytest.mark.parametrize("shape", sorted(BODIES))
def test_copies_change_nothing_a_program_or_its_records_show(
    vk: VulkanContext, monkeypatch: pytest.MonkeyPatch, shape: str, optimized: bool, case: str
) -> None:
    words = compile_glsl(HEAD + BODIES[shape], "comp", target_env="vulkan1.2")
    if optimized:
        words = optimize(words)
    n, base, data_words = CASES[case]
    with_copies = _run(vk, _instrumented(words, True, monkeypatch), n, base, data_words)
    checked_only = _run(vk, _instrumented(words, False, monkeypatch), n, base, data_words)
    assert with_copies == checked_only
    if case == "fits":
        assert with_copies[1] == []
        assert with_copies[0] == _run(vk, words, n, base, data_words)[0]


def test_most_shapes_get_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every shape gets a copy, in either form, but a counter the body moves after the
    entering test (the test's bound no longer holds)."""
    copied = set()
    for shape, body in BODIES.items():
        words = compile_glsl(HEAD + body, "comp", target_env="vulkan1.2")
        forms = [
            instrument_module(
                read(form), shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
            ).loops_copied
            for form in (words, optimize(words))
        ]
        if all(forms):
            copied.add(shape)
    assert copied == set(BODIES) - {"store_in_body"}


IMAGES = """#version 450
layout(local_size_x = 8) in;
layout(set = 0, binding = 0, r32f) uniform readonly image2D src;
layout(set = 0, binding = 1) uniform sampler2D tex;
layout(set = 0, binding = 2) buffer Out { float o[]; } o;
void main() {
    int x = int(gl_GlobalInvocationID.x);
    float acc = 0.0;
    for (int k = 0; k < 4; ++k) {
        acc += imageLoad(src, ivec2(x, k)).x + textureLod(tex, vec2(0.5), 0.0).x;
    }
    o.o[x] = acc;
}
"""


def _run_images(
    vk: VulkanContext, words: list[int], unwritten: int | None
) -> tuple[list[float], list[ErrorRecord]]:
    src = vk.image(8, 4, "R32_SFLOAT")
    src.upload(np.arange(32, dtype=np.float32).reshape(4, 8))
    tex = vk.image(1, 1, "R32_SFLOAT")
    tex.upload(np.array([[0.25]], np.float32))
    out = vk.buffer(4 * 8)
    debug = vk.debug_buffer(capacity_words=4096)
    state = region_words({0: 1, 1: 1, 2: 1})
    state[state[binding_table_word(2)]] = range_word(4 * 8)
    if unwritten is not None:
        state[state[binding_table_word(unwritten)]] = 0
    app = [
        Binding(0, "storage_image", [src.view()]),
        Binding(1, "combined_image_sampler", [(tex.view(), vk.sampler())]),
        Binding(2, "storage_buffer", [out]),
    ]
    ours = gpuav_set(vk, debug, state, bound_sets_area(state, 0))
    result = vk.run_compute(words, {0: app, DEBUG_SET: ours})
    records = sorted(debug.records(), key=lambda r: (r.instruction_index, r.stage_words))
    return result.buffer(out, np.float32).tolist(), records


@pytest.mark.parametrize("unwritten", [None, 0, 1])
@pytest.mark.parametrize("optimized", [False, True], ids=["glslang", "spirv-opt"])
def test_a_loop_over_images_is_copied_and_changes_nothing(
    vk: VulkanContext, monkeypatch: pytest.MonkeyPatch, optimized: bool, unwritten: int | None
) -> None:
    """A storage image and a sampler that are no arrays: the test before the loop reads
    their words once; an unwritten one sends the loop to its checks."""
    words = compile_glsl(IMAGES, "comp", target_env="vulkan1.2")
    if optimized:
        words = optimize(words)
    assert instrument_module(
        read(words), shader_id=SHADER_ID, descriptor_set=DEBUG_SET, descriptor_state=True
    ).loops_copied
    with_copies = _run_images(vk, _instrumented(words, True, monkeypatch), unwritten)
    assert with_copies == _run_images(vk, _instrumented(words, False, monkeypatch), unwritten)
    assert (with_copies[1] != []) == (unwritten is not None)
    if unwritten is None:
        assert with_copies[0] == [sum(x + 8.0 * k + 0.25 for k in range(4)) for x in range(8)]
