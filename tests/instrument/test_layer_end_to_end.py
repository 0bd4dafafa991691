"""The shipped pass under the real layer: the issue-8 indexing app, run through the loader.

The app's shader (tests/layer/shaders/indexing.comp) has no checks of its own: every message
here comes from code this pass added (descriptor_state on, as the layer asks for it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuav.layer.native.build import layer_dir
from tests.layer.conftest import APP_TIMEOUT, APPS, SHADERS, app_environment

pytestmark = pytest.mark.vulkan


def _run(tmp_path: Path, *arguments: str) -> dict[str, Any]:
    shader = tmp_path / "indexing.spv"
    subprocess.run(
        ["glslangValidator", "-V", "--target-env", "vulkan1.1", "-o", str(shader),
         str(SHADERS / "indexing.comp")],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    environment = app_environment(layer_dir(), instrumenter=None)
    completed = subprocess.run(
        [sys.executable, str(APPS / "indexing_app.py"), "--shader", str(shader), *arguments],
        env=environment, cwd=tmp_path, capture_output=True, text=True, timeout=APP_TIMEOUT,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stderr[-4000:]
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def _texts(result: dict[str, Any]) -> list[str]:
    return [message["text"] for message in result["messages"]]


def test_unwritten_descriptor_through_the_layer(tmp_path: Path) -> None:
    result = _run(tmp_path, "--write", "0,1,2", "--access", "0,2,5,1")
    (text,) = _texts(result)
    assert "Descriptor index 5" in text and "Dispatch Index 2" in text
    words = result["rounds"][0]
    assert [words[32 * k + 31] for k in range(4)] == [1000, 1002, 0, 1001]


def test_index_past_the_variable_count_through_the_layer(tmp_path: Path) -> None:
    result = _run(tmp_path, "--variable-count", "5", "--write", "0,1,2,3,4", "--access", "4,5,12")
    texts = _texts(result)
    assert len(texts) == 2, texts
    assert "Index of 5 used to index descriptor array of length 5." in texts[0]
    assert "Index of 12 used to index descriptor array of length 5." in texts[1]
    assert result["rounds"][0][31] == 1004


def test_every_set_used_reaches_the_buffers_by_device_address(tmp_path: Path) -> None:
    """The layer's fallback for a layout using every set index: the pass's context path."""
    result = _run(tmp_path, "--fill-sets", "--write", "0,1,2", "--access", "0,3,9")
    texts = _texts(result)
    assert any("Descriptor index 3" in t and "Dispatch Index 1" in t for t in texts), texts
    assert any(
        "Index of 9 used to index descriptor array of length 8." in t and "Dispatch Index 2" in t
        for t in texts
    ), texts
    assert result["rounds"][0][31] == 1000
