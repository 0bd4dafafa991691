"""The error the descriptor-bounds pass raises for a shader it will not transform.

Callers (the layer, the CLI) catch it, keep the original module and say why.
"""

from __future__ import annotations

from gpuav.errors import UnsupportedShader


class DescriptorBoundsUnsupported(UnsupportedShader):
    """The descriptor-bounds pass declined this shader; the message says why."""
