"""One record per invocation for the descriptors it found unusable (unwritten or destroyed).

A constant-index descriptor access tests a word read once per function (descriptor_bounds);
where the word says the descriptor may not be used, the access is skipped and, rather than a
record writer at every such access (drivers inline every call, and a shader may hold dozens
of texture reads), it notes the access in a Private ``uvec4`` (instruction index, descriptor
index, array length, set and binding; NOTHING_NOTED as first word when none) and a ``uvec2``
(the descriptor's word and the bits the access forbids there). Before each return of the
entry point the invocation writes one record of the last access it noted: unwritten (word 0)
or not fitting the access (``image_facts``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuav.instrument.record import ErrorCode
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op, StorageClass
from gpuav.spirv.module import Function

NOTHING_NOTED = 0xFFFF_FFFF
_RETURNS = (Op.Return, Op.ReturnValue)


@dataclass(frozen=True)
class NotedLookup:
    """What one checked descriptor of an access contributes to the note: whether it may be
    used (a bool id) and its record words (uint ids)."""

    usable: int
    index: int
    length: int
    set_binding: int
    word: int
    forbidden: int


class UnusableReports:
    """The Private note and the code that writes and reads it."""

    def __init__(self, builder: Builder, write_record: int, write_mismatch: int) -> None:
        self.builder = builder
        self.write_record = write_record
        self.write_mismatch = write_mismatch
        self.uint = builder.type_int(32, False)
        self.uvec4 = builder.type_vector(self.uint, 4)
        self.uvec2 = builder.type_vector(self.uint, 2)
        self._variables: tuple[int, int] | None = None

    @property
    def variables(self) -> tuple[int, ...]:
        """The Private notes, once an access needed them."""
        return self._variables or ()

    def _note_variables(self) -> tuple[int, int]:
        if self._variables is None:
            builder = self.builder
            nothing = builder.constant_uint(NOTHING_NOTED)
            zero = builder.constant_uint(0)
            initial = builder.declare(Op.ConstantComposite, self.uvec4, nothing, zero, zero, zero)
            pointer = builder.type_pointer(StorageClass.Private, self.uvec4)
            access = builder.declare(Op.Variable, pointer, StorageClass.Private, initial)
            builder.name(access, "gpuav_unusable_access")
            pointer = builder.type_pointer(StorageClass.Private, self.uvec2)
            initial = builder.declare(Op.ConstantComposite, self.uvec2, zero, zero)
            word = builder.declare(Op.Variable, pointer, StorageClass.Private, initial)
            builder.name(word, "gpuav_unusable_word")
            self._variables = (access, word)
        return self._variables

    def note(self, instruction_index: int, lookups: list[NotedLookup]) -> None:
        """At the insert point (the skipped access's branch): note the first lookup whose
        descriptor may not be used."""
        builder = self.builder
        chosen = lookups[-1]
        words = [chosen.index, chosen.length, chosen.set_binding, chosen.word, chosen.forbidden]
        for lookup in reversed(lookups[:-1]):
            mine = (lookup.index, lookup.length, lookup.set_binding, lookup.word, lookup.forbidden)
            words = [
                builder.op(Op.Select, self.uint, lookup.usable, later, own)
                for later, own in zip(words, mine, strict=True)
            ]
        access, word = self._note_variables()
        value = builder.op(
            Op.CompositeConstruct,
            self.uvec4,
            builder.constant_uint(instruction_index),
            *words[:3],
        )
        builder.op_void(Op.Store, access, value)
        builder.op_void(Op.Store, word, builder.op(Op.CompositeConstruct, self.uvec2, *words[3:]))

    def write_at_returns(self, function: Function) -> None:
        """Before each return of an entry point's function: the record of what was noted."""
        if self._variables is None:
            return
        access, word = self._variables
        builder = self.builder
        bool_ = builder.type_bool()
        void = builder.type_void()
        zero = builder.constant_uint(0)
        returning = [b for b in function.blocks if b.instructions[-1].opcode in _RETURNS]
        for block in returning:
            builder.position_at_start(block, function)
            builder.index = len(block.instructions) - 1
            noted = builder.op(Op.Load, self.uvec4, access)
            words = [builder.op(Op.CompositeExtract, self.uint, noted, k) for k in range(4)]
            found = builder.op(Op.Load, self.uvec2, word)
            state = [builder.op(Op.CompositeExtract, self.uint, found, k) for k in range(2)]
            some = builder.op(Op.INotEqual, bool_, words[0], builder.constant_uint(NOTHING_NOTED))
            with builder.if_then(some):
                written = builder.op(Op.INotEqual, bool_, state[0], zero)
                with builder.if_else(written) as (mismatched, unwritten):
                    with mismatched:
                        builder.op(Op.FunctionCall, void, self.write_mismatch, *words, *state)
                    with unwritten:
                        builder.op(
                            Op.FunctionCall,
                            void,
                            self.write_record,
                            words[0],
                            builder.constant_uint(ErrorCode.DESCRIPTOR_UNINITIALIZED),
                            *words[1:],
                        )
