"""Mutations of corpus modules that each break one rule of issue 19 (block layout, push
constants, opcode/enumerant versions), for the differential tests against spirv-val 2025.1.

Each mutation changes one thing: one Offset/ArrayStride/MatrixStride value, one layout
decoration removed, one push-constant block duplicated and used beside the original, one
OpExtension removed, or the header's SPIR-V version lowered.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from gpuav.spirv import read, write
from gpuav.spirv.grammar import Decoration, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module, version_word

Mutate = Callable[[Module], bool]


@dataclass(frozen=True)
class Mutation:
    shader: str
    target_env: str
    what: str
    words: list[int]


def _mutated(words: list[int], change: Mutate) -> list[int] | None:
    module = read(words)
    return write(module) if change(module) else None


def layout_mutations(name: str, target_env: str, words: list[int]) -> Iterator[Mutation]:
    """One Offset, ArrayStride or MatrixStride of an explicitly laid-out type changed or
    dropped."""
    module = read(words)
    for position, instruction in enumerate(module.annotations):
        operands = instruction.operands
        if instruction.opcode == Op.MemberDecorate and len(operands) > 3:
            decoration, value = operands[2], operands[3]
        elif instruction.opcode == Op.Decorate and len(operands) > 2:
            decoration, value = operands[1], operands[2]
        else:
            continue
        if decoration not in (Decoration.Offset, Decoration.ArrayStride, Decoration.MatrixStride):
            continue
        label = f"{_decoration_name(decoration)} of instruction {position}"
        changes = {value + 4, value + 2, value - 4, value // 2, value + 8}
        for new in sorted(v for v in changes if v >= 0 and v != value):
            result = _mutated(words, _set_decoration_value(position, new))
            if result is not None:
                yield Mutation(name, target_env, f"{label}: {value} -> {new}", result)
        result = _mutated(words, _drop_annotation(position))
        if result is not None:
            yield Mutation(name, target_env, f"{label} removed", result)


def push_constant_mutations(name: str, target_env: str, words: list[int]) -> Iterator[Mutation]:
    """A copy of a push-constant variable, read beside the original in the same function."""
    result = _mutated(words, _second_push_constant_block)
    if result is not None:
        yield Mutation(name, target_env, "second push-constant block used", result)


def version_mutations(name: str, target_env: str, words: list[int]) -> Iterator[Mutation]:
    """Each OpExtension removed, and the header's version lowered to each older one."""
    module = read(words)
    for position, instruction in enumerate(module.extensions):
        if instruction.opcode == Op.Extension:
            text = instruction.string(0)
            result = _mutated(words, _drop_extension(position))
            if result is not None:
                yield Mutation(name, target_env, f"OpExtension {text} removed", result)
    major, minor = module.version_tuple
    for older in range(minor):
        changed = list(words)
        changed[1] = version_word(major, older)
        yield Mutation(name, target_env, f"version {major}.{minor} -> {major}.{older}", changed)


def _decoration_name(decoration: int) -> str:
    return {
        Decoration.Offset: "Offset",
        Decoration.ArrayStride: "ArrayStride",
        Decoration.MatrixStride: "MatrixStride",
    }[decoration]


def _set_decoration_value(position: int, value: int) -> Mutate:
    def change(module: Module) -> bool:
        instruction = module.annotations[position]
        instruction.operands[-1] = value
        return True

    return change


def _drop_annotation(position: int) -> Mutate:
    def change(module: Module) -> bool:
        del module.annotations[position]
        return True

    return change


def _drop_extension(position: int) -> Mutate:
    def change(module: Module) -> bool:
        del module.extensions[position]
        return True

    return change


def _second_push_constant_block(module: Module) -> bool:
    """Clone the first push-constant variable and the first access chain into it."""
    variable = next(
        (
            i
            for i in module.globals
            if i.opcode == Op.Variable
            and len(i.operands) > 2
            and i.operands[2] == StorageClass.PushConstant
        ),
        None,
    )
    if variable is None:
        return False
    original = variable.operands[1]
    for function in module.functions:
        for block in function.blocks:
            for at, instruction in enumerate(block.instructions):
                is_chain = instruction.opcode in (Op.AccessChain, Op.InBoundsAccessChain)
                if is_chain and instruction.operands[2] == original:
                    clone_variable = module.new_id()
                    clone_chain = module.new_id()
                    module.globals.insert(
                        module.globals.index(variable) + 1,
                        _copy(variable, {1: clone_variable}),
                    )
                    block.instructions.insert(
                        at + 1, _copy(instruction, {1: clone_chain, 2: clone_variable})
                    )
                    return True
    return False


def _copy(instruction: Instruction, replace: dict[int, int]) -> Instruction:
    """A copy of ``instruction`` with some operand words replaced (and no origin index)."""
    operands = list(instruction.operands)
    for position, value in replace.items():
        operands[position] = value
    return Instruction(instruction.opcode, operands)
