"""Loops that run without checks where one test before them proves that every check of
every iteration would pass.

On a GPU, a branch in a loop body costs far more than its compare: a check per access keeps
the driver from unrolling and from issuing the loop's loads together, and a loop of 64
loads measured 3.4 times slower on an H100 with nothing more than one never-taken branch in it.
So where every access the pass guards in a loop has a check that a test made once before
the loop can decide for all iterations (``LoopBounds``; the provers of the buffer ranges,
device addresses, descriptors and local arrays), the loop is kept twice:

    preheader:  proven = test1 && test2 && ...
                OpSelectionMerge %merge
                OpBranchConditional proven %copy_header %header
    copy:       the app's loop as it was, with no checks (asked to unroll where the driver
                would unroll it without checks: a small constant trip count; not on a CPU
                device, whose compiler runs the unrolled copy slower)
    original:   the loop the guards then check, access by access, as before

A descriptor-array read whose index has no bound keeps its check in the copy, without a
branch (``descriptor_loop_proofs``).

Both exit to a new merge block of their own, which joins them in the old merge block: its
phis, and the loop's values used after it, take one value from each copy. A loop is left
alone where the proof is not exact (an access no test covers), where it is not entered from
one block that only branches into it, where a pointer made in it is used after it (a phi
cannot join pointers without the VariablePointers capability), where a check after it names
a value it leaves behind, and where it holds a barrier, a subgroup operation or a derivative.
Loops inside a copied loop are copied with it; a loop that cannot be copied may still hold
one that can.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gpuav.instrument.host_terms import Term
from gpuav.instrument.loop_bounds import LayerBounds, LoopBounds
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.loops import FunctionUses, Loop, function_loops, function_uses
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import LoopControl, Op, SelectionControl
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function


@dataclass(frozen=True)
class Proof:
    """How one access joins a loop's test."""

    # Emits the access's part of the test and returns its bools: first anything it reads
    # once per function, then, after calling the positioning callback, the test itself.
    test: Callable[[Callable[[], None]], list[int]]
    # Where a check stays in the copy (without a branch): applied to the copy, given the
    # old id -> copy id mapping and the block the copy's loop exits to.
    residual: Callable[[dict[int, int], Block], None] | None = None
    # The same test as the layer can make it for an action, on the host (``host_terms``);
    # None where it reads what only the shader sees.
    host: tuple[Term, ...] | None = None


# (the loop's bounds, the access's block) -> the access's proof, or None
Prover = Callable[[LoopBounds, Block], Proof | None]

_NOT_JOINABLE = (Op.TypePointer, Op.TypeSampledImage, Op.TypeImage, Op.TypeSampler)

# Instructions whose result depends on which other invocations run them too: barriers,
# subgroup and group operations, derivatives and the image reads that take them. The test
# before a loop may differ between invocations, so a loop holding one is not copied.
CONVERGENT = frozenset(
    value
    for name, value in vars(Op).items()
    if isinstance(value, int)
    and not name.startswith("_")
    and name not in ("GroupDecorate", "GroupMemberDecorate")
    and (
        name.startswith(("Group", "Subgroup", "CooperativeMatrix", "DPd", "Fwidth"))
        or name.endswith("ImplicitLod")
        or name in ("ControlBarrier", "ImageQueryLod")
    )
)


def version_loops(
    builder: Builder,
    def_use: DefUse,
    types: Types,
    guarded: list[tuple[Instruction, Prover]],
    unprovable: set[int],
    named: list[tuple[Instruction, frozenset[int]]],
    unroll: bool = True,
    layer: LayerBounds | None = None,
    skipped: frozenset[int] = frozenset(),
) -> int:
    """Give each loop whose ``guarded`` consumers all have proofs an unchecked copy;
    ``unprovable`` holds the ``id()`` of consumers other passes check, which no proof
    covers. ``named``: each finding's consumer and the ids the finding holds (the guards
    emit code from them later, so a loop whose values after it would have to be renamed
    where a finding names them is not copied). ``unroll``: ask the driver to unroll the copy
    of a loop that runs a few times. ``lengths``: bounds of OpArrayLength results. The
    functions in ``skipped`` (ids) are left alone. Returns the number of loops copied."""
    accesses_of, unprovable_labels = group_guarded(def_use, guarded, unprovable)
    convergent: set[int] | None = None
    copied = 0
    for function in list(builder.module.functions):
        accesses = accesses_of.get(id(function))
        if not accesses or function.id in skipped:
            continue
        done: list[Loop] = []
        for loop in function_loops(function):
            if any(loop.labels <= outer.labels for outer in done):
                continue
            inside = [access for access in accesses if access[1].label_id in loop.labels]
            if not inside or loop.labels & unprovable_labels:
                continue
            if convergent is None:
                convergent = _convergent_functions(builder.module.functions)
            if _runs_convergent(loop, convergent):
                continue
            copier = LoopCopier(builder, def_use, types, loop, layer)
            if copier.version(inside, named, unroll):
                done.append(loop)
                copied += 1
    return copied


