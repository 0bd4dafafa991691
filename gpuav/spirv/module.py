"""A SPIR-V module held in its logical-layout sections (SPIR-V spec 2.4).

Sections are plain lists of instructions so that passes can edit them directly; ``bound`` is
changed only through ``new_id`` so ids stay unique. Instructions outside any block (OpLine
between functions, debug info before a label) are kept where they appeared so that
``write(read(words)) == words`` for every valid module.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain

from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction

# Instructions that end a block (SPIR-V 2.2.4 "Termination Instruction" and Branch ones).
TERMINATORS = frozenset(
    {
        Op.Branch,
        Op.BranchConditional,
        Op.Switch,
        Op.Return,
        Op.ReturnValue,
        Op.Kill,
        Op.Unreachable,
        Op.TerminateInvocation,
        Op.IgnoreIntersectionKHR,
        Op.TerminateRayKHR,
        Op.EmitMeshTasksEXT,
    }
)


@dataclass
class Block:
    label: Instruction
    instructions: list[Instruction] = field(default_factory=list)
    # Debug instructions between the previous block's terminator and this label.
    preamble: list[Instruction] = field(default_factory=list)

    @property
    def label_id(self) -> int:
        return self.label.operands[0]

    @property
    def terminator(self) -> Instruction:
        return self.instructions[-1]

    def all_instructions(self) -> Iterator[Instruction]:
        yield from self.preamble
        yield self.label
        yield from self.instructions


@dataclass
class Function:
    definition: Instruction
    end: Instruction
    parameters: list[Instruction] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    # Debug instructions before OpFunction (glslang puts an OpLine there) and before
    # OpFunctionEnd.
    preamble: list[Instruction] = field(default_factory=list)
    epilogue: list[Instruction] = field(default_factory=list)

    @property
    def id(self) -> int:
        return self.definition.operands[1]

    @property
    def result_type_id(self) -> int:
        return self.definition.operands[0]

    @property
    def function_type_id(self) -> int:
        return self.definition.operands[3]

    def all_instructions(self) -> Iterator[Instruction]:
        yield from self.preamble
        yield self.definition
        yield from self.parameters
        for block in self.blocks:
            yield from block.all_instructions()
        yield from self.epilogue
        yield self.end


# SPIR-V version words as (major << 16 | minor << 8).
def version_word(major: int, minor: int) -> int:
    return major << 16 | minor << 8


@dataclass
class Module:
    version: int
    generator: int
    bound: int
    schema: int = 0
    capabilities: list[Instruction] = field(default_factory=list)
    extensions: list[Instruction] = field(default_factory=list)
    ext_inst_imports: list[Instruction] = field(default_factory=list)
    memory_model: list[Instruction] = field(default_factory=list)
    entry_points: list[Instruction] = field(default_factory=list)
    execution_modes: list[Instruction] = field(default_factory=list)
    debug_sources: list[Instruction] = field(default_factory=list)
    debug_names: list[Instruction] = field(default_factory=list)
    debug_module_processed: list[Instruction] = field(default_factory=list)
    annotations: list[Instruction] = field(default_factory=list)
    globals: list[Instruction] = field(default_factory=list)
    functions: list[Function] = field(default_factory=list)
    # Debug instructions after the last OpFunctionEnd.
    trailer: list[Instruction] = field(default_factory=list)

    @property
    def version_tuple(self) -> tuple[int, int]:
        return (self.version >> 16) & 0xFF, (self.version >> 8) & 0xFF

    def new_id(self) -> int:
        new = self.bound
        self.bound += 1
        return new

    def header_sections(self) -> tuple[list[Instruction], ...]:
        """Every section before the functions, in layout order."""
        return (
            self.capabilities,
            self.extensions,
            self.ext_inst_imports,
            self.memory_model,
            self.entry_points,
            self.execution_modes,
            self.debug_sources,
            self.debug_names,
            self.debug_module_processed,
            self.annotations,
            self.globals,
        )

    def instruction_lists(self) -> Iterator[Sequence[Instruction]]:
        """The module's instructions as consecutive runs, in module order."""
        yield from self.header_sections()
        for function in self.functions:
            yield function.preamble
            yield (function.definition,)
            yield function.parameters
            for block in function.blocks:
                yield block.preamble
                yield (block.label,)
                yield block.instructions
            yield function.epilogue
            yield (function.end,)
        yield self.trailer

    def instructions(self) -> Iterator[Instruction]:
        """Every instruction in module order (chained runs: no generator per instruction)."""
        return chain.from_iterable(self.instruction_lists())
