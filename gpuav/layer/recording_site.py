"""Where a Python program recorded an action: the line of the app's own code that led to it.

When the app is Python, the layer runs in the app's interpreter, on the thread that called the
Vulkan command, so the Python stack above the hook is the app's. Walking out from the hook,
frames of gpuav's layer, the standard library (ctypes, threading, runpy) and installed
packages (site-packages: the Vulkan binding, cffi, wgpu, taichi, ...) are passed over; the
first frame left is the line the developer wrote. When every frame is installed code (a
console script of an installed package), the innermost installed frame outside the known
bindings stands in. A C program has no frame above the hook but gpuav's: no site.

Each file is classified once; recording an action costs a frame walk of a few dict look-ups
and keeps the code object and instruction offset (line and names are read only when a message
is written).
"""

from __future__ import annotations

import os
import sys
from functools import cache
from types import CodeType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpuav.report.context import RecordingSite

# What a frame of a file is to the walk.
_PASS = 0  # gpuav's layer, the standard library, a binding: never the site
_INSTALLED = 1  # another installed package: the site only when no app frame is found
_APP = 2

# Installed packages that only carry calls to Vulkan (never the site, even as a fallback).
BINDING_PACKAGES = frozenset(
    {"vulkan", "cffi", "_cffi_backend", "wgpu", "rendercanvas", "ctypes", "pyvulkan", "kp"}
)
_INSTALLED_FOLDERS = ("site-packages", "dist-packages")
_LAYER_FOLDER = os.path.dirname(os.path.realpath(__file__)) + os.sep


@cache
def _stdlib_folders() -> tuple[str, ...]:
    """Found at the first file of neither gpuav's layer nor an installed package, which only a
    Python host has: a C host imports no ``sysconfig`` for it."""
    import sysconfig

    paths = sysconfig.get_paths()
    return tuple(
        dict.fromkeys(os.path.realpath(paths[key]) + os.sep for key in ("stdlib", "platstdlib"))
    )


RecordedAt = tuple[CodeType, int]


def classify(filename: str) -> int:
    """What frames of ``filename`` are to the walk (``_PASS``, ``_INSTALLED`` or ``_APP``)."""
    if filename.startswith("<"):
        # "<frozen runpy>" is the standard library; "<string>" and "<stdin>" are the app's.
        return _PASS if filename.startswith("<frozen") else _APP
    path = os.path.realpath(filename)
    parts = path.split(os.sep)
    for folder in _INSTALLED_FOLDERS:
        if folder in parts:
            position = len(parts) - 1 - parts[::-1].index(folder)
            top = parts[position + 1] if position + 1 < len(parts) else ""
            package = top.removesuffix(".py").split(".")[0]
            return _PASS if package in BINDING_PACKAGES else _INSTALLED
    if path.startswith(_LAYER_FOLDER) or path.startswith(_stdlib_folders()):
        return _PASS
    return _APP


_kinds: dict[str, int] = {}
_app_frames = True


def no_app_frames() -> None:
    """The interpreter is the layer's own (a C host): no hook has an app frame to find."""
    global _app_frames
    _app_frames = False


def capture(skip: int = 0) -> RecordedAt | None:
    """The app's frame that led to the current hook, as (code, instruction offset); None
    without one. The offset, not the line: finding a line walks the code's line table.

    ``skip``: frames above the caller known to be gpuav's, jumped over without making a frame
    object for each."""
    if not _app_frames:
        return None
    try:
        # The last skipped frame's f_back, not sys._getframe(1 + skip): in a C program's hook
        # that is None, where the deeper look-up raises (an exception per action).
        frame = sys._getframe(skip).f_back
    except ValueError:  # a shorter stack than the caller knows of
        return None
    fallback: RecordedAt | None = None
    kinds = _kinds
    while frame is not None:
        code = frame.f_code
        kind = kinds.get(code.co_filename)
        if kind is None:
            kind = kinds[code.co_filename] = classify(code.co_filename)
        if kind == _APP:
            return code, frame.f_lasti
        if kind == _INSTALLED and fallback is None:
            fallback = code, frame.f_lasti
        frame = frame.f_back
    return fallback


def site_of(recorded_at: RecordedAt | None) -> RecordingSite | None:
    if recorded_at is None:
        return None
    from gpuav.report.context import RecordingSite  # the report side, imported for reports

    code, offset = recorded_at
    line = next(
        (number for start, end, number in code.co_lines() if start <= offset < end and number),
        code.co_firstlineno,
    )
    return RecordingSite(code.co_filename, line, code.co_qualname.replace(".<locals>", ""))
