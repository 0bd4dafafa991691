"""The test helper itself: inputs, defines, debug modes, the cache and its failures."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.shaders import glsl
from tests.shaders.glsl import (
    GlslCompileError,
    SpirvValidationError,
    ToolMissing,
    compile_glsl,
    spirv_val,
)

COMPUTE = """#version 450
layout(local_size_x = 1) in;
#ifndef COUNT
#define COUNT 2
#endif
layout(set = 0, binding = 0) buffer B { uint values[COUNT]; } b;
void main() { b.values[COUNT - 1] = 7u; }
"""


def _as_bytes(words: list[int]) -> bytes:
    return b"".join(word.to_bytes(4, "little") for word in words)


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GPUAV_TEST_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_source_string_and_file_give_the_same_module(tmp_path: Path, cache_dir: Path) -> None:
    path = tmp_path / "shader.comp"
    path.write_text(COMPUTE)
    from_source = compile_glsl(COMPUTE, "comp", debug="g")
    assert from_source[0] == 0x07230203
    assert compile_glsl(path, debug="g") == from_source
    assert compile_glsl(str(path), debug="g") == from_source
    spirv_val(from_source)


def test_source_name_is_recorded(cache_dir: Path) -> None:
    words = compile_glsl(COMPUTE, "comp", debug="g", source_name="probe.comp")
    assert b"probe.comp" in _as_bytes(words)


def test_stage_is_required_for_source_strings() -> None:
    with pytest.raises(ValueError, match="stage"):
        compile_glsl(COMPUTE)


def test_missing_file_is_reported() -> None:
    with pytest.raises(FileNotFoundError):
        compile_glsl("no/such/shader.frag")


def test_defines_reach_the_preprocessor(cache_dir: Path) -> None:
    default = compile_glsl(COMPUTE, "comp")
    widened = compile_glsl(COMPUTE, "comp", defines={"COUNT": 9})
    assert default != widened
    spirv_val(widened)


def test_target_env_sets_the_spirv_version(cache_dir: Path) -> None:
    versions = {
        env: compile_glsl(COMPUTE, "comp", target_env=env)[1]
        for env in ("vulkan1.0", "vulkan1.1", "vulkan1.2", "vulkan1.3")
    }
    assert versions == {
        "vulkan1.0": 0x00010000,
        "vulkan1.1": 0x00010300,
        "vulkan1.2": 0x00010500,
        "vulkan1.3": 0x00010600,
    }


def test_nonsemantic_debug_info(cache_dir: Path) -> None:
    assert b"NonSemantic.Shader.DebugInfo.100" in _as_bytes(
        compile_glsl(COMPUTE, "comp", debug="gV")
    )


def test_compile_error_carries_glslang_output(cache_dir: Path) -> None:
    broken = COMPUTE.replace("7u;", "undeclared_name;")
    with pytest.raises(GlslCompileError, match="undeclared_name") as caught:
        compile_glsl(broken, "comp")
    assert isinstance(caught.value, AssertionError)
    assert "--- source ---" in str(caught.value)


def test_cache_hit_runs_no_compiler(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = compile_glsl(COMPUTE, "comp", debug="gV")
    assert list(cache_dir.rglob("*.spv"))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"compiler ran on a cache hit: {args}")

    monkeypatch.setattr(subprocess, "run", refuse)
    assert compile_glsl(COMPUTE, "comp", debug="gV") == first


def test_corrupt_cache_entry_is_recompiled(cache_dir: Path) -> None:
    first = compile_glsl(COMPUTE, "comp")
    (entry,) = cache_dir.rglob("*.spv")
    entry.write_bytes(b"junk")
    assert compile_glsl(COMPUTE, "comp") == first


def test_cache_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GPUAV_TEST_CACHE", "off")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    compile_glsl(COMPUTE, "comp")
    assert not list(tmp_path.rglob("*.spv"))


def test_missing_glslang_fails_rather_than_skips(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("GLSLANG_VALIDATOR", raising=False)
    with pytest.raises(ToolMissing, match="glslangValidator") as caught:
        compile_glsl(COMPUTE, "comp")
    assert isinstance(caught.value, AssertionError)


def test_spirv_val_failure_carries_the_disassembly(cache_dir: Path) -> None:
    words = compile_glsl(COMPUTE, "comp")
    # Drop OpMemoryModel (opcode 14): every module needs exactly one.
    index = 5
    while words[index] & 0xFFFF != 14:
        index += words[index] >> 16
    broken = words[:index] + words[index + (words[index] >> 16) :]
    with pytest.raises(SpirvValidationError, match="memory model") as caught:
        spirv_val(broken, "vulkan1.1")
    assert "OpEntryPoint GLCompute" in str(caught.value)


def test_disassemble_uses_raw_ids(cache_dir: Path) -> None:
    text = glsl.disassemble(compile_glsl(COMPUTE, "comp"))
    assert "OpCapability Shader" in text
    assert "%main" not in text
