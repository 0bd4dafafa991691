"""Where the programs put what they computed: one raw file per result, compared byte for byte
between the run without gpuav and the run under it."""

from __future__ import annotations

import sys
from pathlib import Path


def output_folder() -> Path:
    """The folder named by the program's first argument (created if needed)."""
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def save(name: str, data: bytes) -> None:
    (output_folder() / f"{name}.bin").write_bytes(data)
