"""End to end through the real layer: a shader compiled with ``-g`` gets its source line.

The layer tests' reporting shader writes its own record (see tests/layer/shaders); here it is
compiled with debug information and its instruction-index constant is pointed at the store
into ``data.values``, so the layer's read-back reaches this package's source lookup.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuav.report.shader_info import ShaderInfo
from gpuav.spirv.grammar import Op
from gpuav.spirv.reader import read
from gpuav.spirv.writer import write
from tests.layer.conftest import SHADERS, RunPython, layer_folder, run_python_app
from tests.shaders.glsl import compile_glsl, spirv_val

__all__ = ["layer_folder", "run_python_app"]  # fixtures used by name below

pytestmark = pytest.mark.vulkan
RECORDED_INDEX = 42  # the instruction index region_reporting.comp writes


def debug_shader(folder: Path) -> tuple[Path, int]:
    """region_reporting.comp with ``-g``, its record naming the store into data.values."""
    words = compile_glsl(SHADERS / "region_reporting.comp", debug="g")
    info = ShaderInfo(words)
    (store,) = [
        at
        for at, item in enumerate(info.instructions)
        if item.opcode == Op.Store and (found := info.descriptor(at)) and found.name == "data"
    ]
    module = read(words)
    (constant,) = [
        item
        for item in module.globals
        if item.opcode == Op.Constant and item.operands[2] == RECORDED_INDEX
    ]
    constant.operands[2] = store
    patched = write(module)
    spirv_val(patched)
    path = folder / "region_reporting_g.comp.spv"
    path.write_bytes(b"".join(word.to_bytes(4, "little") for word in patched))
    return path, store


def test_message_through_the_layer_has_the_source_line(
    run_python_app: RunPython, layer_folder: Path, tmp_path: Path
) -> None:
    shader, store = debug_shader(tmp_path)
    arguments = ["--shader", str(shader), "--messenger", "--names", "--bad-dispatch", "2"]
    run = run_python_app(arguments, layer_folder)
    (message,) = run.messages
    assert message["id"] == "GPUAV-descriptor-index-out-of-bounds"
    text = re.sub(r"0x[0-9a-f]+", "0x…", message["text"])
    text = re.sub(r"compute\.py:\d+", "compute.py:N", text)
    assert text == (
        "Index of 6 used to index descriptor array of length 4. "
        "At region_reporting.comp line 15.\n"
        "  15: data.values[i] = data.values[i] * 3u + i;\n"
        "  Descriptor: data (block Data), set 0, binding 0.\n"
        "  Command buffer (ComputeCommandBuffer)(0x…). Dispatch Index 2 (vkCmdDispatch).\n"
        "  Recorded at compute.py:N in _record_compute().\n"
        "  Pipeline (ComputePipeline)(0x…). Shader Module (ComputeShader)(0x…).\n"
        f"  Shader Instruction Index = {store}.\n"
        "  Stage = Compute. Global invocation ID (x, y, z) = (5, 0, 0)."
    )
