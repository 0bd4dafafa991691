"""Every corpus shader, in every debug mode, instrumented and accepted by spirv-val.

spirv-val runs for the shader's own target environment; a failure prints the disassembly.
Shaders with descriptor arrays indexed dynamically must actually change.
"""

from __future__ import annotations

import pytest

from gpuav.instrument.api import instrument_module, instrument_shader
from gpuav.instrument.descriptor_state import PushConstantAddress, SpecializationAddress
from gpuav.spirv import read
from tests.shaders.glsl import (
    DEBUG_MODES,
    CorpusShader,
    DebugMode,
    compile_glsl,
    corpus_shaders,
    spirv_val,
)

CASES = [
    pytest.param(shader, debug, id=f"{shader.name}-{debug}")
    for shader in corpus_shaders()
    for debug in DEBUG_MODES
    if debug not in shader.spirv_val_fails
]

# Shaders that index a descriptor array with a value known only at run time.
DYNAMIC = {
    "combined_sampler_array_ubo_index.frag",
    "flattened_2d_descriptor_index.frag",
    "storage_image_array_global_id.comp",
    "storage_texel_buffer_arrays.comp",
    "uniform_block_array_compute.comp",
    "uniform_texel_buffer_arrays.frag",
    "workgroup_id_descriptor_index.comp",
}


@pytest.mark.parametrize(("shader", "debug"), CASES)
def test_corpus_module_instruments_and_validates(shader: CorpusShader, debug: DebugMode) -> None:
    words = shader.compile(debug)
    out = instrument_shader(words, shader_id=3, descriptor_set=6)
    spirv_val(out, shader.target_env)
    if shader.name in DYNAMIC:
        assert out != words
    result = instrument_module(read(words), shader_id=3, descriptor_set=6)
    assert (out != words) == result.changed
    if not result.changed:
        assert out == words  # nothing to check: the module comes back word for word


MODES = {
    "state": {"descriptor_state": True},
    "push": {"descriptor_state": True, "context_address": PushConstantAddress(256)},
    "spec": {"descriptor_state": True, "context_address": SpecializationAddress(70, 71)},
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize(
    "shader", [pytest.param(s, id=s.name) for s in corpus_shaders() if not s.spirv_val_fails]
)
def test_corpus_module_in_issue_8_modes(shader: CorpusShader, mode: str) -> None:
    """Descriptor state, and the context reached by push constant or specialization."""
    words = shader.compile("none")
    out = instrument_shader(words, shader_id=3, descriptor_set=6, **MODES[mode])  # type: ignore[arg-type]
    spirv_val(out, shader.target_env)


@pytest.mark.parametrize("state", [False, True], ids=["bounds", "state"])
@pytest.mark.parametrize(
    "shader", [pytest.param(s, id=s.name) for s in corpus_shaders() if not s.spirv_val_fails]
)
def test_corpus_module_as_spirv_1_6(shader: CorpusShader, state: bool) -> None:
    """Every shader recompiled for Vulkan 1.3 (SPIR-V 1.6: full interface lists)."""
    words = compile_glsl(shader.path, shader.stage, target_env="vulkan1.3")
    out = instrument_shader(words, shader_id=3, descriptor_set=6, descriptor_state=state)
    spirv_val(out, "vulkan1.3")
