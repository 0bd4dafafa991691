"""Issue 19 item 7: the layer reads each module's words once, for validation and instrumentation.

The engine's own entry points run in this process as the native layer calls them (validation,
then the intake and the pass), on an enabled device as device_setup leaves it; only the
driver is absent, and the shader-module path asks it nothing before the module is created.
Decodes are counted at the reader's one entry point (``_Reader.read``). The instrumented words
must be those of ``instrument_shader`` on the words, as before, and spirv-val must take them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gpuav.instrument.api import instrument_shader
from gpuav.layer import pipelines, shader_modules, shader_validation
from gpuav.layer.calls import (
    PIPELINE_BIND_POINT_GRAPHICS,
    SHADER_STAGE_FRAGMENT,
    SHADER_STAGE_VERTEX,
    PhysicalDeviceFacts,
    PipelineInfo,
    StageInfo,
)
from gpuav.layer.reporting import MessageLike
from gpuav.layer.settings import Settings
from gpuav.layer.state import DeviceState, InstanceState, PipelineLayoutState
from gpuav.spirv import read, reader, write
from gpuav.validate.api import validate, validate_module
from tests.layer.collecting_reporter import CollectingReporter
from tests.shaders.glsl import DEBUG_MODES, CorpusShader, corpus_shaders, spirv_val
from tests.validate.features import every_extension, every_feature

DEVICE = 0x0DEC0DE
SET_INDEX = 7
LAYOUT = 0x1A
VULKAN_1_3 = (1 << 22) | (3 << 12)
SHADERS = {shader.name: shader for shader in corpus_shaders()}


class Decodes:
    """Calls of the reader's entry point while the counter is on."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        original = reader._Reader.read

        def counting(this: Any) -> Any:
            self.count += 1
            return original(this)

        monkeypatch.setattr(reader._Reader, "read", counting)


@pytest.fixture
def device() -> DeviceState:
    facts = PhysicalDeviceFacts(VULKAN_1_3, 8, 16, 1 << 27, (0,), True, True)
    # Without the module cache, which would answer a module created again without reading it.
    settings = Settings(enabled=True, shader_cache=False)
    instance = InstanceState(1, settings, VULKAN_1_3, CollectingReporter())
    return DeviceState(DEVICE, instance, None, facts, enabled=True, set_index=SET_INDEX)  # type: ignore[arg-type]


@pytest.fixture
def validating(device: DeviceState) -> Iterator[DeviceState]:
    environment = shader_validation.ShaderEnvironment(
        "vulkan1.3", every_feature(), every_extension()
    )
    shader_validation.post_call_record_create_device(DEVICE, environment)
    yield device
    shader_validation.pre_call_record_destroy_device(DEVICE)


def _as_before(words: list[int]) -> list[int] | None:
    """What the layer instrumented before: ``instrument_shader`` on the words."""
    out = instrument_shader(
        list(words), shader_id=1, descriptor_set=SET_INDEX, descriptor_state=True
    )
    return None if out == words else out


def _layer_notices(device: DeviceState) -> list[str]:
    """What the layer said about the modules (validation's own findings left out): a module
    refused or failed by the pass, an internal error."""
    said: list[MessageLike] = device.reporter.messages  # type: ignore[attr-defined]
    return [m.message_id for m in said if m.message_id.startswith("GPUAV-")]


def _validate(device: DeviceState, words: list[int]) -> None:
    """vkCreateShaderModule's first engine call: static validation."""
    shader_validation.pre_call_validate_create_shader_module(device.handle, words, device.reporter)


def _instrument(device: DeviceState, words: list[int]) -> list[int] | None:
    """vkCreateShaderModule's second engine call: the intake and the pass."""
    device.shader_ids = iter([1])  # type: ignore[assignment]  # the id _as_before uses
    instrumented = shader_modules.pre_call_record_create_shader_module(device, words)[1]
    return None if instrumented is None else instrumented.words_for(1)


@pytest.mark.parametrize("shader", [pytest.param(s, id=s.name) for s in SHADERS.values()])
def test_each_creation_reads_the_module_once_and_instruments_it_as_before(
    validating: DeviceState, monkeypatch: pytest.MonkeyPatch, shader: CorpusShader
) -> None:
    monkeypatch.setattr(shader_validation, "_RESULTS", {})  # no result cached yet
    for debug in DEBUG_MODES:
        words = shader.compile(debug)
        expected = _as_before(words)
        decodes = Decodes(monkeypatch)
        _validate(validating, words)
        assert decodes.count == 1  # validation read the module...
        first = _instrument(validating, words)
        assert decodes.count == 1  # ...and the pass instrumented that very module
        # Created again: the cached validation reads nothing, the pass reads once.
        _validate(validating, words)
        again = _instrument(validating, words)
        assert decodes.count == 2
        assert first == again == expected
        assert _layer_notices(validating) == []
        if first is not None and debug not in shader.spirv_val_fails:
            spirv_val(first, shader.target_env)


@pytest.mark.parametrize("shader", [pytest.param(s, id=s.name) for s in SHADERS.values()])
def test_validation_leaves_the_module_as_read(shader: CorpusShader) -> None:
    # The module goes on to the pass: the validator must not change it, and the diagnostics
    # it answers (cached by the layer) must be those of the words.
    for debug in DEBUG_MODES:
        words = shader.compile(debug)
        module = read(words)
        for features in (every_feature(), frozenset()):  # clean, then with diagnostics
            found = validate_module(module, target_env=shader.target_env, features=features)
            assert write(module) == words
            assert found == validate(words, target_env=shader.target_env, features=features)


def test_with_validation_off_the_intake_and_the_pass_share_one_read(
    device: DeviceState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(shader_validation.SETTING, "0")
    words = SHADERS["storage_texel_buffer_arrays.comp"].compile("none")
    expected = _as_before(words)
    decodes = Decodes(monkeypatch)
    assert not shader_validation.has_environment(DEVICE)
    assert expected is not None
    _validate(device, words)  # no environment: nothing to do
    assert _instrument(device, words) == expected
    assert decodes.count == 1


def test_inline_stage_code_is_read_once_per_stage(
    validating: DeviceState, monkeypatch: pytest.MonkeyPatch
) -> None:
    vertex = SHADERS["vertex_attribute_texture_index.vert"].compile("g")
    fragment = SHADERS["uniform_texel_buffer_arrays.frag"].compile("g")
    validating.pipeline_layouts[LAYOUT] = PipelineLayoutState(LAYOUT, 1, patched=True)
    info = PipelineInfo(
        LAYOUT,
        (
            StageInfo(SHADER_STAGE_VERTEX, 0, tuple(vertex)),
            StageInfo(SHADER_STAGE_FRAGMENT, 0, tuple(fragment)),
        ),
    )
    decodes = Decodes(monkeypatch)
    # As the native layer does: every stage of the call validated, then the pipelines planned.
    for stage in info.stages:
        assert stage.inline_words is not None
        shader_validation.pre_call_validate_create_shader_module(
            DEVICE,
            stage.inline_words,
            validating.reporter,
            "inline code",
            "vkCreateGraphicsPipelines",
        )
    validating.shader_ids = iter([1, 1])  # type: ignore[assignment]
    plans = pipelines.pre_call_record_create_pipelines(
        validating, PIPELINE_BIND_POINT_GRAPHICS, [info]
    )
    assert decodes.count == 2
    assert plans is not None
    assert plans[0].inline_words == {0: _as_before(vertex), 1: _as_before(fragment)}
    assert None not in plans[0].inline_words.values()
    assert _layer_notices(validating) == []
