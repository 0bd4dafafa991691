"""A small Vulkan execution harness for tests: run shaders on lavapipe with test-bound buffers.

Typical use, with the ``vk`` fixture (``tests/harness/fixtures.py``)::

    out = vk.buffer(64)
    sets = {0: [Binding(0, "storage_buffer", [out])]}
    result = vk.run_compute(words, sets, group_count=(4, 1, 1))
    result.buffer(out)  # numpy uint32 array

Names are loaded lazily: importing the package (as conftest does for the fixtures) must not
import ``vulkan``, which raises when no Vulkan loader is installed.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Buffer": "buffers",
    "BufferRange": "buffers",
    "BufferView": "buffers",
    "ValidationMessage": "context",
    "VulkanContext": "context",
    "DebugOutputBuffer": "debug_buffer",
    "decode_records": "debug_buffer",
    "PARTIALLY_BOUND": "descriptors",
    "UPDATE_AFTER_BIND": "descriptors",
    "VARIABLE_COUNT": "descriptors",
    "Binding": "descriptors",
    "BindingFlags": "descriptors",
    "DescriptorSetSpec": "descriptors",
    "Draw": "graphics",
    "VertexBuffer": "graphics",
    "run_graphics": "graphics",
    "Image": "images",
    "ImageView": "images",
    "Sampler": "images",
    "RunResult": "pipeline",
    "run_compute": "pipeline",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
