"""The real pass with the buffer-range record writer emptied, for side-by-side timing.

``GPUAV_INSTRUMENTER=benchmarks.silent_range_records:instrument`` runs the real pass, then
makes ``gpuav_write_range_record`` return at once. Every check, branch and phi stays; only the
failure path's writes (atomics and stores into gpuav's output buffer, which the driver must
keep ordered with the app's own accesses) are gone. The difference to plain gpuav is what the
presence of that path inside a loop costs. Only for benchmarks: errors are no longer reported.
"""

from __future__ import annotations

from typing import Any

from gpuav.instrument.api import instrument_shader
from gpuav.spirv import read
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.writer import write

EMPTIED = "gpuav_write_range_record"


def instrument(words: list[int], **options: Any) -> list[int]:
    out = instrument_shader(words, **options)
    if out == words:
        return out
    module = read(out)
    named = {
        name.operands[0]
        for name in module.debug_names
        if name.opcode == Op.Name and decode_string(name.operands, 1)[0] == EMPTIED
    }
    for function in module.functions:
        if function.id in named:
            entry = function.blocks[0]
            entry.instructions = [Instruction(Op.Return, [])]
            function.blocks = [entry]
    return write(module)
