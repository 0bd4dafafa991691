# ruff: noqa: F821
# mypy: ignore-errors
# (``ffi`` is injected by the init code that executes this file.)
"""Used when gpuav itself cannot be imported in the host process.

Executed by the embedding init code with ``ffi`` and ``lib`` of the native module in its
globals; imports nothing. Answering 0 tells layer.c that the Python side is not there, so
its C wrappers pass every call down the chain: the app runs exactly as without the layer.
"""


@ffi.def_extern(error=0)
def gpuav_python_attach():
    return 0
