"""A SPIR-V module held in its logical-layout sections (SPIR-V spec 2.4).

Sections are plain lists of instructions so that passes can edit them directly; ``bound`` is
changed only through ``new_id`` so ids stay unique. Instructions outside any block (OpLine
between functions, debug info before a label) are kept where they appeared so that
``write(read(words)) == words`` for every valid module.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
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


class _Record:
    """Field-wise ``==`` and ``repr`` over ``__slots__`` (the last being ``__weakref__``), as
    a dataclass would give, without the cost of generating a dataclass at import (the layer
    imports this in every app)."""

    __slots__ = ()

    def _names(self) -> tuple[str, ...]:
        names: tuple[str, ...] = self.__slots__  # the subclass's
        return names[:-1]  # all but __weakref__

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self._names())

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, _Record)
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names())
        return f"{self.__class__.__name__}({fields})"


# The sections before the functions, in layout order (Module.header_sections).
_SECTIONS = (
    "capabilities",
    "extensions",
    "ext_inst_imports",
    "memory_model",
    "entry_points",
    "execution_modes",
    "debug_sources",
    "debug_names",
    "debug_module_processed",
    "annotations",
    "globals",
)


class Block(_Record):
    __slots__ = ("label", "instructions", "preamble", "__weakref__")  # noqa: RUF023

    def __init__(
        self,
        label: Instruction,
        instructions: list[Instruction] | None = None,
        preamble: list[Instruction] | None = None,
    ) -> None:
        self.label = label
        self.instructions: list[Instruction] = [] if instructions is None else instructions
        # Debug instructions between the previous block's terminator and this label.
        self.preamble: list[Instruction] = [] if preamble is None else preamble

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


class Function(_Record):
    __slots__ = (  # noqa: RUF023  (field order, for repr)
        "definition",
        "end",
        "parameters",
        "blocks",
        "preamble",
        "epilogue",
        "__weakref__",
    )

    def __init__(
        self,
        definition: Instruction,
        end: Instruction,
        parameters: list[Instruction] | None = None,
        blocks: list[Block] | None = None,
        preamble: list[Instruction] | None = None,
        epilogue: list[Instruction] | None = None,
    ) -> None:
        self.definition = definition
        self.end = end
        self.parameters: list[Instruction] = [] if parameters is None else parameters
        self.blocks: list[Block] = [] if blocks is None else blocks
        # Debug instructions before OpFunction (glslang puts an OpLine there) and before
        # OpFunctionEnd.
        self.preamble: list[Instruction] = [] if preamble is None else preamble
        self.epilogue: list[Instruction] = [] if epilogue is None else epilogue

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


class Module(_Record):
    __slots__ = (
        "version",
        "generator",
        "bound",
        "schema",
        *_SECTIONS,
        "functions",
        "trailer",
        "__weakref__",
    )

    def __init__(self, version: int, generator: int, bound: int, schema: int = 0) -> None:
        self.version = version
        self.generator = generator
        self.bound = bound
        self.schema = schema
        self.capabilities: list[Instruction] = []
        self.extensions: list[Instruction] = []
        self.ext_inst_imports: list[Instruction] = []
        self.memory_model: list[Instruction] = []
        self.entry_points: list[Instruction] = []
        self.execution_modes: list[Instruction] = []
        self.debug_sources: list[Instruction] = []
        self.debug_names: list[Instruction] = []
        self.debug_module_processed: list[Instruction] = []
        self.annotations: list[Instruction] = []
        self.globals: list[Instruction] = []
        self.functions: list[Function] = []
        # Debug instructions after the last OpFunctionEnd.
        self.trailer: list[Instruction] = []

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
