"""How each argument of a debugPrintfEXT travels in a printf record, decided from its type.

The pass (``gpuav.instrument.printf``) writes the words and the host
(``gpuav.report.printf_messages``) reads them back, both from the shape given here for the
argument's definition in the *original* module, so the two agree by construction:

- an ``OpString`` (``%s``) writes nothing: the host reads its text from the module;
- a scalar or vector of 8-, 16- or 32-bit components writes one word per component (narrow
  integers sign- or zero-extended, narrow floats converted to 32-bit float, booleans 0 or 1);
- 64-bit components write two words each, low word first (doubles as their bits).

Any other type (a pointer, a struct) writes nothing, and the host prints its conversion as
written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpuav.report.printf_format import ScalarKind
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction, decode_string

# Every non-semantic set's name starts so; such instructions change nothing the module does.
NON_SEMANTIC_PREFIX = "NonSemantic."
# The extended instruction set and its one instruction (NonSemantic.DebugPrintf's grammar).
PRINTF_SET = "NonSemantic.DebugPrintf"
DEBUG_PRINTF = 1
# OpExtInst operands: result type, result id, set, instruction, format string, arguments...
FORMAT_OPERAND = 4
FIRST_ARGUMENT_OPERAND = 5


@dataclass(frozen=True)
class ArgumentShape:
    """What an argument is and how many words it takes in a record."""

    kind: ScalarKind
    width: int  # of a component in the record: 32 or 64
    components: int  # 0: nothing written (a string or an unsupported type)
    source_width: int = 32  # of a component in the shader (8, 16, 32 or 64)
    text: str | None = None  # an OpString argument

    @property
    def words(self) -> int:
        return self.components * (2 if self.width == 64 else 1)


UNSUPPORTED = ArgumentShape(ScalarKind.UNSIGNED, 32, 0)


def argument_shape(
    argument: int, definitions: Mapping[int, Instruction], types: Mapping[int, int]
) -> ArgumentShape:
    """The shape of argument id ``argument``: ``definitions`` maps ids to their defining
    instructions, ``types`` value ids to their type ids."""
    definition = definitions.get(argument)
    if definition is not None and definition.opcode == Op.String:
        return ArgumentShape(
            ScalarKind.UNSIGNED, 32, 0, text=decode_string(definition.operands, 1)[0]
        )
    type_definition = definitions.get(types.get(argument, -1))
    if type_definition is None:
        return UNSUPPORTED
    count = 1
    if type_definition.opcode == Op.TypeVector:
        count = type_definition.operands[2]
        type_definition = definitions.get(type_definition.operands[1])
        if type_definition is None:
            return UNSUPPORTED
    opcode = type_definition.opcode
    if opcode == Op.TypeBool:
        return ArgumentShape(ScalarKind.BOOL, 32, count)
    if opcode == Op.TypeInt:
        width, signed = type_definition.operands[1], type_definition.operands[2]
        kind = ScalarKind.SIGNED if signed else ScalarKind.UNSIGNED
    elif opcode == Op.TypeFloat:
        width, kind = type_definition.operands[1], ScalarKind.FLOAT
    else:
        return UNSUPPORTED
    if width not in (8, 16, 32, 64):
        return UNSUPPORTED
    return ArgumentShape(kind, 64 if width == 64 else 32, count, width)


def printf_set_ids(imports: list[Instruction]) -> set[int]:
    """Result ids of the module's ``NonSemantic.DebugPrintf`` imports."""
    return {
        instruction.operands[0]
        for instruction in imports
        if decode_string(instruction.operands, 1)[0] == PRINTF_SET
    }


def is_printf(instruction: Instruction, sets: set[int]) -> bool:
    operands = instruction.operands
    return (
        instruction.opcode == Op.ExtInst
        and len(operands) > FORMAT_OPERAND
        and operands[2] in sets
        and operands[3] == DEBUG_PRINTF
    )
