"""The stand-in instrumenter of ``fake_instrument`` that also takes issue 8's options.

With ``context_address`` (a push constant), shaders written for it
(``shaders/*_bda.comp``) get their placeholder push-constant member offset 4088 replaced by
the layer's offset, as the real pass would place the context address there. Accepting the
option is what turns the layer's buffer-device-address path on.
"""

from __future__ import annotations

from gpuav.errors import UnsupportedShader
from gpuav.instrument.descriptor_state import ContextAddressSource, PushConstantAddress
from tests.layer import fake_instrument

PLACEHOLDER_OFFSET = 4088
OP_MEMBER_DECORATE = 72
DECORATION_OFFSET = 35


def instrument(
    words: list[int],
    *,
    shader_id: int,
    descriptor_set: int,
    descriptor_state: bool = False,
    context_address: ContextAddressSource | None = None,
) -> list[int]:
    out = fake_instrument.instrument(words, shader_id=shader_id, descriptor_set=descriptor_set)
    if context_address is None:
        return out
    if not isinstance(context_address, PushConstantAddress):
        raise UnsupportedShader("the stand-in only takes push-constant context addresses")
    index = 5
    while index < len(out):
        count, opcode = out[index] >> 16, out[index] & 0xFFFF
        if (
            opcode == OP_MEMBER_DECORATE
            and count == 5
            and out[index + 3] == DECORATION_OFFSET
            and out[index + 4] == PLACEHOLDER_OFFSET
        ):
            out[index + 4] = context_address.offset
        index += count
    return out
