"""Module -> words (and bytes), the exact inverse of the reader for every valid module."""

from __future__ import annotations

from array import array
from collections.abc import Iterable

from gpuav.spirv.grammar import MAGIC_NUMBER
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module


def write(module: Module) -> list[int]:
    words = [MAGIC_NUMBER, module.version, module.generator, module.bound, module.schema]
    append = words.append
    extend = words.extend

    def emit(instructions: Iterable[Instruction]) -> None:
        for instruction in instructions:
            operands = instruction.operands
            append((len(operands) + 1) << 16 | instruction.opcode)
            extend(operands)

    # The order of Module.instructions(), walked without its nested generators (a third
    # faster); tests/spirv/test_round_trip.py checks that the two agree.
    for section in module.header_sections():
        emit(section)
    for function in module.functions:
        emit(function.preamble)
        emit((function.definition,))
        emit(function.parameters)
        for block in function.blocks:
            emit(block.preamble)
            emit((block.label,))
            emit(block.instructions)
        emit(function.epilogue)
        emit((function.end,))
    emit(module.trailer)
    return words


def write_bytes(module: Module) -> bytes:
    """Host byte order, which is what Vulkan's pCode expects."""
    return array("I", write(module)).tobytes()
