"""Issue 17 target 2, steady state: creating a module again costs a hash and a look-up, and a
module kept on disk by an earlier process is served from one file, with the same findings.

The engine's entry points run in this process in the order the native layer calls them at
vkCreateShaderModule (``shader_modules.recall``, static validation, the intake and the pass),
on the module's code as the layer reads it (bytes), on an enabled device as device_setup
leaves it; a "later process" starts with nothing in memory.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpuav.instrument.api import instrument_shader
from gpuav.layer import module_cache, shader_modules, shader_validation
from gpuav.layer.calls import PhysicalDeviceFacts
from gpuav.layer.module_cache import DiskCache, Kind, ModuleCache, Outcome
from gpuav.layer.reporting import MessageLike
from gpuav.layer.settings import Settings
from gpuav.layer.shader_code import ShaderCode
from gpuav.layer.state import DeviceState, InstanceState
from gpuav.spirv import read, write
from gpuav.spirv.grammar import LoopControl, Op
from gpuav.validate.diagnostics import Diagnostic, Severity
from tests.layer.collecting_reporter import CollectingReporter
from tests.shaders.glsl import CorpusShader, compile_glsl, corpus_shaders
from tests.validate.features import every_extension, every_feature

DEVICE = 0x57EAD
SET_INDEX = 7
VULKAN_1_3 = (1 << 22) | (3 << 12)
SHADERS = {shader.name: shader for shader in corpus_shaders()}
# Instrumented, with warnings (VUID-RuntimeSpirv-NonUniform-06274) on a device with every
# feature.
SHADER = SHADERS["storage_image_array_global_id.comp"]
# Refused, for the features it needs, on a device with none.
REFUSED = SHADERS["float_atomics.comp"]
ALL = shader_validation.ShaderEnvironment("vulkan1.3", every_feature(), every_extension())
NONE = shader_validation.ShaderEnvironment("vulkan1.3", frozenset(), frozenset())


@pytest.fixture(autouse=True)
def nothing_in_memory(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    _as_a_new_process(monkeypatch)
    yield
    shader_validation.pre_call_record_destroy_device(DEVICE)
    module_cache.cache_for.cache_clear()
    module_cache._cache_in.cache_clear()


def _as_a_new_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shader_validation, "_RESULTS", {})
    module_cache.cache_for.cache_clear()
    module_cache._cache_in.cache_clear()


def _device(
    folder: Path, environment: shader_validation.ShaderEnvironment, cpu: bool = False
) -> DeviceState:
    settings = Settings(enabled=True, shader_cache_path=str(folder))
    facts = PhysicalDeviceFacts(VULKAN_1_3, 8, 16, 1 << 27, (0,), True, True, cpu=cpu)
    instance = InstanceState(1, settings, VULKAN_1_3, CollectingReporter())
    device = DeviceState(DEVICE, instance, None, facts, enabled=True, set_index=SET_INDEX)  # type: ignore[arg-type]
    shader_validation.post_call_record_create_device(
        DEVICE, environment, module_cache.cache_for(settings)
    )
    return device


def _create(device: DeviceState, words: list[int]) -> tuple[list[str], list[int] | None]:
    """vkCreateShaderModule's engine calls on the code the layer reads: what is reported,
    and the words of the instrumented twin (shader id 1)."""
    code = ShaderCode.from_bytes(array("I", words).tobytes())
    shader_modules.recall(device, code)
    shader_validation.pre_call_validate_create_shader_module(DEVICE, code, device.reporter)
    device.shader_ids = iter([1])  # type: ignore[assignment]
    outcome = shader_modules.pre_call_record_create_shader_module(device, code)[1]
    said: list[MessageLike] = device.reporter.messages  # type: ignore[attr-defined]
    texts = [f"{m.message_id}: {getattr(m, 'text', m)}" for m in said]
    return texts, None if outcome is None else outcome.words_for(1)


class Reads:
    """The entries the disk cache reads, and static validation or the pass never running."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.keys: list[bytes] = []
        load = DiskCache.load

        def counting(this: DiskCache, key: bytes) -> Any:
            self.keys.append(key)
            return load(this, key)

        def forbidden(*arguments: object, **keywords: object) -> None:
            raise AssertionError("a module kept on disk was validated or instrumented again")

        monkeypatch.setattr(DiskCache, "load", counting)
        monkeypatch.setattr(shader_validation, "_validate", forbidden)
        monkeypatch.setattr(shader_modules, "_outcome", forbidden)


