"""``gpuav decode``: a dumped buffer and the original shader in, messages out (text or JSON)."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from gpuav.cli import main
from gpuav.instrument.record import MAX_RECORD_WORDS, ErrorCode, ErrorRecord, Stage
from gpuav.spirv.grammar import Op
from tests.report import stage_shaders
from tests.report.helpers import float_bits, instruction_indices
from tests.shaders.glsl import compile_glsl


def write_words(path: Path, words: list[int]) -> Path:
    path.write_bytes(struct.pack(f"<{len(words)}I", *words))
    return path


@pytest.fixture
def dumped(tmp_path: Path) -> tuple[Path, Path, int]:
    words = compile_glsl(stage_shaders.FRAGMENT, "frag", debug="g", source_name="cube.frag")
    (index,) = instruction_indices(words, Op.ImageSampleImplicitLod)
    records = [
        ErrorRecord(5, index, Stage.FRAGMENT, (float_bits(x), float_bits(2.5)), ErrorCode(0), 6, 6)
        for x in (419.5, 420.5)
    ]
    data = [word for record in records for word in record.encode()]
    buffer = write_words(tmp_path / "block.bin", [len(data) + 10, *data])  # one record dropped
    shader = write_words(tmp_path / "cube.frag.spv", words)
    return buffer, shader, index


def test_text_output(dumped: tuple[Path, Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    buffer, shader, index = dumped
    assert main(["decode", str(buffer), "--shader", str(shader)]) == 0
    assert capsys.readouterr().out == (
        "gpuav: [GPUAV-descriptor-index-out-of-bounds] Index of 6 used to index descriptor "
        "array of length 6. At cube.frag line 7.\n"
        "  7: uFragColor = push.light * texture(tex[push.tex_ind], texcoord.xy);\n"
        "  Descriptor: tex, set 0, binding 1.\n"
        "  Action: decoded from block.bin.\n"
        f"  Shader Instruction Index = {index}.\n"
        "  Stage = Fragment. Fragment coord (x,y) = (419.5, 2.5).\n"
        "  (and 1 more invocation with this error)\n"
        "gpuav: [GPUAV-output-block-full] about 1 more error record did not fit after the 2 "
        "read; the messages are a sample of the errors\n"
    )


def test_json_output(dumped: tuple[Path, Path, int], capsys: pytest.CaptureFixture[str]) -> None:
    buffer, shader, index = dumped
    assert main(["decode", str(buffer), "--shader", str(shader), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["written_length"] == 30
    assert document["diagnostics"] == []
    assert document["dropped_records"] == 1
    (message,) = document["messages"]
    text = message.pop("text")
    assert text.startswith("Index of 6 used to index descriptor array of length 6.")
    assert message == {
        "message_id": "GPUAV-descriptor-index-out-of-bounds",
        "severity": "error",
        "count": 2,
        "shader_id": 5,
        "instruction_index": index,
        "stage": "fragment",
        "stage_words": [float_bits(419.5), float_bits(2.5)],
        "error_code": 0,
        "descriptor_index": 6,
        "array_length": 6,
        "source": {
            "file": "cube.frag",
            "line": 7,
            "column": 0,
            "text": "    uFragColor = push.light * texture(tex[push.tex_ind], texcoord.xy);",
        },
        "descriptor": {"name": "tex", "set": 0, "binding": 1},
    }


def test_shader_id_option_selects_the_records_of_that_shader(
    dumped: tuple[Path, Path, int], capsys: pytest.CaptureFixture[str]
) -> None:
    buffer, shader, _ = dumped
    assert main(["decode", str(buffer), "--shader", str(shader), "--shader-id", "4"]) == 0
    out = capsys.readouterr().out
    assert "(unknown shader)" in out and "Unknown shader id 5" in out


def test_empty_and_corrupt_buffers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shader = write_words(tmp_path / "s.spv", compile_glsl(stage_shaders.FRAGMENT, "frag"))
    clean = write_words(tmp_path / "clean.bin", [0, 0, 0, 0])
    assert main(["decode", str(clean), "--shader", str(shader)]) == 0
    assert capsys.readouterr().out == "gpuav decode: no error records\n"
    corrupt = write_words(tmp_path / "corrupt.bin", [3, 2, 0, 0])
    assert main(["decode", str(corrupt), "--shader", str(shader)]) == 0
    assert capsys.readouterr().out == (
        "gpuav: [GPUAV-corrupt-output] corrupt record at Data[0]: size 2 is not between 8 and "
        f"{MAX_RECORD_WORDS}; stopped reading\n"
    )


def test_unreadable_input_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shader = write_words(tmp_path / "s.spv", compile_glsl(stage_shaders.FRAGMENT, "frag"))
    buffer = write_words(tmp_path / "b.bin", [0])
    assert main(["decode", str(tmp_path / "missing.bin"), "--shader", str(shader)]) == 2
    assert "missing.bin" in capsys.readouterr().err
    bad_shader = write_words(tmp_path / "bad.spv", [1, 2, 3])
    assert main(["decode", str(buffer), "--shader", str(bad_shader)]) == 2
    assert "bad magic number" in capsys.readouterr().err


def test_console_script(dumped: tuple[Path, Path, int]) -> None:
    buffer, shader, _ = dumped
    gpuav = shutil.which("gpuav", path=str(Path(sys.executable).parent))
    assert gpuav is not None, "the gpuav console script is not installed: pip install -e ."
    done = subprocess.run(
        [gpuav, "decode", str(buffer), "--shader", str(shader)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("gpuav: [GPUAV-descriptor-index-out-of-bounds] Index of 6")
