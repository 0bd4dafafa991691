"""``gpuav instrument``: output module, text and JSON reports, declines, exit statuses."""

from __future__ import annotations

import json
import subprocess
import sys
from array import array
from pathlib import Path

import pytest

from gpuav.cli import main
from gpuav.spirv.disassembler import disassemble
from tests.instrument.test_pass_cases import BLOCK_ARRAY, TWO_STAGES
from tests.instrument.test_pass_shapes import LOOP, asm
from tests.shaders.glsl import spirv_val
from tests.validate.asm import assemble

STATIC_AND_DYNAMIC = BLOCK_ARRAY.format(
    body="""
     %first = OpAccessChain %ptr_uint %bufs %uint_9 %uint_0
               OpStore %first %x
     %second = OpAccessChain %ptr_uint %bufs %x %uint_0
               OpStore %second %x
    """
)


def _write(path: Path, words: list[int]) -> Path:
    path.write_bytes(array("I", words).tobytes())
    return path


def _read(path: Path) -> list[int]:
    return array("I", path.read_bytes()).tolist()


def test_text_report_names_static_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _write(tmp_path / "in.spv", assemble(STATIC_AND_DYNAMIC, "vulkan1.1"))
    output = tmp_path / "out.spv"
    assert main(["instrument", str(source), "-o", str(output), "--desc-set", "5"]) == 0
    text = capsys.readouterr().out
    assert "2 descriptor accesses checked" in text
    assert "static finding: instruction" in text
    assert "uses index 9 of bufs (set 0, binding 0), an array of length 4" in text
    spirv_val(_read(output), "vulkan1.1")
    assert _read(output) != _read(source)


def test_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _write(tmp_path / "in.spv", assemble(STATIC_AND_DYNAMIC, "vulkan1.1"))
    output = tmp_path / "out.spv"
    assert main(["instrument", str(source), "-o", str(output), "--json", "--shader-id", "9"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["declined"] is None and report["instrumented"] is True
    assert [a["kind"] for a in report["checked"]] == ["buffer", "buffer"]
    (finding,) = report["static_findings"]
    assert finding["consumer"] == "OpStore"
    assert finding["lookups"][0] == {
        "variable": "bufs",
        "set": 0,
        "binding": 0,
        "static_index": 9,
        "array_length": 4,
        "ptr_access_chain": False,
    }


def test_declined_shader_is_written_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # NV mesh shading has no stage code (lavapipe has only the EXT stages, which are checked).
    words = assemble(TWO_STAGES.replace("OpEntryPoint Vertex", "OpEntryPoint TaskNV"), "vulkan1.3")
    source = _write(tmp_path / "in.spv", words)
    output = tmp_path / "out.spv"
    assert main(["instrument", str(source), "-o", str(output), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "execution model" in report["declined"]
    assert _read(output) == words


def test_bad_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.spv"
    source.write_bytes(b"not spir-v")
    assert main(["instrument", str(source), "-o", str(tmp_path / "out.spv")]) == 2
    assert "gpuav instrument:" in capsys.readouterr().err
    assert main(["instrument", str(tmp_path / "missing.spv"), "-o", str(tmp_path / "o")]) == 2


def test_as_a_program(tmp_path: Path) -> None:
    source = _write(tmp_path / "in.spv", assemble(STATIC_AND_DYNAMIC, "vulkan1.1"))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuav.cli",
            "instrument",
            str(source),
            "-o",
            str(tmp_path / "out.spv"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "static finding" in result.stdout


def test_issue_8_modes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = _write(tmp_path / "in.spv", assemble(STATIC_AND_DYNAMIC, "vulkan1.1"))
    for options in (["--descriptor-state"], ["--context-push-offset", "64"]):
        output = tmp_path / "out.spv"
        assert main(["instrument", str(source), "-o", str(output), *options]) == 0
        spirv_val(_read(output), "vulkan1.1")
    text = disassemble(_read(output))
    assert "PhysicalStorageBuffer" in text and "DescriptorSet 7" not in text
    capsys.readouterr()


def test_json_report_lists_the_lookups_a_merge_chooses_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = _write(tmp_path / "loop.spv", asm(LOOP))
    assert main(["instrument", str(source), "-o", str(tmp_path / "out.spv"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    (access,) = report["checked"]
    (lookup,) = access["lookups"]
    assert lookup["merged_by"] == "OpPhi"
    assert [inner["variable"] for inner in lookup["incoming"]] == ["bufs", "bufs"]
    assert [inner["static_index"] for inner in lookup["incoming"]] == [0, None]
    assert report["unchecked"] == []
    spirv_val(_read(tmp_path / "out.spv"), "vulkan1.1")


def test_reports_the_entry_functions_the_layer_decides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.instrument.test_function_versions import PROVABLE
    from tests.shaders.glsl import compile_glsl

    source = _write(tmp_path / "in.spv", compile_glsl(PROVABLE, "comp", target_env="vulkan1.2"))
    output = tmp_path / "out.spv"
    argv = ["instrument", str(source), "-o", str(output), "--descriptor-state"]
    assert main(argv) == 0
    assert "entry point main also kept without checks" in capsys.readouterr().out
    assert main([*argv, "--json"]) == 0
    (entry,) = json.loads(capsys.readouterr().out)["entry_functions_copied"]
    assert entry["entry_point"] == "main" and entry["stage_bit"] == 0x20
    assert "within" in {row[0] for row in entry["terms"]}
