"""Every corpus shader after ``spirv-opt -O``: the shapes an optimizer emits (loads hoisted
and shared between blocks, merged blocks, inlined functions that took descriptors, OpSelect
and OpPhi on indices) are all checked, none is left unchecked, and spirv-val accepts the
result. Shaders that index a descriptor array dynamically must still change."""

from __future__ import annotations

import pytest

from gpuav.instrument.api import instrument_module, instrument_shader
from gpuav.spirv import read
from tests.instrument.test_corpus import DYNAMIC
from tests.shaders.glsl import CorpusShader, corpus_shaders, optimize, spirv_val


@pytest.mark.parametrize(
    "shader", [pytest.param(s, id=s.name) for s in corpus_shaders() if not s.spirv_val_fails]
)
def test_optimized_corpus_module_is_fully_checked(shader: CorpusShader) -> None:
    words = optimize(shader.compile("none"), shader.target_env)
    result = instrument_module(read(words), shader_id=3, descriptor_set=6, descriptor_state=True)
    assert result.findings.unchecked == []
    out = instrument_shader(words, shader_id=3, descriptor_set=6, descriptor_state=True)
    spirv_val(out, shader.target_env)
    if shader.name in DYNAMIC:
        assert out != words
