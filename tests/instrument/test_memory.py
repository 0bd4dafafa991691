"""The pass runs inside vkCreateShaderModule of long-lived apps: what it builds for a shader
must be freed when it returns, without waiting for a full garbage collection."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from gpuav.instrument import api
from gpuav.spirv import Module
from tests.shaders.glsl import CORPUS_DIR, compile_glsl

SHADERS = sorted(CORPUS_DIR.iterdir())


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    yield
    gc.enable()


def test_every_module_the_pass_reads_is_freed_by_reference_counting(
    monkeypatch: pytest.MonkeyPatch, collector_off: None
) -> None:
    modules: list[weakref.ref[Module]] = []
    read = api.read

    def tracked_read(words: list[int]) -> Module:
        module = read(words)
        modules.append(weakref.ref(module))
        return module

    monkeypatch.setattr(api, "read", tracked_read)
    for path in SHADERS:
        api.instrument_shader(
            compile_glsl(path), shader_id=1, descriptor_set=7, descriptor_state=True
        )
    assert len(modules) == len(SHADERS)
    alive = [path.name for path, module in zip(SHADERS, modules, strict=True) if module()]
    assert alive == []