# a guarded consumer, its block, and its pass's prover
GuardedAccess = tuple[Instruction, Block, Prover]
# Emits a copied region's test at the end of the block before it, given the proofs of its
# accesses; None declines the copy (and emits nothing).
EmitTest = Callable[[Block, list[Proof]], int | None]


def group_guarded(
    def_use: DefUse, guarded: list[tuple[Instruction, Prover]], unprovable: set[int]
) -> tuple[dict[int, list[GuardedAccess]], set[int]]:
    """(the ``id()`` of each function -> its guarded accesses, the labels of the blocks
    holding a consumer that no proof covers)."""
    accesses_of: dict[int, list[GuardedAccess]] = {}
    for consumer, prover in guarded:
        place = def_use.place(consumer)
        if place is not None:
            accesses_of.setdefault(id(place[0]), []).append((consumer, place[1], prover))
    unprovable_labels: set[int] = set()
    for instruction_id in unprovable:
        place = def_use.places.get(instruction_id)
        if place is not None:
            unprovable_labels.add(place[1].label_id)
    return accesses_of, unprovable_labels


def _convergent_functions(functions: list[Function]) -> set[int]:
    """Ids of the functions that run a CONVERGENT instruction, themselves or in a callee."""
    calls: dict[int, set[int]] = {}
    found: set[int] = set()
    for function in functions:
        callees = calls.setdefault(function.id, set())
        for block in function.blocks:
            for instruction in block.instructions:
                if instruction.opcode in CONVERGENT:
                    found.add(function.id)
                elif instruction.opcode == Op.FunctionCall:
                    callees.add(instruction.operands[2])
    changed = True
    while changed:
        changed = False
        for caller, callees in calls.items():
            if caller not in found and callees & found:
                found.add(caller)
                changed = True
    return found


def _runs_convergent(loop: Loop, convergent: set[int]) -> bool:
    return any(
        instruction.opcode in CONVERGENT
        or (instruction.opcode == Op.FunctionCall and instruction.operands[2] in convergent)
        for block in loop.blocks()
        for instruction in block.instructions
    )


