"""Entry points that run as the app wrote them where the layer, on the host, found that every
check of the whole function would pass.

On a GPU a check's cost is mostly its branch and the reads it waits on, not its compare: the
1920x1080 render loop's fragment shader, whose every access is fine, ran at 0.59 of its speed
with its checks. Most entry points' accesses can be decided before they run: a texture that is
no array, or an array indexed by ``draw % 8``, a uniform block read at a constant offset, a
storage buffer read at ``i % buffer.length()``, a texture array at an index the app pushed.
Where every access the pass guards in an entry function has such a proof (the provers of the
loop copies, ``loop_versions``) and each proof can be made by the layer from what it knows of
the action (what it writes into the bound-sets area, the push constants: ``host_terms``), the
function is kept twice:

    start:   its variables; proven = (verdict word & this stage's bit) != 0
             OpSelectionMerge %unreached
             OpBranchConditional proven %copy %body
    copy:    the function's blocks as the app wrote them, no checks
    body:    the blocks the guards then check, access by access, as before
    unreached: OpUnreachable (both return from inside)

The layer evaluates the terms when it records each draw or dispatch and writes the verdict
word (``descriptor_state.VERDICT_WORD``), so the test costs each invocation one read. A test
made in the shader instead (the proofs' own tests, as loops have) read about ten words of the
action's table per invocation, and cost an H100 more than the checks it replaced. The word is
the same for every invocation of an action, so both copies run in uniform control flow where
the function did, and derivatives, barriers and subgroup operations keep their meaning.

A function the entry function calls is kept twice the same way, where that entry point alone
reaches it: its copy stands behind the same bit, which then stands for the terms of both.
"""

from __future__ import annotations

from gpuav.instrument.host_terms import STAGE_BITS, Term
from gpuav.instrument.loop_bounds import LayerBounds
from gpuav.instrument.loop_versions import GuardedAccess, LoopCopier, Proof, Prover, group_guarded
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
    entry_functions: list[tuple[Function, Instruction]],
    action_verdict: int,
    layer: LayerBounds | None = None,
) -> tuple[dict[int, tuple[int, tuple[Term, ...]]], frozenset[int]]:
    """Give each function that one entry point alone reaches (the entry function, or a
    function it calls: ``with_its_entry``) whose ``guarded`` consumers all have proofs the
    layer can make, and which holds none of ``unprovable``, an unchecked copy behind its
    entry point's stage bit of the verdict word (``action_verdict``: the helper that reads
    it). Returns, for each entry function (by id) with a copy in its reach, its stage bit and
    the terms of all those copies (the bit stands for all of them); and the ids of the
    functions copied."""
    accesses_of, unprovable_labels = group_guarded(def_use, guarded, unprovable)
    terms_of: dict[int, tuple[int, list[Term]]] = {}
    copied: set[int] = set()
    for function, (entry_function, entry_point) in with_its_entry(
        builder.module.functions, entry_functions
    ):
        accesses = accesses_of.get(id(function))
        bit = STAGE_BITS.get(entry_point.operands[0])
        labels = frozenset(block.label_id for block in function.blocks)
        if not accesses or bit is None or labels & unprovable_labels:
            continue
        copier = _FunctionCopier(builder, def_use, types, function, layer)
        terms = copier.version(accesses, named, action_verdict, bit)
        if terms is not None:
            copied.add(function.id)
            terms_of.setdefault(entry_function.id, (bit, []))[1].extend(terms)
    found = {key: (bit, tuple(dict.fromkeys(terms))) for key, (bit, terms) in terms_of.items()}
    return found, frozenset(copied)


def with_its_entry(
    functions: list[Function], entry_functions: list[tuple[Function, Instruction]]
) -> list[tuple[Function, tuple[Function, Instruction]]]:
    """Each function that exactly one entry function reaches through calls (itself
    included), with that entry function and its entry point."""
    calls: dict[int, set[int]] = {}
    for function in functions:
        calls[function.id] = {
            instruction.operands[2]
            for block in function.blocks
            for instruction in block.instructions
            if instruction.opcode == Op.FunctionCall
        }
    reached_by: dict[int, list[tuple[Function, Instruction]]] = {}
    for entry in entry_functions:
        seen = {entry[0].id}
        pending = [entry[0].id]
        while pending:
            for callee in calls.get(pending.pop(), ()):
                if callee not in seen:
                    seen.add(callee)
                    pending.append(callee)
        for function_id in seen:
            reached_by.setdefault(function_id, []).append(entry)
    return [
        (function, reached_by[function.id][0])
        for function in functions
        if len(reached_by.get(function.id, ())) == 1
    ]


class _FunctionCopier:
    def __init__(
        self,
        builder: Builder,
        def_use: DefUse,
        types: Types,
        function: Function,
        layer: LayerBounds | None,
    ) -> None:
        self.builder = builder
        self.def_use = def_use
        self.types = types
        self.function = function
        self.layer = layer

    def version(
        self,
        accesses: list[GuardedAccess],
        named: list[tuple[Instruction, frozenset[int]]],
        action_verdict: int,
        bit: int,
    ) -> tuple[Term, ...] | None:
        """Copy the function where the layer can make every access's proof; the terms it
        makes, or None where the function was left as it was."""
        function = self.function
        body = function.blocks[0]
        labels = frozenset(block.label_id for block in function.blocks)
        start = self._split_start(body)
        unreached = self._append(Block(Instruction(Op.Label, [self.builder.module.new_id()])))
        unreached.instructions.append(Instruction(Op.Unreachable, []))
        self.def_use.record(unreached.instructions[0], (function, unreached))
        region = Loop(function, body, unreached.label_id, unreached.label_id, labels, start)
        copier = LoopCopier(self.builder, self.def_use, self.types, region, self.layer)
        terms: list[Term] = []

        def verdict_test(before: Block, proofs: list[Proof]) -> int | None:
            for proof in proofs:
                if proof.host is None or proof.residual is not None:
                    return None
                terms.extend(proof.host)
            return self._emit_verdict(before, action_verdict, bit)

        if not copier.version(accesses, named, unroll=False, test=verdict_test):
            self._undo(start, body, unreached)
            return None
        # The copier joins the two copies in exit blocks that branch to the merge block; a
        # function's region returns instead, so nothing reaches them.
        exits = [b for b in function.blocks if _only_branches_to(b, unreached.label_id)]
        for block in exits:
            self.def_use.forget(block.terminator)
        self._remove(exits)
        return tuple(dict.fromkeys(terms))

    def _emit_verdict(self, start: Block, action_verdict: int, bit: int) -> int:
        """``(verdict word & bit) != 0``, emitted at the end of ``start`` (before its
        branch)."""
        builder = self.builder
        builder.position_at_end(start, self.function)
        builder.index = len(start.instructions) - 1
        uint, bool_ = builder.type_int(32, False), builder.type_bool()
        word = builder.op(Op.FunctionCall, uint, action_verdict)
        mine = builder.op(Op.BitwiseAnd, uint, word, builder.constant_uint(bit))
        return builder.op(Op.INotEqual, bool_, mine, builder.constant_uint(0))

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
            self.def_use.id_operands.extended_set(instruction) == _DEBUG_INFO_SET
            and instruction.operands[3] == _DEBUG_FUNCTION_DEFINITION
        )


def _only_branches_to(block: Block, label: int) -> bool:
    return [i.opcode for i in block.instructions] == [Op.Branch] and block.terminator.operands == [
        label
    ]
