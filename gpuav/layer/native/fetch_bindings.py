"""The Python side of fetch_bindings.c: the vertex and index buffers a command buffer has
bound, which layer.c notes without entering Python, taken over by the draw hooks that check
vertex fetches (``action_checks``)."""

from __future__ import annotations

from typing import Any

from gpuav.layer import action_checks, notices
from gpuav.layer.action_checks import ActionCheckState, checks_of
from gpuav.layer.native.dispatch import Native
from gpuav.layer.state import CommandBufferState

_changes: memoryview | None = None  # fetch_bindings.c's gpuav_fetch_changes, read in place


def _changes_in_c() -> memoryview:
    """A view of the C global (a memoryview index costs a third of cffi's global look-up)."""
    global _changes
    _changes = memoryview(
        Native.ffi.buffer(Native.ffi.addressof(Native.lib, "gpuav_fetch_changes"), 8)
    ).cast("Q")
    return _changes


def bound_buffers(state: CommandBufferState, command_buffer: int) -> ActionCheckState | None:
    """The command buffer's check state, with the vertex and index buffers that layer.c noted
    (fetch_bindings.c) taken over where they changed since its last draw; None (nothing bound,
    no state made) while the process has bound none. A draw reads one C global while no
    command buffer's bindings changed (most draws of most frames)."""
    noted = (_changes or _changes_in_c())[0]
    checks = state.checks
    if checks is None:
        if not noted:
            return None
        checks = checks_of(state)
    if noted != checks.bound_noted:
        # Noted before the bindings are read: a change in between is seen at the next draw.
        checks.bound_noted = noted
        bound = Native.lib.gpuav_fetch_bindings(command_buffer)
        changes = bound.changes
        if changes != checks.bound_changes:
            _take(state, checks, bound, changes)
    return checks


# The bytes of struct gpuav_fetch_bindings that say what is bound: from past its change count
# to the end of the highest vertex binding bound (build.FETCH_BINDINGS_STRUCTS).
CHANGES_BYTES = 8
HEAD_BYTES = 64
VERTEX_BINDING_BYTES = 32
MAX_KEPT_BINDINGS = 4096  # distinct bound states kept per device; then they are made anew


def _take(state: CommandBufferState, checks: ActionCheckState, bound: Any, changes: int) -> None:
    """Take over the bindings C noted, as the same Python objects wherever the same buffers
    were bound before (a renderer drawing many meshes binds each mesh's buffers every frame):
    the bytes of the bound state find them, and the fetch of a draw is then found by them."""
    engine = state.device.action_checks
    kept = {} if engine is None else engine.bound_states
    end = HEAD_BYTES + VERTEX_BINDING_BYTES * int(bound.vertex_bound).bit_length()
    raw = Native.ffi.buffer(bound, end)[CHANGES_BYTES:]
    taken = kept.get(raw)
    if taken is None:
        if len(kept) >= MAX_KEPT_BINDINGS:
            kept.clear()
        taken = kept[raw] = _read(state, bound, raw)
    action_checks.take_bound_buffers(checks, changes, taken)


def _read(state: CommandBufferState, bound: Any, raw: bytes) -> action_checks.BoundBuffers:
    vertex_buffers: dict[int, tuple[int, int, int, int | None]] = {}
    mask = int(bound.vertex_bound)
    if bound.unfollowed:
        # A binding number past what fetch_bindings.c keeps (no device has that many): the
        # vertex fetches of this recording go unchecked rather than checked against a part.
        state.device.reporter.emit_once("vertex-bindings", notices.vertex_bindings_unfollowed())
        mask = 0
    strided = int(bound.vertex_strided)
    while mask:
        slot = (mask & -mask).bit_length() - 1
        mask &= mask - 1
        held = bound.vertex[slot]
        stride = int(held.stride) if strided >> slot & 1 else None
        vertex_buffers[slot] = (int(held.buffer), int(held.offset), int(held.size), stride)
    index_buffer = None
    if bound.index_bound:
        index_buffer = (int(bound.index_buffer), int(bound.index_offset), int(bound.index_type),
                        int(bound.index_size))  # fmt: skip
    return vertex_buffers, index_buffer, raw
