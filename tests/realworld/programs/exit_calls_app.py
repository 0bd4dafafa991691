"""Vulkan calls at the end of a Python process (issue 13, item 3).

usage: exit_calls_app.py OUTPUT_FOLDER SHADER.spv python-atexit|python-atexit-first|after-finalize
                         [LIBRARY.so]

python-atexit: an ``atexit`` handler runs a second compute and destroys the device and the
instance while the interpreter finalizes. python-atexit-first: the same handler, registered
before the first Vulkan call, so that it runs after any handler the layer registers (its
command buffers are recorded and submitted once the layer's Python side is gone).
after-finalize: the instance and device are handed to a C library (``late_teardown.c``) whose
libc ``atexit`` handler waits for the device and destroys it and the instance after the
interpreter has finalized, as C++ destructors and ncnn do.
"""

from __future__ import annotations

import atexit
import ctypes
import sys
from typing import Any

import vulkan as vk
from layer_app import open_app, run_compute
from results import output_folder, save


def finish_at_python_exit(app: Any) -> None:
    save("at_exit", run_compute(app))
    app.close()


def hand_over_to_c(app: Any, library_path: str) -> None:
    """Everything but the device and the instance is destroyed here; C destroys those two."""
    vk.vkDestroyEvent(app.device, app.event, None)
    vk.vkDestroyCommandPool(app.device, app.pool, None)
    library = ctypes.CDLL(library_path)
    library.destroy_at_exit.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p]
    marker = str(output_folder() / "after_finalize.bin").encode()
    handle = vk.ffi.cast("uintptr_t", app.instance), vk.ffi.cast("uintptr_t", app.device)
    library.destroy_at_exit(int(handle[0]), int(handle[1]), marker)


def main() -> None:
    shader, mode = sys.argv[2], sys.argv[3]
    opened: list[Any] = []
    if mode == "python-atexit-first":
        atexit.register(lambda: finish_at_python_exit(opened[0]))
    app = open_app(shader)
    opened.append(app)
    save("compute", run_compute(app))
    if mode == "python-atexit":
        atexit.register(finish_at_python_exit, app)
    elif mode == "after-finalize":
        hand_over_to_c(app, sys.argv[4])


main()
