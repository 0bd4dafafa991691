"""``gpuav run --json`` and ``--fail-on-error`` on a real Python program with a planted bug.

The report validates against the schema shipped in the package, and carries as data what the
message says: the error's numbers, the descriptor, the shader source line, the invocation, the
Python line that recorded the dispatch and the debug-utils labels open at it (regions begun on
the queue and in an earlier command buffer of the same submit).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest

from gpuav.layer.cli import EXIT_ERRORS_FOUND
from gpuav.report.json_report import build_report, report_schema
from tests.workflow.programs import PROGRAM, dispatch_line, gpuav_run

pytestmark = pytest.mark.vulkan
LABELS = ["startup", "frame 1", "shadow pass"]


def run_program(tmp_path: Path, index: int, *options: str) -> tuple[int, dict]:
    report = tmp_path / "report.json"
    done = gpuav_run(
        ["--json", str(report), *options], [sys.executable, str(PROGRAM), "--index", str(index)],
        tmp_path,
    )  # fmt: skip
    content = json.loads(report.read_text())
    jsonschema.validate(content, report_schema())
    return done.returncode, content


def test_the_report_of_a_bad_dispatch_holds_every_fact_as_data(tmp_path: Path) -> None:
    status, report = run_program(tmp_path, 6)
    assert status == 0
    assert (report["schema"], report["version"]) == ("gpuav-report", 1)
    assert (report["exit_status"], report["errors"], report["warnings"]) == (0, 1, 0)
    (message,) = report["messages"]
    line = dispatch_line()
    assert message["id"] == "GPUAV-descriptor-index-out-of-bounds"
    assert message["severity"] == "error" and message["occurrences"] == 1
    assert message["error"] == {
        "code": "index-out-of-bounds", "descriptor_index": 6, "array_length": 4, "details": [0],
    }  # fmt: skip
    assert message["descriptor"] == {"name": "items", "set": 0, "binding": 0, "index": 6}
    assert message["source"]["line"] == 7
    assert message["source"]["text"] == "result.word = items[push.index].value;"
    assert message["invocation"] == {"stage": "compute", "global_invocation_id": [0, 0, 0]}
    assert message["invocations"] == 1
    assert message["action"]["command"] == "vkCmdDispatch" and message["action"]["index"] == 0
    assert message["action"]["command_buffer"]["handle"] > 0
    assert message["pipeline"]["handle"] > 0 and message["shader"]["module"]["handle"] > 0
    assert message["recorded_at"] == {
        "file": str(PROGRAM), "line": line, "function": "Program.record_step",
    }  # fmt: skip
    assert message["labels"] == LABELS
    assert f"  Recorded at labeled_compute.py:{line} in Program.record_step().\n" in message["text"]
    assert "  Labels: startup > frame 1 > shadow pass.\n" in message["text"]


def test_the_fixed_program_has_an_empty_report(tmp_path: Path) -> None:
    status, report = run_program(tmp_path, 2, "--fail-on-error")
    assert status == 0
    assert (report["errors"], report["warnings"], report["messages"]) == (0, 0, [])


def test_fail_on_error_exits_3_only_when_the_program_itself_succeeded(tmp_path: Path) -> None:
    status, report = run_program(tmp_path, 6, "--fail-on-error")
    assert status == EXIT_ERRORS_FOUND == 3
    assert report["exit_status"] == 0 and report["errors"] == 1
    # The program's own failure wins: its status is passed through, errors or not.
    failing = ["-c", f"import sys; sys.path.insert(0, {str(PROGRAM.parent)!r}); "
               "import labeled_compute; labeled_compute.run(6); sys.exit(5)"]  # fmt: skip
    report_path = tmp_path / "failing.json"
    done = gpuav_run(
        ["--json", str(report_path), "--fail-on-error"], [sys.executable, *failing], tmp_path
    )
    content = json.loads(report_path.read_text())
    assert done.returncode == 5, done.stderr
    assert content["exit_status"] == 5 and content["errors"] == 1


def test_repeated_messages_fold_into_one_object_with_occurrences() -> None:
    entry = {"message_id": "GPUAV-x", "severity": "error", "text": "t", "objects": [],
             "fields": {"invocations": 3, "labels": ["a"]}}  # fmt: skip
    note = {"message_id": "GPUAV-note", "severity": "info", "text": "n", "objects": []}
    report = build_report([entry, note, entry, note], 0)
    jsonschema.validate(report, report_schema())
    assert [m["id"] for m in report["messages"]] == ["GPUAV-x", "GPUAV-note", "GPUAV-note"]
    first = report["messages"][0]
    assert (first["occurrences"], first["invocations"], first["labels"]) == (2, 6, ["a"])
    assert report["messages"][1]["recorded_at"] is None and report["messages"][1]["labels"] == []
    assert report["errors"] == 1
