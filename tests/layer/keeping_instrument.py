"""gpuav's own pass as a ``GPUAV_INSTRUMENTER`` override that also keeps every module it emits
in the folder ``GPUAV_TEST_KEEP`` names, so that a test can run spirv-val on exactly the words
the running layer gave the driver."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gpuav.instrument.api import instrument_shader


def instrument(words: list[int], **options: Any) -> list[int]:
    instrumented = instrument_shader(words, **options)
    folder = os.environ.get("GPUAV_TEST_KEEP")
    if folder and instrumented != words:
        kept = Path(folder) / f"{options['shader_id']}-{len(os.listdir(folder))}.spv"
        kept.write_bytes(b"".join(word.to_bytes(4, "little") for word in instrumented))
    return instrumented
