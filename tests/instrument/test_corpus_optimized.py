"""Every corpus shader after ``spirv-opt -O``: the shapes an optimizer emits (loads hoisted
and shared between blocks, merged blocks, inlined functions that took descriptors, OpSelect
and OpPhi on indices) are all checked, none is left unchecked, and spirv-val accepts the
result. Shaders that index a descriptor array dynamically must still change."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from gpuav.instrument.api import instrument_module, instrument_shader
from gpuav.spirv import read
from tests.instrument.test_corpus import DYNAMIC
from tests.shaders.glsl import CorpusShader, corpus_shaders, spirv_val, tool, words_to_bytes


def _optimized(words: list[int], target_env: str, folder: Path) -> list[int]:
    source, output = folder / "in.spv", folder / "out.spv"
    source.write_bytes(words_to_bytes(words))
    subprocess.run(
        [tool("spirv-opt"), "-O", f"--target-env={target_env}", str(source), "-o", str(output)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    data = output.read_bytes()
    return list(struct.unpack(f"<{len(data) // 4}I", data))


@pytest.mark.parametrize(
    "shader", [pytest.param(s, id=s.name) for s in corpus_shaders() if not s.spirv_val_fails]
)
def test_optimized_corpus_module_is_fully_checked(shader: CorpusShader, tmp_path: Path) -> None:
    words = _optimized(shader.compile("none"), shader.target_env, tmp_path)
    result = instrument_module(read(words), shader_id=3, descriptor_set=6, descriptor_state=True)
    assert result.findings.unchecked == []
    out = instrument_shader(words, shader_id=3, descriptor_set=6, descriptor_state=True)
    spirv_val(out, shader.target_env)
    if shader.name in DYNAMIC:
        assert out != words
