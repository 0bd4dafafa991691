"""Issue 13: a module is instrumented only when it reads, validates for the device, and keeps
its id bound within SPIR-V's universal limit once the pass has added its ids."""

from __future__ import annotations

from array import array
from collections.abc import Iterator

import pytest

from gpuav.instrument.api import instrument_shader
from gpuav.layer import module_intake, shader_validation
from gpuav.layer.shader_validation import ShaderEnvironment
from tests.shaders.glsl import compile_glsl

DEVICE = 0x1D7A4E
INDEXED = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint value; } data[4];
layout(push_constant) uniform Push { uint index; } push;
void main() { data[push.index].value = 1u; }
"""
FLOAT64 = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { double value; } data[4];
layout(push_constant) uniform Push { uint index; } push;
void main() { data[push.index].value = 1.0lf; }
"""
LOCATION_40 = """#version 450
layout(location = 40) out vec4 far;
void main() { far = vec4(1.0); gl_Position = vec4(0.0); }
"""


@pytest.fixture
def device() -> Iterator[int]:
    environment = ShaderEnvironment(
        "vulkan1.1",
        frozenset({"shaderStorageBufferArrayDynamicIndexing"}),
        frozenset(),
        (("maxVertexOutputComponents", 128),),
    )
    shader_validation.post_call_record_create_device(DEVICE, environment)
    yield DEVICE
    shader_validation.pre_call_record_destroy_device(DEVICE)


def _words(source: str, stage: str = "comp") -> list[int]:
    return compile_glsl(source, stage, target_env="vulkan1.1")


def test_a_valid_module_may_be_instrumented(device: int) -> None:
    assert module_intake.refusal_before(device, _words(INDEXED)) is None


def test_words_that_do_not_read_are_refused(device: int) -> None:
    words = _words(INDEXED)
    assert module_intake.refusal_before(device, words[:3]) == "it is shorter than a SPIR-V header"
    cut = words[:-1]  # the last instruction ends past the end of the module
    reason = module_intake.refusal_before(device, cut)
    assert reason is not None
    assert reason.startswith("it cannot be read as SPIR-V (")


def test_a_module_broken_for_the_device_is_refused_with_its_rules(device: int) -> None:
    reason = module_intake.refusal_before(device, _words(FLOAT64))
    assert reason is not None
    assert "gpuav's validator finds" in reason
    assert "VUID-" in reason


def test_locations_past_the_device_limit_are_refused(device: int) -> None:
    # Location 40 needs maxVertexOutputComponents >= 164; the device has 128.
    reason = module_intake.refusal_before(device, _words(LOCATION_40, "vert"))
    assert reason is not None
    assert "VUID-RuntimeSpirv-Location-06272" in reason


def test_an_id_bound_above_the_universal_limit_is_refused(device: int) -> None:
    words = _words(INDEXED)
    words[3] |= 1 << 30  # the fuzzer's mutant: one bit flipped in the bound
    reason = module_intake.refusal_before(device, words)
    assert reason is not None
    assert f"above SPIR-V's universal limit of {module_intake.MAX_ID_BOUND} ids" in reason
    swapped = array("I", words)
    swapped.byteswap()  # the reader takes either byte order, and so does the bound check
    assert module_intake.refusal_before(device, swapped.tolist()) == reason


def test_a_bound_without_room_for_the_pass_is_refused_after_it() -> None:
    words = _words(INDEXED)
    words[3] = module_intake.MAX_ID_BOUND - 2
    assert module_intake.refusal_before(0, words) is None  # valid, and no environment: reads
    instrumented = instrument_shader(words, shader_id=1, descriptor_set=1)
    assert instrumented[3] > module_intake.MAX_ID_BOUND
    reason = module_intake.refusal_after(instrumented)
    assert reason is not None
    assert f"id bound would be {instrumented[3]}" in reason
    ordinary = instrument_shader(_words(INDEXED), shader_id=1, descriptor_set=1)
    assert module_intake.refusal_after(ordinary) is None


def test_without_an_environment_the_module_must_still_read() -> None:
    words = _words(FLOAT64)
    assert module_intake.refusal_before(0, words) is None  # features unknown: not judged
    reason = module_intake.refusal_before(0, words[:-1])
    assert reason is not None
    assert reason.startswith("it cannot be read as SPIR-V (")


def test_features_the_layer_enabled_count_as_enabled(device: int) -> None:
    # The app did not enable shaderFloat64, but the driver has it on: valid where it runs.
    words = _words(FLOAT64)
    assert module_intake.refusal_before(device, words) is not None
    assert module_intake.refusal_before(device, words, frozenset({"shaderFloat64"})) is None
