"""Descriptor indices as the checks take them: 32-bit unsigned words, whatever the width and
signedness the shader gave them, and compares that stay exact for 64-bit indices."""

from __future__ import annotations

from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op


class IndexConversions:
    def __init__(self, builder: Builder, types: Types) -> None:
        self.builder = builder
        self.types = types
        # value -> its uint conversion, shared by one guard's check and safe indices (all in
        # the guard's head block); None outside a guard
        self.cache: dict[int, int] | None = None

    def as_uint(self, value: int) -> int:
        """``value`` as a 32-bit uint: the same bits, or truncated/extended to 32 bits."""
        cache = self.cache
        if cache is None:
            return self._convert(value)
        if value not in cache:
            cache[value] = self._convert(value)
        return cache[value]

    def is_wide(self, index: int) -> bool:
        return self.types.constant_value(index) is None and self._int_type(index)[1] == 64

    def less_than(self, index: int, index_uint: int, length_uint: int) -> int:
        """index < length as unsigned numbers (a negative index is huge, so out of bounds)."""
        builder = self.builder
        bool_ = builder.type_bool()
        if self.is_wide(index):
            wide = builder.op(Op.UConvert, builder.type_int(64, False), length_uint)
            return builder.op(Op.ULessThan, bool_, index, wide)
        return builder.op(Op.ULessThan, bool_, index_uint, length_uint)

    def _int_type(self, value: int) -> tuple[int, int, bool]:
        type_id = self.types.type_of(value)
        if type_id is None or self.types.opcode(type_id) != Op.TypeInt:
            raise RuntimeError(f"%{value} is not an integer")
        return type_id, self.types.width(type_id), self.types.is_signed(type_id)

    def _convert(self, value: int) -> int:
        builder = self.builder
        uint = builder.type_int(32, False)
        constant = self.types.constant_value(value)
        if constant is not None:
            return builder.constant_uint(constant & 0xFFFF_FFFF)
        type_id, width, signed = self._int_type(value)
        if type_id == uint:
            return value
        if width == 32:
            return builder.op(Op.Bitcast, uint, value)
        if width < 32 and signed:
            return builder.op(
                Op.Bitcast, uint, builder.op(Op.SConvert, builder.type_int(32, True), value)
            )
        return builder.op(Op.UConvert, uint, value)
