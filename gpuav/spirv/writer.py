"""Module -> words (and bytes), the exact inverse of the reader for every valid module."""

from __future__ import annotations

from array import array

from gpuav.spirv.grammar import MAGIC_NUMBER
from gpuav.spirv.module import Module


def write(module: Module) -> list[int]:
    words = [MAGIC_NUMBER, module.version, module.generator, module.bound, module.schema]
    append = words.append
    extend = words.extend

    # Module.instruction_lists: runs of instructions, no generator per instruction.
    for instructions in module.instruction_lists():
        for instruction in instructions:
            operands = instruction.operands
            append((len(operands) + 1) << 16 | instruction.opcode)
            extend(operands)
    return words


def write_bytes(module: Module) -> bytes:
    """Host byte order, which is what Vulkan's pCode expects."""
    return array("I", write(module)).tobytes()
