"""SPIR-V core: read, edit and write modules, driven by the JSON grammar."""

from gpuav.spirv.instruction import Instruction, decode_string, encode_string
from gpuav.spirv.module import Block, Function, Module
from gpuav.spirv.reader import read, words_from_bytes
from gpuav.spirv.writer import write, write_bytes

__all__ = [
    "Block",
    "Function",
    "Instruction",
    "Module",
    "decode_string",
    "encode_string",
    "read",
    "words_from_bytes",
    "write",
    "write_bytes",
]
