"""The pass as it was before issue 17's first step, for side-by-side timing in one tree.

``GPUAV_INSTRUMENTER=benchmarks.without_read_only:instrument`` runs the real pass, then drops
the NonWritable and Restrict decorations it put on gpuav's own buffers, so the benchmark can
time the same layer with and without them in one run.
"""

from __future__ import annotations

from typing import Any

from gpuav.instrument.api import instrument_shader
from gpuav.spirv import read
from gpuav.spirv.grammar import Decoration, Op
from gpuav.spirv.instruction import decode_string
from gpuav.spirv.writer import write

_DROPPED = (Decoration.NonWritable, Decoration.Restrict)


def instrument(words: list[int], **options: Any) -> list[int]:
    out = instrument_shader(words, **options)
    if out == words:
        return out
    module = read(out)
    ours = {
        name.operands[0]
        for name in module.debug_names
        if name.opcode == Op.Name and decode_string(name.operands, 1)[0].startswith("gpuav_")
    }
    module.annotations = [
        annotation
        for annotation in module.annotations
        if not (
            annotation.operands[0] in ours
            and (
                (annotation.opcode == Op.Decorate and annotation.operands[1] in _DROPPED)
                or (annotation.opcode == Op.MemberDecorate and annotation.operands[2] in _DROPPED)
            )
        )
    ]
    return write(module)
