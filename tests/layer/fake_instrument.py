"""A stand-in instrumentation pass for the layer tests (``GPUAV_INSTRUMENTER``).

It instruments nothing: it returns the shader as it is, so the whole instrumented path of the
layer (shadow modules, patched layouts, output blocks bound per action, read-back) runs with
results that must stay bit-identical. Shaders that write their own error record (see
``shaders/*_reporting.*``) name placeholders that it fills in: descriptor set 30 becomes the
layer's set index and the constant 0x0BADC0DE becomes the shader id.
The header's generator word is changed so that the layer sees an instrumented copy.
"""

from __future__ import annotations

import os

from gpuav.errors import UnsupportedShader

GENERATOR_WORD = 2
PLACEHOLDER_SET = 30
PLACEHOLDER_SHADER_ID = 0x0BADC0DE
OP_DECORATE = 71
OP_CONSTANT = 43
DECORATION_DESCRIPTOR_SET = 34


def instrument(words: list[int], *, shader_id: int, descriptor_set: int) -> list[int]:
    if os.environ.get("GPUAV_FAKE_INSTRUMENT_REFUSE"):
        raise UnsupportedShader("refused by the test instrumenter")
    out = list(words)
    # The layer treats unchanged words as "nothing to check": mark the copy as ours through
    # the header's generator word, which no driver reads.
    out[GENERATOR_WORD] ^= 1
    index = 5  # after the header
    while index < len(out):
        count, opcode = out[index] >> 16, out[index] & 0xFFFF
        if count == 0:
            raise UnsupportedShader("malformed instruction")
        if (
            opcode == OP_DECORATE
            and count == 4
            and out[index + 2] == DECORATION_DESCRIPTOR_SET
            and out[index + 3] == PLACEHOLDER_SET
        ):
            out[index + 3] = descriptor_set
        if opcode == OP_CONSTANT and count == 4 and out[index + 3] == PLACEHOLDER_SHADER_ID:
            out[index + 3] = shader_id
        index += count
    return out
