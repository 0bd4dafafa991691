"""Each kind of malformed input raises DecodeError with the reason, byte offset and index.

The modules are built word by word from a small valid compute shader, so that each test
breaks exactly one thing and knows where.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from gpuav.errors import DecodeError
from gpuav.spirv import encode_string, read, write
from gpuav.spirv.grammar import MAGIC_NUMBER, Op

HEADER_BYTES = 20


@dataclass
class Words:
    """A module under construction that remembers where each instruction starts."""

    bound: int = 5
    body: list[int] = field(default_factory=list)
    starts: list[int] = field(default_factory=list)  # byte offset of each instruction

    def add(self, opcode: int, *operands: int, count: int | None = None) -> Words:
        self.starts.append(HEADER_BYTES + 4 * len(self.body))
        words = len(operands) + 1 if count is None else count
        self.body += [words << 16 | opcode, *operands]
        return self

    def words(self) -> list[int]:
        return [MAGIC_NUMBER, 0x00010000, 0, self.bound, 0, *self.body]


MAIN = encode_string("main")


def shader(*, name_first: bool = True) -> Words:
    """OpCapability Shader ... an empty compute entry point; ids 1..4, instruction 4 is OpName."""
    module = Words()
    module.add(Op.Capability, 1)
    module.add(Op.MemoryModel, 0, 1)
    module.add(Op.EntryPoint, 5, 1, *MAIN)
    module.add(Op.ExecutionMode, 1, 17, 1, 1, 1)
    if name_first:
        module.add(Op.Name, 1, *MAIN)
    module.add(Op.TypeVoid, 2)
    if not name_first:
        module.add(Op.Name, 1, *MAIN)
    module.add(Op.TypeFunction, 3, 2)
    module.add(Op.Function, 2, 1, 0, 3)
    module.add(Op.Label, 4)
    module.add(Op.Return)
    module.add(Op.FunctionEnd)
    return module


def decode_error(data: bytes | list[int]) -> DecodeError:
    with pytest.raises(DecodeError) as caught:
        read(data)
    return caught.value


def test_the_base_module_is_valid() -> None:
    words = shader().words()
    assert write(read(words)) == words


def test_bad_magic() -> None:
    words = shader().words()
    words[0] = 0xDEADBEEF
    error = decode_error(words)
    assert (error.reason, error.byte_offset, error.instruction_index) == (
        "bad magic number",
        0,
        None,
    )
    error = decode_error(b"".join(word.to_bytes(4, "little") for word in words))
    assert (error.reason, error.byte_offset, error.instruction_index) == (
        "bad magic number",
        0,
        None,
    )


@pytest.mark.parametrize("kept", [0, 1, 4])
def test_truncated_header(kept: int) -> None:
    error = decode_error(shader().words()[:kept])
    assert (error.reason, error.byte_offset, error.instruction_index) == (
        "header needs 5 words",
        0,
        None,
    )


def test_length_not_a_multiple_of_four() -> None:
    data = b"".join(word.to_bytes(4, "little") for word in shader().words())[:-2]
    error = decode_error(data)
    assert error.reason == f"length {len(data)} is not a multiple of 4"
    assert (error.byte_offset, error.instruction_index) == (len(data), None)


def test_truncated_instruction() -> None:
    module = shader()
    words = module.words()[: module.starts[4] // 4 + 2]  # OpName cut after its first operand
    error = decode_error(words)
    assert error.reason == "instruction of 4 words runs past the end"
    assert (error.byte_offset, error.instruction_index) == (module.starts[4], 4)


def test_word_count_zero() -> None:
    module = shader()
    words = module.words()
    words[module.starts[5] // 4] = Op.TypeVoid  # OpTypeVoid with a word count of 0
    error = decode_error(words)
    assert error.reason == "word count of 0"
    assert (error.byte_offset, error.instruction_index) == (module.starts[5], 5)


def test_operands_past_the_end_of_the_instruction() -> None:
    # OpExecutionMode LocalSize needs three literals; the word count gives it two.
    module = Words()
    module.add(Op.Capability, 1).add(Op.MemoryModel, 0, 1)
    module.add(Op.ExecutionMode, 1, 17, 1, 1)
    error = decode_error(module.words())
    assert error.reason == "missing LiteralInteger operand"
    assert (error.byte_offset, error.instruction_index) == (module.starts[2], 2)


def test_words_left_after_the_last_operand() -> None:
    module = Words()
    module.add(Op.Capability, 1).add(Op.MemoryModel, 0, 1)
    module.add(Op.ExecutionMode, 1, 17, 1, 1, 1, 1)
    error = decode_error(module.words())
    assert error.reason == "1 words left after the last operand"
    assert (error.byte_offset, error.instruction_index) == (module.starts[2], 2)


def test_unterminated_string() -> None:
    module = Words()
    module.add(Op.Capability, 1).add(Op.MemoryModel, 0, 1)
    module.add(Op.Name, 1, *encode_string("main")[:1])  # "main" without its nul word
    error = decode_error(module.words())
    assert error.reason == "string runs past the end of the instruction"
    assert (error.byte_offset, error.instruction_index) == (module.starts[2], 2)


def test_id_not_below_the_bound() -> None:
    module = shader()
    module.bound = 4  # %4 (the label) is defined
    error = decode_error(module.words())
    assert error.reason == "operand 0 is id 4, not below the bound 4"
    assert (error.byte_offset, error.instruction_index) == (module.starts[8], 8)


def test_id_not_below_the_bound_in_a_walked_instruction() -> None:
    module = shader()
    module.bound = 2  # OpEntryPoint (walked: it has a string) names %1, fine; OpName %1 fine
    error = decode_error(module.words())
    assert error.reason == "operand 0 is id 2, not below the bound 2"
    assert (error.byte_offset, error.instruction_index) == (module.starts[5], 5)


def test_id_zero() -> None:
    module = Words()
    module.add(Op.Capability, 1).add(Op.MemoryModel, 0, 1)
    module.add(Op.TypeVoid, 2)
    module.add(Op.TypeFunction, 3, 0)
    error = decode_error(module.words())
    assert error.reason == "operand 1 is id 0"
    assert (error.byte_offset, error.instruction_index) == (module.starts[3], 3)


def test_id_zero_in_a_walked_instruction() -> None:
    module = Words()
    module.add(Op.Capability, 1).add(Op.MemoryModel, 0, 1)
    module.add(Op.EntryPoint, 5, 0, *MAIN)
    error = decode_error(module.words())
    assert error.reason == "id 0 is not in 1..4"
    assert (error.byte_offset, error.instruction_index) == (module.starts[2], 2)


def test_unknown_opcode() -> None:
    module = shader()
    words = module.words()
    words[module.starts[5] // 4] = 2 << 16 | 0xFFF0
    error = decode_error(words)
    assert error.reason == f"unknown opcode {0xFFF0}"
    assert (error.byte_offset, error.instruction_index) == (module.starts[5], 5)


def test_unknown_enumerant_that_decides_the_operand_shape() -> None:
    # A Decoration may carry parameters, so an unknown one cannot be walked past. Enumerants
    # of kinds without parameters, like Capability, are kept: newer than our grammar is fine.
    module = Words()
    module.add(Op.Capability, 1).add(Op.MemoryModel, 0, 1)
    module.add(Op.Decorate, 1, 0xFFFF)
    error = decode_error(module.words())
    assert error.reason == "unknown Decoration 65535: its parameters cannot be decoded"
    assert (error.byte_offset, error.instruction_index) == (module.starts[2], 2)


def test_unknown_enumerant_of_a_kind_without_parameters_is_kept() -> None:
    module = Words()
    module.add(Op.Capability, 0xFFFF).add(Op.MemoryModel, 0, 1)
    assert read(module.words()).capabilities[0].operands == [0xFFFF]


def test_out_of_order_layout() -> None:
    module = shader(name_first=False)  # OpName after OpTypeVoid
    error = decode_error(module.words())
    assert error.reason == "OpName is out of the logical layout order"
    assert (error.byte_offset, error.instruction_index) == (module.starts[5], 5)


def test_id_defined_twice() -> None:
    module = Words()
    module.add(Op.Capability, 1).add(Op.MemoryModel, 0, 1)
    module.add(Op.TypeVoid, 2).add(Op.TypeBool, 2)
    error = decode_error(module.words())
    assert error.reason == "id 2 is defined twice"
    assert (error.byte_offset, error.instruction_index) == (module.starts[3], 3)


def test_instruction_outside_a_block() -> None:
    module = shader()
    words = module.words()
    label = module.starts[8] // 4
    words[label : label + 2] = [1 << 16 | Op.Nop, 1 << 16 | Op.Nop]  # OpLabel -> two OpNop
    error = decode_error(words)
    assert error.reason == "OpNop outside a block"
    assert (error.byte_offset, error.instruction_index) == (module.starts[8], 8)


def test_module_ending_inside_a_function() -> None:
    module = shader()
    error = decode_error(module.words()[:-1])  # no OpFunctionEnd
    assert error.reason == "module ends inside a function"
    assert error.instruction_index is None
    assert error.byte_offset == module.starts[-1]


def test_message_carries_every_field() -> None:
    module = shader()
    words = module.words()
    words[module.starts[5] // 4] = Op.TypeVoid
    assert str(decode_error(words)) == (
        f"invalid SPIR-V at byte offset {module.starts[5]}, instruction 5: word count of 0"
    )
