"""The error hierarchy: every failure gpuav raises on purpose derives from GpuavError.

Callers that must never fail (the layer's entry points) catch GpuavError to fall back to the
original shader or the next layer's behaviour; anything else is a bug and is reported as such.
"""

from __future__ import annotations

# Exit status of every ``gpuav`` subcommand for input it cannot use (malformed SPIR-V, an
# unreadable file), as argparse uses for bad arguments.
EXIT_BAD_INPUT = 2


class GpuavError(Exception):
    """Root of every error gpuav raises deliberately."""


class DecodeError(GpuavError):
    """Malformed SPIR-V: carries where in the input the problem was found."""

    def __init__(self, reason: str, byte_offset: int, instruction_index: int | None) -> None:
        self.reason = reason
        self.byte_offset = byte_offset
        self.instruction_index = instruction_index
        where = f"byte offset {byte_offset}"
        if instruction_index is not None:
            where += f", instruction {instruction_index}"
        super().__init__(f"invalid SPIR-V at {where}: {reason}")


class UnsupportedShader(GpuavError):
    """A valid shader that a pass cannot transform; the caller keeps the original."""


class ResourceExhausted(GpuavError):
    """Device memory, descriptors or buffer space ran out."""


class SetupError(GpuavError):
    """The environment cannot run gpuav: missing tool, driver, compiler or Vulkan version."""
