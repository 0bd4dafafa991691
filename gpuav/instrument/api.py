"""The one entry point the layer calls to instrument a shader.

``instrument_shader`` takes the app's SPIR-V words and returns instrumented words whose checks
write error records (``gpuav.instrument.record``) into the storage buffer
``{uint DataWrittenLength; uint Data[];}`` at (``descriptor_set``, binding 0), tagging each
record with ``shader_id``. It raises a ``GpuavError`` subclass when the shader cannot be
instrumented; the layer then keeps the original shader.
"""

from __future__ import annotations

from gpuav.errors import UnsupportedShader


def instrument_shader(words: list[int], *, shader_id: int, descriptor_set: int) -> list[int]:
    """Instrumented copy of ``words`` (placeholder until the instrumentation pass lands)."""
    raise UnsupportedShader("instrumentation pass not available yet")
