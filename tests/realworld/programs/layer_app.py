"""The layer tests' Python app (``tests/layer/apps/vk_app.py``) as a library: one instance,
one device, a compute shader dispatched over a storage buffer, everything destroyed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "layer" / "apps"))

from vk_app import App, parse  # found through the path above


def open_app(shader: str) -> Any:
    """Instance and device made, nothing run yet."""
    return App(parse(["--shader", shader, "--dispatches", "8"]))


def run_compute(app: Any) -> bytes:
    """The SHA-256 of the buffer the dispatches wrote, as text."""
    return str(app.run_compute()["data_sha256"]).encode()


def compute_once(shader: str) -> bytes:
    app = open_app(shader)
    digest = run_compute(app)
    app.close()
    return digest
