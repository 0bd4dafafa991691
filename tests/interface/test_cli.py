"""``gpuav interface`` and ``gpuav split-output-structs`` through the real entry point."""

from __future__ import annotations

import functools
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from gpuav.cli import main
from gpuav.spirv import read, words_from_bytes, write_bytes
from gpuav.validate.interface import analyze_interfaces
from tests.interface.test_seed_example import SEED_SHADER
from tests.shaders.glsl import compile_glsl, spirv_val


def _write(tmp_path: Path, words: list[int], name: str = "shader.spv") -> Path:
    path = tmp_path / name
    path.write_bytes(write_bytes(read(words)))
    return path


@pytest.fixture
def goku(tmp_path: Path) -> Path:
    return _write(tmp_path, compile_glsl(SEED_SHADER, "tese"))


@functools.cache
def _vulkaninfo_json() -> str:
    executable = shutil.which("vulkaninfo")
    assert executable is not None, "vulkaninfo is not on PATH: install vulkan-tools"
    with tempfile.TemporaryDirectory(prefix="gpuav-vulkaninfo-") as work:
        subprocess.run(
            [executable, "--json"], cwd=work, capture_output=True, check=True, timeout=120
        )
        (written,) = Path(work).glob("*.json")
        return written.read_text()


def test_table_and_no_diagnostics(goku: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interface", str(goku)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "entry point 'main' (TessellationEvaluation)"
    assert lines[1].split() == [
        "variable", "storage", "location", "component", "locations", "components", "xfb",
    ]  # fmt: skip
    assert lines[2].split() == [
        "goku", "out", "0", "-", "18", "62", "XfbBuffer=0", "XfbStride=256", "Offset=0",
    ]  # fmt: skip
    assert lines[3].split() == [".inner_struct_a", "0", "-", "9", "31", "-"]
    assert lines[4].split() == [".inner_struct_b", "9", "-", "9", "31", "-"]
    assert lines[-1] == "no interface problems found"


def test_limits_from_options(goku: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interface", str(goku), "--minimum-limits"]) == 1
    assert "VUID-RuntimeSpirv-Location-06272" in capsys.readouterr().out
    limit = "maxTessellationEvaluationOutputComponents"
    assert main(["interface", str(goku), "--limit", f"{limit}=68"]) == 1
    assert "allows locations 0..16" in capsys.readouterr().out
    assert main(["interface", str(goku), "--minimum-limits", "--limit", f"{limit}=72"]) == 0


def test_json_output(goku: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "interface",
                str(goku),
                "--json",
                "--limit",
                "maxTransformFeedbackBufferDataStride=128",
            ]
        )
        == 1
    )
    document = json.loads(capsys.readouterr().out)
    (entry,) = document["entry_points"]
    assert entry["execution_model"] == "TessellationEvaluation"
    (row,) = entry["variables"]
    assert (row["variable"], row["location"], row["locations"], row["components"]) == (
        "goku",
        0,
        18,
        62,
    )
    assert [(m["member"], m["location"]) for m in row["members"]] == [
        ("inner_struct_a", 0),
        ("inner_struct_b", 9),
    ]
    assert [d["rule"] for d in document["diagnostics"]] == ["VUID-RuntimeSpirv-XfbStride-06313"]


def test_device_json_from_vulkaninfo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    device = tmp_path / "device.json"
    device.write_text(_vulkaninfo_json())
    limits = json.loads(device.read_text())["capabilities"]["device"]["properties"]
    allowed = limits["VkPhysicalDeviceProperties"]["limits"]["maxVertexOutputComponents"] // 4
    body = "".join(f"layout(location = {i}) out vec4 o{i};\n" for i in range(allowed + 1))
    too_many = _write(tmp_path, compile_glsl(f"#version 450\n{body}void main() {{}}\n", "vert"))
    assert main(["interface", str(too_many), "--device-json", str(device)]) == 1
    out = capsys.readouterr().out
    assert f"'o{allowed}'" in out and "maxVertexOutputComponents" in out
    # The same diagnostic reaches `gpuav validate`, whose families include this one.
    assert main(["validate", str(too_many), "--device-json", str(device)]) == 1
    out = capsys.readouterr().out
    assert "VUID-RuntimeSpirv-Location-06272" in out and f"'o{allowed}'" in out


def test_bad_input_exits_2(tmp_path: Path, goku: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.spv"
    junk.write_bytes(b"\x01\x02\x03")
    assert main(["interface", str(junk)]) == 2
    assert main(["interface", str(goku), "--limit", "maxVertexOutputComponents=lots"]) == 2
    missing = tmp_path / "missing.json"
    assert main(["interface", str(goku), "--device-json", str(missing)]) == 2
    assert main(["split-output-structs", str(junk), "-o", str(tmp_path / "out.spv")]) == 2
    assert "gpuav" in capsys.readouterr().err


def test_split_command(tmp_path: Path, goku: Path) -> None:
    output = tmp_path / "split.spv"
    assert main(["split-output-structs", str(goku), "-o", str(output)]) == 0
    words = words_from_bytes(output.read_bytes())
    spirv_val(words)
    (entry,) = analyze_interfaces(read(words))
    assert [v.location for v in entry.user(3)] == [0, 6, 7, 8, 9, 15, 16, 17]
