"""Local arrays under the real layer and the real instrumenter: a C program (knowing nothing of
gpuav) indexes a Function array and a shared array with the index it is given. Out of range,
the layer reports GPUAV-local-array-index-out-of-bounds with the variable, its type, the
index, the length and the source line, the skipped read gives zero, and ``gpuav run --json``
carries the same facts; in range, the results equal those of a run without the layer. No
other tool checks these accesses (the Khronos layer's GPU-AV does not)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jsonschema
import pytest

from gpuav.report.json_report import report_schema
from tests.apps_common.build import compile_c_program
from tests.layer.conftest import APP_TIMEOUT, APPS, app_environment, parse_c_output
from tests.shaders.glsl import compile_glsl
from tests.workflow.programs import gpuav_run

pytestmark = pytest.mark.vulkan

SHADER = """#version 450
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; } data;
layout(set = 0, binding = 1) buffer Out { uint o[16]; } o;
layout(push_constant) uniform P { int index; } p;
shared uint tile[2];
void main() {
    uint weights[4] = uint[](10u, 20u, 30u, 40u);
    tile[0] = data.v[0]; tile[1] = data.v[1];
    o.o[0] = weights[p.index] + 1u;
    o.o[1] = tile[p.index & 7] + 1u;
}
"""
MESSAGE_ID = "GPUAV-local-array-index-out-of-bounds"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """buffer_range_app (one dispatch, push constant = the index) and the shader."""
    folder = tmp_path_factory.mktemp("local_arrays")
    app = compile_c_program(folder / "buffer_range_app", [APPS / "buffer_range_app.c"])
    shader = folder / "weights.spv"
    words = compile_glsl(SHADER, "comp", debug="g", source_name="weights.comp")
    shader.write_bytes(b"".join(word.to_bytes(4, "little") for word in words))
    return app, shader


def _argv(program: tuple[Path, Path], index: int) -> list[str]:
    app, shader = program
    return [str(app), str(shader), "storage", "64", "0", "0", "0", str(index)]


def _run(argv: list[str], environment: dict[str, str], cwd: Path) -> dict[str, object]:
    done = subprocess.run(
        argv, env=environment, cwd=cwd, capture_output=True, text=True, timeout=APP_TIMEOUT
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return parse_c_output(done.stdout)


def test_out_of_range_reads_are_reported_and_give_zero(
    program: tuple[Path, Path], layer_folder: Path, tmp_path: Path
) -> None:
    parsed = _run(_argv(program, 4), app_environment(layer_folder, instrumenter=None), tmp_path)
    messages = [m for m in parsed["messages"] if m["id"] == MESSAGE_ID]  # type: ignore[union-attr]
    expected = [
        "Index 4 (one past the end) out of bounds of local array `weights` (uint[4], Function "
        "storage). At weights.comp line 10.",
        "Index 4 out of bounds of shared array `tile` (uint[2], Workgroup storage). "
        "At weights.comp line 11.",
    ]
    # The app prints each message on one line, its first sentence first.
    assert len(messages) == len(expected)
    for first in expected:
        assert any(m["text"].startswith(first) for m in messages), first
    assert all(m["severity"] == 0x1000 for m in messages)
    result = str(parsed["result"]).split()
    assert result[:2] == ["1", "1"]  # both skipped reads gave zero


@pytest.mark.parametrize("index", [0, 1])
def test_in_range_results_equal_a_run_without_the_layer(
    program: tuple[Path, Path], layer_folder: Path, tmp_path: Path, index: int
) -> None:
    argv = _argv(program, index)
    checked = _run(argv, app_environment(layer_folder, instrumenter=None), tmp_path)
    plain = _run(argv, app_environment(None), tmp_path)
    assert [m for m in checked["messages"] if m["id"] == MESSAGE_ID] == []  # type: ignore[union-attr]
    assert checked["result"] == plain["result"]
    assert str(checked["result"]).split()[0] == str(10 * (index + 1) + 1)


def test_json_report_carries_the_index_the_length_and_the_variable(
    program: tuple[Path, Path], tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    gpuav_run(["--json", str(report)], _argv(program, -1), tmp_path)
    content = json.loads(report.read_text())
    jsonschema.validate(content, report_schema())
    errors = {
        m["error"]["indexed"]["root"]: m for m in content["messages"] if m["id"] == MESSAGE_ID
    }
    weights = errors["weights"]["error"]
    assert (weights["index"], weights["array_length"], weights["access"]) == (-1, 4, "read")
    assert weights["indexed"]["storage_class"] == "Function"
    assert weights["indexed"]["type"] == "uint[4]"
    assert errors["weights"]["source"]["line"] == 10
    tile = errors["tile"]["error"]
    assert (tile["index"], tile["array_length"]) == (7, 2)
    assert tile["indexed"]["storage_class"] == "Workgroup"
