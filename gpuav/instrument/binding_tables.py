"""Each binding's table (``gpuav_binding_table``: where its descriptors' words start, its
length, whether the state knows it), read once per function in the function's first block and
shared by the passes that check that binding's descriptors, so that an access with a changing
descriptor index reads only its own descriptor's word."""

from __future__ import annotations

from gpuav.instrument.state_reader import TABLE_COMPONENTS
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op
from gpuav.spirv.module import Function


class BindingTables:
    def __init__(self, builder: Builder, binding_table: int | None) -> None:
        self.builder = builder
        self.binding_table = binding_table
        # (function id, set, binding, length given for no state) -> the table (uvec4)
        self._read: dict[tuple[int, int, int, int], int] = {}

    @property
    def available(self) -> bool:
        return self.binding_table is not None

    @property
    def called(self) -> bool:
        return bool(self._read)

    def table(self, function: Function, descriptor_set: int, binding: int, length: int) -> int:
        """The table, emitted in ``function``'s first block (after its variables) the first
        time; call before the guard splits anything."""
        assert self.binding_table is not None
        key = (function.id, descriptor_set, binding, length)
        if key not in self._read:
            builder = self.builder
            builder.position_after_variables(function)
            uint = builder.type_int(32, False)
            self._read[key] = builder.op(
                Op.FunctionCall,
                builder.type_vector(uint, TABLE_COMPONENTS),
                self.binding_table,
                builder.constant_uint(descriptor_set),
                builder.constant_uint(binding),
                builder.constant_uint(length),
            )
        return self._read[key]