@pytest.mark.parametrize(
    ("shader", "environment"), [(SHADER, ALL), (REFUSED, NONE)], ids=["instrumented", "refused"]
)
def test_a_module_kept_on_disk_is_served_from_one_file_with_the_same_findings(
    shader: CorpusShader,
    environment: shader_validation.ShaderEnvironment,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    words = shader.compile("g")
    first = _create(_device(tmp_path, environment), words)
    said, instrumented = first
    assert said, "the module has findings to keep"
    if environment is ALL:
        assert instrumented == instrument_shader(
            list(words), shader_id=1, descriptor_set=SET_INDEX, descriptor_state=True
        )
    else:
        assert instrumented is None and any("passed to the driver unchanged" in s for s in said)
    _as_a_new_process(monkeypatch)
    reads = Reads(monkeypatch)
    assert _create(_device(tmp_path, environment), words) == first
    assert len(reads.keys) == 1
    # Created again in the same process: nothing read at all.
    device = _device(tmp_path, environment)
    assert _create(device, words) == first
    assert len(reads.keys) == 1


def test_a_module_made_from_bytes_is_the_module_of_its_words() -> None:
    words = SHADER.compile("gV")
    from_bytes = ShaderCode.from_bytes(array("I", words).tobytes())
    from_words = ShaderCode(words)
    assert from_bytes.digest == from_words.digest
    assert list(from_bytes.words) == words
    assert write(from_bytes.module()) == write(from_words.module()) == words


def test_every_part_of_the_key_changes_it(monkeypatch: pytest.MonkeyPatch) -> None:
    digest = ShaderCode(SHADER.compile("g")).digest
    options = {"descriptor_state": True, "descriptor_set": SET_INDEX}
    base = module_cache.key_for(digest, options, ALL, frozenset())
    others = [
        module_cache.key_for(ShaderCode(SHADER.compile("none")).digest, options, ALL, frozenset()),
        module_cache.key_for(digest, {**options, "descriptor_set": 6}, ALL, frozenset()),
        module_cache.key_for(digest, {**options, "printf": True}, ALL, frozenset()),
        module_cache.key_for(digest, options, NONE, frozenset()),
        module_cache.key_for(digest, options, None, frozenset()),
        module_cache.key_for(digest, options, ALL, frozenset({"shaderInt64"})),
    ]
    assert len({base, *others}) == 1 + len(others)
    files = {module_cache.file_key(key) for key in (base, *others)}
    validation = module_cache.validation_key(digest, ALL)
    assert len(files | {validation}) == 2 + len(others)
    assert module_cache.key_for(digest, dict(reversed(options.items())), ALL, frozenset()) == base
    # Another gpuav (its sources changed) makes other keys for the same module.
    monkeypatch.setattr(module_cache, "source_fingerprint", lambda: "another gpuav")
    module_cache._outcome_context.cache_clear()
    module_cache._validation_context.cache_clear()
    try:
        assert module_cache.key_for(digest, options, ALL, frozenset()) != base
        assert module_cache.validation_key(digest, ALL) != validation
    finally:
        module_cache._outcome_context.cache_clear()
        module_cache._validation_context.cache_clear()


@pytest.mark.parametrize(
    "diagnostics",
    [None, (), (Diagnostic("VUID-x", "why ü", 3, Severity.WARNING), Diagnostic("R", "m"))],
)
def test_an_outcome_reads_back_as_written(diagnostics: tuple[Diagnostic, ...] | None) -> None:
    outcome = Outcome(Kind.INSTRUMENTED, "", bytes(range(40)), 0x3FFF, (2, 7), diagnostics)
    assert Outcome.from_bytes(outcome.to_bytes()) == outcome
    refused = Outcome(Kind.REFUSED, "a reason, ü", diagnostics=diagnostics)
    assert Outcome.from_bytes(refused.to_bytes()) == refused


def test_a_whole_file_with_a_malformed_outcome_is_a_miss(tmp_path: Path) -> None:
    cache = ModuleCache(DiskCache(str(tmp_path)))
    good = Outcome(Kind.INSTRUMENTED, words=bytes(40), shader_id_positions=(9,)).to_bytes()
    position_outside = Outcome(Kind.INSTRUMENTED, words=bytes(40), shader_id_positions=(10,))
    with_rows = Outcome(Kind.UNCHANGED, diagnostics=(Diagnostic("R", "m"),)).to_bytes()
    bad_rows = with_rows.replace(b'"error"', b'"other"')  # no such severity
    unknown_kind = bytes([9]) + good[1:]
    for number, payload in enumerate(
        (good[:-2], good[:10], b"", position_outside.to_bytes(), bad_rows, unknown_kind)
    ):
        key = (bytes([number]) * 32, bytes(32))
        cache.disk.store(module_cache.file_key(key), payload)
        assert cache.disk.load(module_cache.file_key(key)) == payload  # whole on disk...
        assert cache.lookup(key) is None  # ...and still not an outcome
    key = (bytes(32), bytes(32))
    cache.disk.store(module_cache.file_key(key), good)
    assert cache.lookup(key) == Outcome.from_bytes(good)


def test_modules_of_the_same_words_share_a_shader_id_and_so_their_instrumented_words(
    tmp_path: Path,
) -> None:
    """A module created again gets the same instrumented words: the driver's cache serves it."""
    device = _device(tmp_path, ALL)
    words = SHADER.compile("g")
    made = [
        shader_modules.pre_call_record_create_shader_module(device, ShaderCode(words))
        for _ in range(2)
    ]
    other_id, _ = shader_modules.pre_call_record_create_shader_module(
        device, ShaderCode(SHADER.compile("gV"))
    )
    (first_id, first), (second_id, second) = made
    assert first is not None and second is not None
    assert first_id == second_id != other_id
    assert first.words_for(first_id) == second.words_for(second_id)


LOOP = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Result { uint v[]; } result;
void main() {
    uint i = gl_GlobalInvocationID.x, acc = 0u;
    for (uint k = 0u; k < 16u; ++k) { acc += data.v[(i + k) & 1023u]; }
    result.v[i] = acc;
}
"""


@pytest.mark.parametrize("cpu", [False, True])
def test_a_cpu_device_gets_loop_copies_without_the_unroll_hint(tmp_path: Path, cpu: bool) -> None:
    """llvmpipe ran a fully unrolled copy 1.4x slower than one left alone; a GPU's driver
    needs the hint (RESULTS_shader_time.md)."""
    device = _device(tmp_path, ALL, cpu=cpu)
    _, words = _create(device, compile_glsl(LOOP, "comp", target_env="vulkan1.2"))
    assert words is not None
    controls = [i.operands[2] for i in read(words).instructions() if i.opcode == Op.LoopMerge]
    assert sorted(controls) == [LoopControl.None_, LoopControl.None_ if cpu else LoopControl.Unroll]
