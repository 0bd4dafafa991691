"""Shader object binaries (vkGetShaderBinaryDataEXT) never carry gpuav's code.

An instrumented shader object's own binary holds gpuav's code, which reads the device address
gpuav pushes with each action. Kept in a shader cache on disk and loaded by a run without
gpuav (or by a later run with it, which cannot know the binary), it would read an address
nobody pushed: lavapipe crashes. So the binary handed out is the driver's binary of the app's
own code, from a twin made with the app's create infos unchanged (and destroyed at once), which
is exactly what the app gets without gpuav. A shader object made again from that binary in
this process is made from the instrumented SPIR-V instead, with the specialization the first
one had (binary code carries its own), so it stays checked.
"""

from __future__ import annotations

import hashlib

from gpuav.layer.state import DeviceState, ShaderObjectState

Specialization = tuple[tuple[tuple[int, int, int], ...], bytes]


def _digest(binary: bytes) -> bytes:
    return hashlib.blake2b(binary, digest_size=16).digest()


def hand_out(device: DeviceState, state: ShaderObjectState) -> bytes | None:
    """The binary vkGetShaderBinaryDataEXT gives for an instrumented shader object (None: no
    twin could be made, and it fails rather than give out gpuav's code); remembered, so that
    a shader object made from it later in this process is known."""
    binary = state.binary
    if binary is not None:
        device.shader_binaries[_digest(binary)] = state
    return binary


def handed_out(device: DeviceState, binary: bytes) -> ShaderObjectState | None:
    """The instrumented shader object whose app-code binary this is, if gpuav handed it out."""
    return device.shader_binaries.get(_digest(binary))
