"""``gpuav layer-path`` and ``gpuav run``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpuav.layer.cli import EXIT_ERRORS_FOUND
from gpuav.layer.native.build import MANIFEST_NAME
from tests.layer.conftest import APPS, FAKE_INSTRUMENTER, app_environment

pytestmark = pytest.mark.vulkan


def gpuav(*arguments: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gpuav.cli", *arguments],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_layer_path_prints_the_manifest_folder(layer_folder: Path, tmp_path: Path) -> None:
    done = gpuav("layer-path", env=app_environment(None), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder = Path(done.stdout.strip())
    assert folder == layer_folder
    assert (folder / MANIFEST_NAME).is_file()


@pytest.mark.parametrize("fail_on_error", [False, True])
def test_run_reports_and_sets_the_exit_status(
    spirv, layer_folder: Path, tmp_path: Path, fail_on_error: bool
) -> None:
    report = tmp_path / "report.json"
    environment = app_environment(None, extra={"GPUAV_INSTRUMENTER": FAKE_INSTRUMENTER})
    app = [sys.executable, str(APPS / "vk_app.py"), "--shader", str(spirv("region_reporting.comp")),
           "--bad-dispatch", "2"]  # fmt: skip
    options = ["--json", str(report), *(["--fail-on-error"] if fail_on_error else [])]
    done = gpuav("run", *options, "--", *app, env=environment, cwd=tmp_path)
    assert done.returncode == (EXIT_ERRORS_FOUND if fail_on_error else 0), done.stderr
    assert "gpuav: [GPUAV-descriptor-index-out-of-bounds] Index of 6" in done.stderr
    content = json.loads(report.read_text())
    assert content["exit_status"] == 0 and content["errors"] == 1
    assert "Dispatch Index 2 (vkCmdDispatch)" in content["messages"][0]["text"]


def test_run_passes_the_program_status_through(tmp_path: Path, layer_folder: Path) -> None:
    done = gpuav(
        "run",
        "--",
        sys.executable,
        "-c",
        "raise SystemExit(7)",
        env=app_environment(None),
        cwd=tmp_path,
    )
    assert done.returncode == 7
