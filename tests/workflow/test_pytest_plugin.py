"""``pytest --gpuav``: pytester runs inner test sessions (each in a process of its own, as a
user's would be) whose tests run a real Vulkan program on lavapipe, in-process and as a
subprocess: the planted bug (a descriptor index past the array) fails its test, with gpuav's
message in the report; the fixed twin passes; ``--gpuav-warn`` only reports; without the
options the installed plugin changes nothing."""

from __future__ import annotations

import pytest

from tests.workflow.programs import APPS, dispatch_line

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.vulkan

INNER_TESTS = f"""
import subprocess
import sys

sys.path.insert(0, {str(APPS)!r})
import labeled_compute


def test_planted_bug_in_process():
    labeled_compute.run(6)


def test_fixed_twin_in_process():
    assert labeled_compute.run(2) == 102


def test_planted_bug_in_a_subprocess():
    program = [sys.executable, labeled_compute.__file__, "--index", "6"]
    subprocess.run(program, check=True, timeout=300)


def test_fixed_twin_in_a_subprocess():
    program = [sys.executable, labeled_compute.__file__, "--index", "2"]
    done = subprocess.run(program, check=True, capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "102"
"""
FAILED = ["test_planted_bug_in_process", "test_planted_bug_in_a_subprocess"]


@pytest.fixture
def inner(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    for key in ("GPUAV_ENABLE", "GPUAV_MESSAGE_LOG", "VK_INSTANCE_LAYERS", "VK_ADD_LAYER_PATH"):
        monkeypatch.delenv(key, raising=False)
    pytester.makepyfile(test_program=INNER_TESTS)
    return pytester


@pytest.mark.parametrize("option", [["--gpuav"], ["-p", "gpuav"]])
def test_a_test_with_a_planted_bug_fails_and_its_fixed_twin_passes(
    inner: pytest.Pytester, option: list[str]
) -> None:
    result = inner.runpytest_subprocess(*option, "-p", "no:cacheprovider", timeout=600)
    result.assert_outcomes(passed=2, failed=2)
    output = result.stdout.str()
    for name in FAILED:
        assert f"FAILED test_program.py::{name}" in output
    assert "gpuav reported 1 error during call:" in output
    assert (
        "[GPUAV-descriptor-index-out-of-bounds] Index of 6 used to index descriptor array" in output
    )
    # The in-process run is recorded in the test's own interpreter: its Python line is known.
    assert f"Recorded at labeled_compute.py:{dispatch_line()} in Program.record_step()." in output
    assert "Labels: startup > frame 1 > shadow pass." in output


def test_gpuav_warn_reports_without_failing(inner: pytest.Pytester) -> None:
    result = inner.runpytest_subprocess(
        "--gpuav-warn", "-rA", "-p", "no:cacheprovider", timeout=600
    )
    result.assert_outcomes(passed=4)
    output = result.stdout.str()
    assert output.count("gpuav messages (call)") == 2
    assert "Index of 6 used to index descriptor array of length 4" in output
    assert "test_program.py::test_planted_bug_in_process: 1 error" in output


def test_without_the_options_the_installed_plugin_changes_nothing(inner: pytest.Pytester) -> None:
    result = inner.runpytest_subprocess("-rA", "-p", "no:cacheprovider", timeout=600)
    # The bad index reads garbage or nothing on lavapipe, but nothing checks it.
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 4
    assert outcomes.get("passed", 0) >= 2
    output = result.stdout.str()
    assert "plugins:" in output and "gpuav-" in output  # installed, and loaded
    assert "GPUAV-" not in output and "gpuav messages" not in output
