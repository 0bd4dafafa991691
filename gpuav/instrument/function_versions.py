"""Entry points that run as the app wrote them where one test at their start proves that
every check of the whole function would pass.

On a GPU a check's cost is mostly its branch, not its compare: the 1920x1080 render loop's
fragment shader, whose every access is fine, ran at 0.59 of its speed with nothing but
never-taken branches around its samples and loads. A typical shader's accesses can be decided
before it runs: a texture that is no array, or an array indexed by ``draw % 8``, a uniform
read at a constant offset, a storage buffer read at ``i % buffer.length()``. Where every
access the pass guards in an entry point has such a proof (the same provers as the loop
copies, ``loop_versions``), the function is kept twice:

    start:   its variables; proven = test1 && test2 && ...
             OpSelectionMerge %unreached
             OpBranchConditional proven %copy %body
    copy:    the function's blocks as the app wrote them, no checks
    body:    the blocks the guards then check, access by access, as before
    unreached: OpUnreachable (both return from inside)

The whole function is the region, so a bound can only come from constants, push constants,
uniform blocks at constant offsets and the layer's own state for the action: the test has the
same value in every invocation of a draw or dispatch. Both copies therefore run in uniform
control flow where the function did, and derivatives, barriers and subgroup operations keep
their meaning. A proof that keeps a check in the copy is not taken: its report is written
where the copy leaves a loop, and a function leaves by returning.
"""

from __future__ import annotations

from gpuav.instrument.loop_bounds import ArrayLengths, extended_set
from gpuav.instrument.loop_versions import GuardedAccess, LoopCopier, Prover, group_guarded
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.loops import Loop
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Op
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function

_DEBUG_INFO_SET = "NonSemantic.Shader.DebugInfo.100"
_DEBUG_FUNCTION_DEFINITION = 101


def version_entry_functions(
    builder: Builder,
    def_use: DefUse,
    types: Types,
    guarded: list[tuple[Instruction, Prover]],
    unprovable: set[int],
    named: list[tuple[Instruction, frozenset[int]]],
    entry_functions: list[Function],
    lengths: ArrayLengths | None = None,
) -> set[int]:
    """Give each of ``entry_functions`` whose ``guarded`` consumers all have proofs, and which
    holds none of ``unprovable``, an unchecked copy behind one test at its start. Returns the
    ids of the functions copied."""
    accesses_of, unprovable_labels = group_guarded(def_use, guarded, unprovable)
    copied: set[int] = set()
    for function in {id(function): function for function in entry_functions}.values():
        accesses = accesses_of.get(id(function))
        labels = frozenset(block.label_id for block in function.blocks)
        if not accesses or labels & unprovable_labels:
            continue
        if _FunctionCopier(builder, def_use, types, function, lengths).version(accesses, named):
            copied.add(function.id)
    return copied


class _FunctionCopier:
    def __init__(
        self,
        builder: Builder,
        def_use: DefUse,
        types: Types,
        function: Function,
        lengths: ArrayLengths | None,
    ) -> None:
        self.builder = builder
        self.def_use = def_use
        self.types = types
        self.function = function
        self.lengths = lengths

    def version(
        self, accesses: list[GuardedAccess], named: list[tuple[Instruction, frozenset[int]]]
    ) -> bool:
        function = self.function
        body = function.blocks[0]
        labels = frozenset(block.label_id for block in function.blocks)
        start = self._split_start(body)
        unreached = self._append(Block(Instruction(Op.Label, [self.builder.module.new_id()])))
        unreached.instructions.append(Instruction(Op.Unreachable, []))
        self.def_use.record(unreached.instructions[0], (function, unreached))
        region = Loop(function, body, unreached.label_id, unreached.label_id, labels, start)
        copier = LoopCopier(self.builder, self.def_use, self.types, region, self.lengths)
        if not copier.version(accesses, named, unroll=False, residuals=False):
            self._undo(start, body, unreached)
            return False
        # The copier joins the two copies in exit blocks that branch to the merge block; a
        # function's region returns instead, so nothing reaches them.
        exits = [b for b in function.blocks if _only_branches_to(b, unreached.label_id)]
        for block in exits:
            self.def_use.forget(block.terminator)
        self._remove(exits)
        return True

    def _split_start(self, body: Block) -> Block:
        """Move the function's variables (and its debug definition, which must stay in the
        first block) into a new first block that branches to the rest."""
        moved: list[Instruction] = []
        kept: list[Instruction] = []
        for instruction in body.instructions:
            first = instruction.opcode == Op.Variable or self._function_definition(instruction)
            (moved if first else kept).append(instruction)
        start = Block(Instruction(Op.Label, [self.builder.module.new_id()]), moved, body.preamble)
        body.preamble = []
        body.instructions = kept
        start.instructions.append(Instruction(Op.Branch, [body.label_id]))
        self.function.blocks.insert(0, start)
        self.def_use.places[id(start.label)] = (self.function, start)
        for instruction in start.instructions:
            self.def_use.forget(instruction)
            self.def_use.record(instruction, (self.function, start))
        return start

    def _undo(self, start: Block, body: Block, unreached: Block) -> None:
        moved = start.instructions[:-1]
        self.def_use.forget(start.instructions[-1])
        self.def_use.forget(unreached.instructions[0])
        body.instructions[:0] = moved
        body.preamble = start.preamble
        for instruction in moved:
            self.def_use.forget(instruction)
            self.def_use.record(instruction, (self.function, body))
        self._remove([start, unreached])

    def _remove(self, blocks: list[Block]) -> None:
        gone = {id(block) for block in blocks}
        self.function.blocks[:] = [b for b in self.function.blocks if id(b) not in gone]

    def _append(self, block: Block) -> Block:
        self.function.blocks.append(block)
        self.def_use.places[id(block.label)] = (self.function, block)
        return block

    def _function_definition(self, instruction: Instruction) -> bool:
        return (
            extended_set(self.def_use, instruction) == _DEBUG_INFO_SET
            and instruction.operands[3] == _DEBUG_FUNCTION_DEFINITION
        )


def _only_branches_to(block: Block, label: int) -> bool:
    return [i.opcode for i in block.instructions] == [Op.Branch] and block.terminator.operands == [
        label
    ]