class LoopCopier:
    """Keeps one loop twice, behind the test of its accesses' proofs. A whole function's body
    can be such a "loop" too (``function_versions``)."""

    def __init__(
        self,
        builder: Builder,
        def_use: DefUse,
        types: Types,
        loop: Loop,
        layer: LayerBounds | None,
    ) -> None:
        self.builder = builder
        self.def_use = def_use
        self.types = types
        self.loop = loop
        self.layer = layer
        self.function: Function = loop.function

    def version(
        self,
        inside: list[GuardedAccess],
        named: list[tuple[Instruction, frozenset[int]]],
        unroll: bool,
        test: EmitTest | None = None,
    ) -> bool:
        """Copy the loop where every access ``inside`` it has a proof, behind ``test`` (by
        default, the proofs' own tests). Whether it was copied."""
        loop = self.loop
        preheader = loop.preheader
        if preheader is None:
            return False
        uses = function_uses(self.function, self.def_use.id_operands)
        live_out = self._live_out(uses)
        if not self._copyable(preheader, live_out) or self._renames_named(live_out, named):
            return False
        bounds = LoopBounds(loop, self.def_use, self.types, uses, self.layer)
        proofs = []
        for _, block, prover in inside:
            proof = prover(bounds, block)
            if proof is None:
                return False
            proofs.append(proof)
        proven = (test or self._emit_test)(preheader, proofs)
        if proven is None:
            return False
        mapping = self._copy()
        copy_exit = self._join(mapping, live_out)
        copy_header = mapping[loop.header.label_id]
        self.def_use.forget(preheader.instructions[-1])
        preheader.instructions[-1:] = [
            Instruction(Op.SelectionMerge, [loop.merge, SelectionControl.None_]),
            Instruction(Op.BranchConditional, [proven, copy_header, loop.header.label_id]),
        ]
        for instruction in preheader.instructions[-2:]:
            self.def_use.record(instruction, (self.function, preheader))
        for proof in proofs:
            if proof.residual is not None:
                proof.residual(mapping, copy_exit)
        if unroll and bounds.unroll_worth():
            copy_merge = next(
                i for i in self._block(copy_header).instructions if i.opcode == Op.LoopMerge
            )
            if copy_merge.operands[2] == LoopControl.None_:
                copy_merge.operands[2] = LoopControl.Unroll
        return True

    # -- what a copy needs ----------------------------------------------------------------------

    def _copyable(
        self, preheader: Block, live_out: list[tuple[int, Instruction, list[Instruction]]]
    ) -> bool:
        """The preheader only branches into the loop, the loop leaves only through its merge
        block, and no pointer or image it makes is used after it."""
        loop = self.loop
        instructions = preheader.instructions
        if instructions[-1].opcode != Op.Branch or (
            len(instructions) > 1 and instructions[-2].opcode in (Op.LoopMerge, Op.SelectionMerge)
        ):
            return False
        labels = {block.label_id for block in self.function.blocks}
        for block in loop.blocks():
            terminator = block.terminator
            if terminator.opcode not in (Op.Branch, Op.BranchConditional, Op.Switch):
                continue
            targets = (
                terminator.operands[1:] if terminator.opcode == Op.Switch else terminator.operands
            )
            for target in targets:
                if target in labels and target not in loop.labels and target != loop.merge:
                    return False
        for _, defined, outside_uses in live_out:
            if outside_uses and self.types.opcode(defined.operands[0]) in _NOT_JOINABLE:
                return False
        return True

    def _renames_named(
        self,
        live_out: list[tuple[int, Instruction, list[Instruction]]],
        named: list[tuple[Instruction, frozenset[int]]],
    ) -> bool:
        """Whether a value the join would rename is held by a finding after the loop."""
        renamed = {result for result, _, uses in live_out if uses}
        if not renamed:
            return False
        for consumer, ids in named:
            place = self.def_use.place(consumer)
            if place is not None and place[1].label_id not in self.loop.labels and ids & renamed:
                return True
        return False

    def _live_out(self, uses: FunctionUses) -> list[tuple[int, Instruction, list[Instruction]]]:
        """(id, definition, uses in blocks after the loop other than the merge block's phis)
        for each value the loop defines."""
        loop = self.loop
        merge_block = self._block(loop.merge)
        found = []
        for block in loop.blocks():
            for instruction in block.instructions:
                result = instruction.result_id
                if result is None or instruction.type_id is None:
                    continue
                outside = [
                    use
                    for use, where in uses.get(result, [])
                    if where.label_id not in loop.labels
                    and not (where is merge_block and use.opcode == Op.Phi)
                ]
                found.append((result, instruction, outside))
        return found

    def _emit_test(self, preheader: Block, proofs: list[Proof]) -> int:
        builder = self.builder

        def to_test() -> None:
            builder.position_at_end(preheader, self.function)
            builder.index = len(preheader.instructions) - 1

        conditions: list[int] = []
        for proof in proofs:
            conditions += proof.test(to_test)
        to_test()
        bool_ = builder.type_bool()
        proven = builder.constant_bool(True)
        for condition in dict.fromkeys(conditions):
            proven = builder.op(Op.LogicalAnd, bool_, proven, condition)
        return proven

    # -- the copy -------------------------------------------------------------------------------

    def _copy(self) -> dict[int, int]:
        """Copy the loop's blocks, with fresh ids, after its last block; returns old id ->
        new id for its labels and results."""
        module = self.builder.module
        loop = self.loop
        originals = loop.blocks()
        mapping: dict[int, int] = {}
        for block in originals:
            mapping[block.label_id] = module.new_id()
            for instruction in block.instructions:
                if instruction.result_id is not None:
                    mapping[instruction.result_id] = module.new_id()
        id_operands = self.def_use.id_operands
        copies = []
        for block in originals:
            copy = Block(
                Instruction(Op.Label, [mapping[block.label_id]]),
                [
                    self._renamed(i, mapping, id_operands.shared_positions(i))
                    for i in block.instructions
                ],
                [Instruction(i.opcode, list(i.operands), i.origin) for i in block.preamble],
            )
            copies.append(copy)
        last = max(self.function.blocks.index(block) for block in originals)
        self.function.blocks[last + 1 : last + 1] = copies
        for copy in copies:
            self.def_use.places[id(copy.label)] = (self.function, copy)
            for instruction in copy.instructions:
                self.def_use.record(instruction, (self.function, copy))
        for annotation in list(module.annotations):
            if annotation.opcode == Op.Decorate and annotation.operands[0] in mapping:
                module.annotations.append(
                    Instruction(
                        Op.Decorate, [mapping[annotation.operands[0]], *annotation.operands[1:]]
                    )
                )
        return mapping

    @staticmethod
    def _renamed(
        instruction: Instruction, mapping: dict[int, int], positions: Sequence[int]
    ) -> Instruction:
        operands = list(instruction.operands)
        for at in positions:
            operands[at] = mapping.get(operands[at], operands[at])
        return Instruction(instruction.opcode, operands, instruction.origin)

    def _join(
        self, mapping: dict[int, int], live_out: list[tuple[int, Instruction, list[Instruction]]]
    ) -> Block:
        """Give each copy a merge block of its own, joined in the old merge block; returns
        the copy's."""
        loop = self.loop
        builder = self.builder
        merge = self._block(loop.merge)
        copy_labels = {mapping[label] for label in loop.labels}
        exits = []
        for labels in (loop.labels, copy_labels):
            exit_block = Block(Instruction(Op.Label, [builder.module.new_id()]))
            exits.append(exit_block)
            for block in self.function.blocks:
                if block.label_id in labels:
                    self._retarget(block, loop.merge, exit_block.label_id)
            self.def_use.places[id(exit_block.label)] = (self.function, exit_block)
        original_exit, copy_exit = exits
        phis = [i for i in merge.instructions if i.opcode == Op.Phi]
        joins: list[Instruction] = []
        for phi in phis:
            values = []
            for exit_block, rename in ((original_exit, {}), (copy_exit, mapping)):
                operands = [phi.operands[0], builder.module.new_id()]
                operands += [rename.get(o, o) for o in phi.operands[2:]]
                exit_block.instructions.append(Instruction(Op.Phi, operands))
                values.append(operands[1])
            joins.append(
                Instruction(
                    Op.Phi,
                    [
                        phi.operands[0],
                        phi.result_id or 0,
                        values[0],
                        original_exit.label_id,
                        values[1],
                        copy_exit.label_id,
                    ],
                )
            )
        for result, definition, uses in live_out:
            if not uses:
                continue
            joined = builder.module.new_id()
            joins.append(
                Instruction(
                    Op.Phi,
                    [
                        definition.operands[0],
                        joined,
                        result,
                        original_exit.label_id,
                        mapping[result],
                        copy_exit.label_id,
                    ],
                )
            )
            for use in uses:
                self._rename_use(use, result, joined)
        for phi in phis:
            self.def_use.forget(phi)
        merge.instructions[: len(phis)] = joins
        for exit_block in exits:
            exit_block.instructions.append(Instruction(Op.Branch, [loop.merge]))
        last = max(
            self.function.blocks.index(block)
            for block in self.function.blocks
            if block.label_id in loop.labels or block.label_id in copy_labels
        )
        self.function.blocks[last + 1 : last + 1] = exits
        for block, added in (
            (exits[0], exits[0].instructions),
            (exits[1], exits[1].instructions),
            (merge, joins),
        ):
            for instruction in added:
                self.def_use.record(instruction, (self.function, block))
        return copy_exit

    def _rename_use(self, use: Instruction, old: int, new: int) -> None:
        place = self.def_use.place(use)
        self.def_use.forget(use)
        result = use.result_id
        for at in self.def_use.id_operands.shared_positions(use):
            if use.operands[at] == old and old != result:
                use.operands[at] = new
        self.def_use.record(use, place)

    def _retarget(self, block: Block, old: int, new: int) -> None:
        """Make ``block``'s branch and merge instruction name ``new`` where they named
        ``old`` (ids are unique, so an id operand equal to a label is that label)."""
        for instruction in block.instructions[-2:]:
            for at in self.def_use.id_operands.shared_positions(instruction):
                if instruction.operands[at] == old:
                    instruction.operands[at] = new

    def _block(self, label: int) -> Block:
        return next(block for block in self.function.blocks if block.label_id == label)
