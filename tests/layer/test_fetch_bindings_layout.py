"""The bytes of fetch_bindings.c's bound state that key the bindings read from it
(``fetch_bindings._take``) are where the struct has them: a key that missed a field would
give one command buffer's draws the fetch of other buffers; the push constants, which change
at nearly every draw, come after them and are no part of it."""

from __future__ import annotations

import cffi

from gpuav.layer.native import build, fetch_bindings


def test_the_key_bytes_run_from_past_the_change_count_through_the_vertex_bindings() -> None:
    ffi = cffi.FFI()
    ffi.cdef(build.FETCH_BINDINGS_STRUCTS)
    assert ffi.offsetof("struct gpuav_fetch_bindings", "changes") == 0
    assert ffi.sizeof("uint64_t") == fetch_bindings.CHANGES_BYTES
    assert ffi.offsetof("struct gpuav_fetch_bindings", "vertex") == fetch_bindings.HEAD_BYTES
    binding = ffi.sizeof("struct gpuav_vertex_binding")
    assert binding == fetch_bindings.VERTEX_BINDING_BYTES
    key_end = fetch_bindings.HEAD_BYTES + 64 * binding
    assert ffi.offsetof("struct gpuav_fetch_bindings", "pushed_words") == key_end
