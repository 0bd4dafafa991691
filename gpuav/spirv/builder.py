"""Adding code to a module without juggling indices.

The builder owns an insert point (a block and a position in it), hands out ids through the
module, shares types and constants (a second `OpTypeInt 32 0` would be invalid SPIR-V), and
emits structured control flow: ``if_then``/``if_else`` split the current block, add the
OpSelectionMerge and branches, and leave the insert point at the merge block, where ``phi``
joins the values of the two paths.

    with builder.if_else(in_bounds) as (valid, invalid):
        with valid:
            value = builder.op(Op.ImageFetch, vec4, image, coordinate)
        with invalid:
            builder.call(report, ...)
    result = builder.phi(vec4, (value, valid.exit_label), (null, invalid.exit_label))
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType

from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.grammar import RESULT_INDEX, FunctionControl, LoopControl, Op, SelectionControl
from gpuav.spirv.instruction import Instruction, encode_string
from gpuav.spirv.module import TERMINATORS, Block, Function, Module

# Types that may be declared only once per module; aggregates can repeat, and carry
# decorations (ArrayStride, Offset, Block), so they are never shared.
UNIQUE_TYPES = frozenset(
    {
        Op.TypeVoid,
        Op.TypeBool,
        Op.TypeInt,
        Op.TypeFloat,
        Op.TypeVector,
        Op.TypeMatrix,
        Op.TypeImage,
        Op.TypeSampler,
        Op.TypeSampledImage,
        Op.TypePointer,
        Op.TypeFunction,
    }
)
SHARED_CONSTANTS = frozenset(
    {Op.Constant, Op.ConstantTrue, Op.ConstantFalse, Op.ConstantNull, Op.ConstantComposite}
)
_MERGE_OPS = (Op.SelectionMerge, Op.LoopMerge)


class Branch:
    """One arm of an if: a context manager that emits into the arm and closes it."""

    def __init__(self, builder: Builder, block: Block, merge: Block, head_label: int) -> None:
        self.builder = builder
        self.block = block
        self.merge = merge
        # The block that branched here: for if_then, the parent of the skipped path.
        self.head_label = head_label
        self.exit_label = block.label_id
        self.closed = False

    def __enter__(self) -> Branch:
        self.builder.position_at_end(self.block)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close(self.builder.block)

    def close(self, current: Block | None = None) -> None:
        """Branch from the arm's last block to the merge block (once)."""
        if self.closed:
            return
        block = current or self.block
        if not block.instructions or block.terminator.opcode not in TERMINATORS:
            block.instructions.append(Instruction(Op.Branch, [self.merge.label_id]))
            self.builder.note_placed(block.instructions[-1], block)
        self.exit_label = block.label_id
        self.closed = True


class Builder:
    def __init__(self, module: Module, def_use: DefUse | None = None) -> None:
        self.module = module
        self.def_use = def_use
        self.function: Function | None = None
        self.block: Block | None = None
        self.index = 0
        self._shared: dict[tuple[int, ...], int] | None = None
        self._id_operands: IdOperands | None = None

    # -- module-level declarations -------------------------------------------------------

    def shared_declaration(self, opcode: int, *operands: int) -> int:
        """Get or create a type or constant; operands exclude the result id."""
        if self._shared is None:
            self._shared = {}
            for instruction in self.module.globals:
                key = _share_key(instruction)
                if key is not None:
                    self._shared.setdefault(key, instruction.result_id or 0)
        key = (opcode, *operands)
        found = self._shared.get(key)
        if found is not None:
            return found
        result = self.declare(opcode, *operands)
        self._shared[key] = result
        return result

    def declare(self, opcode: int, *operands: int) -> int:
        """Append a new global (type, constant, variable) with a fresh result id."""
        result = self.module.new_id()
        if opcode in UNIQUE_TYPES or opcode in (Op.TypeStruct, Op.TypeRuntimeArray, Op.TypeArray):
            words = [result, *operands]
        else:  # constants and variables: result type first
            words = [operands[0], result, *operands[1:]]
        instruction = Instruction(opcode, words)
        self.module.globals.append(instruction)
        if self.def_use is not None:
            self.def_use.record(instruction)
        return result

    def type_void(self) -> int:
        return self.shared_declaration(Op.TypeVoid)

    def type_bool(self) -> int:
        return self.shared_declaration(Op.TypeBool)

    def type_int(self, width: int = 32, signed: bool = False) -> int:
        return self.shared_declaration(Op.TypeInt, width, int(signed))

    def type_float(self, width: int = 32) -> int:
        return self.shared_declaration(Op.TypeFloat, width)

    def type_vector(self, component: int, count: int) -> int:
        return self.shared_declaration(Op.TypeVector, component, count)

    def type_pointer(self, storage_class: int, pointee: int) -> int:
        return self.shared_declaration(Op.TypePointer, storage_class, pointee)

    def type_function(self, return_type: int, *parameters: int) -> int:
        return self.shared_declaration(Op.TypeFunction, return_type, *parameters)

    def type_struct(self, *members: int) -> int:
        return self.declare(Op.TypeStruct, *members)

    def type_runtime_array(self, element: int) -> int:
        return self.declare(Op.TypeRuntimeArray, element)

    def constant(self, type_id: int, *value_words: int) -> int:
        return self.shared_declaration(Op.Constant, type_id, *value_words)

    def constant_uint(self, value: int, width: int = 32) -> int:
        words = [value & 0xFFFFFFFF] + ([value >> 32 & 0xFFFFFFFF] if width == 64 else [])
        return self.constant(self.type_int(width, False), *words)

    def constant_int(self, value: int) -> int:
        return self.constant(self.type_int(32, True), value & 0xFFFFFFFF)

    def constant_bool(self, value: bool) -> int:
        return self.shared_declaration(
            Op.ConstantTrue if value else Op.ConstantFalse, self.type_bool()
        )

    def constant_null(self, type_id: int) -> int:
        return self.shared_declaration(Op.ConstantNull, type_id)

    def variable(self, pointer_type: int, storage_class: int) -> int:
        return self.declare(Op.Variable, pointer_type, storage_class)

    def decorate(self, target: int, decoration: int, *parameters: int) -> None:
        self.module.annotations.append(Instruction(Op.Decorate, [target, decoration, *parameters]))

    def member_decorate(self, struct: int, member: int, decoration: int, *parameters: int) -> None:
        self.module.annotations.append(
            Instruction(Op.MemberDecorate, [struct, member, decoration, *parameters])
        )

    def name(self, target: int, text: str) -> None:
        self.module.debug_names.append(Instruction(Op.Name, [target, *encode_string(text)]))

    def capability(self, capability: int) -> None:
        if not any(c.operands[0] == capability for c in self.module.capabilities):
            self.module.capabilities.append(Instruction(Op.Capability, [capability]))

    def extension(self, name: str) -> None:
        words = encode_string(name)
        if not any(e.operands == words for e in self.module.extensions):
            self.module.extensions.append(Instruction(Op.Extension, words))

    # -- insert points ---------------------------------------------------------------------

    def position_at_end(self, block: Block, function: Function | None = None) -> None:
        self._position(block, len(block.instructions), function)

    def position_at_start(self, block: Block, function: Function | None = None) -> None:
        self._position(block, 0, function)

    def position_after_variables(self, function: Function) -> None:
        """At the start of ``function``'s first block, after its OpVariables (which must
        come first there): where values read once per invocation of the function go."""
        entry = function.blocks[0]
        after = 0
        for at, instruction in enumerate(entry.instructions):
            if instruction.opcode == Op.Variable:
                after = at + 1
        self._position(entry, after, function)

    def position_before(self, instruction: Instruction, block: Block, function: Function) -> None:
        self._position(block, _index_in(block, instruction), function)

    def position_after(self, instruction: Instruction, block: Block, function: Function) -> None:
        self._position(block, _index_in(block, instruction) + 1, function)

    def _position(self, block: Block, index: int, function: Function | None) -> None:
        if function is not None:
            self.function = function
        self.block = block
        self.index = index

    # -- emitting --------------------------------------------------------------------------

    def emit(self, instruction: Instruction) -> Instruction:
        """Insert an instruction at the insert point and move the point past it."""
        block = self._current_block()
        block.instructions.insert(self.index, instruction)
        self.index += 1
        self.note_placed(instruction, block)
        return instruction

    def op(self, opcode: int, result_type: int, *operands: int) -> int:
        """Emit an instruction with a result; returns the new id."""
        result = self.module.new_id()
        self.emit(Instruction(opcode, [result_type, result, *operands]))
        return result

    def op_void(self, opcode: int, *operands: int) -> None:
        """Emit an instruction without a result (OpStore, OpControlBarrier, ...)."""
        self.emit(Instruction(opcode, list(operands)))

    def move_here(self, instruction: Instruction, source: Block) -> None:
        """Take an instruction out of its block and insert it at the insert point."""
        position = _index_in(source, instruction)
        del source.instructions[position]
        if source is self.block and position < self.index:
            self.index -= 1
        self.emit(instruction)

    def note_placed(self, instruction: Instruction, block: Block) -> None:
        if self.def_use is not None and self.function is not None:
            self.def_use.record(instruction, (self.function, block))

    def _current_block(self) -> Block:
        if self.block is None:
            raise RuntimeError("the builder has no insert point")
        return self.block

    def _current_function(self) -> Function:
        if self.function is None:
            raise RuntimeError("the builder has no function")
        return self.function

    # -- functions and blocks ----------------------------------------------------------------

    def new_function(
        self, return_type: int, parameter_types: list[int], control: int = FunctionControl.None_
    ) -> tuple[Function, list[int]]:
        """Append a function with an empty entry block; the insert point moves into it."""
        function_type = self.type_function(return_type, *parameter_types)
        definition = Instruction(
            Op.Function, [return_type, self.module.new_id(), control, function_type]
        )
        parameters = [
            Instruction(Op.FunctionParameter, [type_id, self.module.new_id()])
            for type_id in parameter_types
        ]
        function = Function(
            definition=definition, end=Instruction(Op.FunctionEnd, []), parameters=parameters
        )
        entry = Block(label=Instruction(Op.Label, [self.module.new_id()]))
        function.blocks.append(entry)
        self.module.functions.append(function)
        if self.def_use is not None:
            for instruction in (definition, *parameters):
                self.def_use.record(instruction)
        self.position_at_end(entry, function)
        return function, [p.operands[1] for p in parameters]

    def new_block_after(self, anchor: Block) -> Block:
        function = self._current_function()
        block = Block(label=Instruction(Op.Label, [self.module.new_id()]))
        function.blocks.insert(_block_index(function, anchor) + 1, block)
        if self.def_use is not None:
            self.def_use.places[id(block.label)] = (function, block)
        return block

    def split_block(self) -> Block:
        """Move everything from the insert point on into a new block right after this one.

        The current block is left without a terminator for the caller to finish. Phis of the
        successors now come from the new block. A loop header is first reduced to its phis,
        OpLoopMerge and a branch, since the loop's back edge must keep targeting it.
        """
        block = self._current_block()
        function = self._current_function()
        if any(i.opcode == Op.LoopMerge for i in block.instructions[self.index :]):
            self._detach_loop_header(block)
            block = self._current_block()
        tail = self.new_block_after(block)
        tail.instructions = block.instructions[self.index :]
        del block.instructions[self.index :]
        if self.def_use is not None:
            for moved in tail.instructions:
                self.def_use.places[id(moved)] = (function, tail)
        if tail.instructions:
            _retarget_phis(function, tail.instructions[-1], block.label_id, tail.label_id)
        self._keep_sampled_images_with_consumers(block, tail)
        return tail

    def _keep_sampled_images_with_consumers(self, head: Block, tail: Block) -> None:
        """An OpSampledImage must sit in the block of its consumers (SPIR-V 2.16.1): give the
        tail its own copy of each one that the split separated from a consumer."""
        sampled = {i.result_id: i for i in head.instructions if i.opcode == Op.SampledImage}
        if not sampled:
            return
        id_operands = self.id_operands()
        copies: dict[int, int] = {}
        for instruction in tail.instructions:
            for at in id_operands.positions(instruction):
                original = instruction.operands[at]
                if original not in sampled or at == RESULT_INDEX.get(instruction.opcode):
                    continue
                if original not in copies:
                    source = sampled[original]
                    copy = Instruction(Op.SampledImage, list(source.operands))
                    copy.operands[1] = copies[original] = self.module.new_id()
                    tail.instructions.insert(len(copies) - 1, copy)
                    self.copy_decorations(original, copies[original])
                instruction.operands[at] = copies[original]
        for original in copies:
            still_used = any(original in id_operands.used_ids(i) for i in head.instructions)
            if not still_used:
                head.instructions.remove(sampled[original])
                if self.def_use is not None:
                    self.def_use.forget(sampled[original])
        if self.def_use is not None and self.function is not None:
            for instruction in tail.instructions[: len(copies)]:
                self.def_use.record(instruction, (self.function, tail))

    def id_operands(self) -> IdOperands:
        if self.def_use is not None:
            return self.def_use.id_operands
        if self._id_operands is None:
            self._id_operands = IdOperands(self.module)
        return self._id_operands

    def copy_decorations(self, source: int, target: int) -> None:
        """Give ``target`` the OpDecorate decorations of ``source`` (NonUniform, ...)."""
        for instruction in list(self.module.annotations):
            if instruction.opcode == Op.Decorate and instruction.operands[0] == source:
                self.module.annotations.append(
                    Instruction(Op.Decorate, [target, *instruction.operands[1:]])
                )

    def _detach_loop_header(self, header: Block) -> None:
        """Leave the header as phis + OpLoopMerge + OpBranch; the rest goes to a new block."""
        phis = 0
        while phis < len(header.instructions) and header.instructions[phis].opcode == Op.Phi:
            phis += 1
        offset = self.index - phis
        loop_merge = next(i for i in header.instructions if i.opcode == Op.LoopMerge)
        body_instructions = [i for i in header.instructions[phis:] if i is not loop_merge]
        body = self.new_block_after(header)
        body.instructions = body_instructions
        if loop_merge.operands[1] == header.label_id:
            # A one-block loop is its own continue target; the back edge now leaves from the
            # body, which must be the continue construct's entry (it post-dominates it).
            loop_merge.operands[1] = body.label_id
        header.instructions = [
            *header.instructions[:phis],
            loop_merge,
            Instruction(Op.Branch, [body.label_id]),
        ]
        function = self._current_function()
        if self.def_use is not None:
            for moved in body.instructions:
                self.def_use.places[id(moved)] = (function, body)
            self.note_placed(header.instructions[-1], header)
        _retarget_phis(function, body.instructions[-1], header.label_id, body.label_id)
        self._position(body, max(offset, 0), None)

    @contextmanager
    def if_else(self, condition: int) -> Iterator[tuple[Branch, Branch]]:
        """Structured if/else at the insert point; afterwards the point is the merge block."""
        head = self._current_block()
        merge = self.split_block()
        head = self._current_block()
        then_block = self.new_block_after(head)
        else_block = self.new_block_after(then_block)
        self._terminate_head(head, merge, condition, then_block.label_id, else_block.label_id)
        then_branch = Branch(self, then_block, merge, head.label_id)
        else_branch = Branch(self, else_block, merge, head.label_id)
        yield then_branch, else_branch
        then_branch.close()
        else_branch.close()
        self.position_at_start(merge)

    @contextmanager
    def if_then(self, condition: int) -> Iterator[Branch]:
        """Structured if without else; the skipped path's parent is ``Branch.head_label``."""
        head = self._current_block()
        merge = self.split_block()
        head = self._current_block()
        then_block = self.new_block_after(head)
        self._terminate_head(head, merge, condition, then_block.label_id, merge.label_id)
        branch = Branch(self, then_block, merge, head.label_id)
        with branch:
            yield branch
        self.position_at_start(merge)

    def _terminate_head(
        self, head: Block, merge: Block, condition: int, true_label: int, false_label: int
    ) -> None:
        for instruction in (
            Instruction(Op.SelectionMerge, [merge.label_id, SelectionControl.None_]),
            Instruction(Op.BranchConditional, [condition, true_label, false_label]),
        ):
            head.instructions.append(instruction)
            self.note_placed(instruction, head)

    def while_loop(
        self,
        carried: list[tuple[int, int]],
        keep_going: Callable[[list[int]], int],
        step: Callable[[list[int]], list[int]],
    ) -> list[int]:
        """A structured loop at the insert point over values it carries, (type, first
        value) each: ``keep_going(values)`` (emitted in its header) says whether to run
        ``step(values)`` (emitted in its body), which returns the next values. Returns the
        values as the loop leaves them; the insert point moves to the block after it."""
        function = self._current_function()
        entry = self._current_block()
        header = self.new_block_after(entry)
        body = self.new_block_after(header)
        merge = self.new_block_after(body)
        self.op_void(Op.Branch, header.label_id)
        self.position_at_end(header, function)
        phis = [
            Instruction(Op.Phi, [type_id, self.module.new_id(), first, entry.label_id])
            for type_id, first in carried
        ]
        for phi in phis:
            self.emit(phi)
        values = [phi.operands[1] for phi in phis]
        going = keep_going(values)
        self.op_void(Op.LoopMerge, merge.label_id, body.label_id, LoopControl.None_)
        self.op_void(Op.BranchConditional, going, body.label_id, merge.label_id)
        self.position_at_end(body, function)
        following = step(values)
        self.op_void(Op.Branch, header.label_id)
        for phi, value in zip(phis, following, strict=True):
            phi.operands += [value, body.label_id]
        self.position_at_end(merge, function)
        return values

    def or_else(self, quick: int, slow: Callable[[], int]) -> int:
        """The bool ``quick``, or else ``slow()``, emitted on a branch of its own that runs
        only where ``quick`` is false."""
        bool_ = self.type_bool()
        with self.if_then(self.op(Op.LogicalNot, bool_, quick)) as otherwise:
            decided = slow()
        return self.phi(
            bool_, (decided, otherwise.exit_label), (self.constant_bool(True), otherwise.head_label)
        )

    def phi(self, result_type: int, *incoming: tuple[int, int], result: int | None = None) -> int:
        """Emit OpPhi from (value, parent label) pairs; ``result`` reuses an existing id."""
        result_id = self.module.new_id() if result is None else result
        operands = [result_type, result_id]
        for value, parent in incoming:
            operands += [value, parent]
        self.emit(Instruction(Op.Phi, operands))
        return result_id


def _share_key(instruction: Instruction) -> tuple[int, ...] | None:
    opcode = instruction.opcode
    if opcode in UNIQUE_TYPES:
        return (opcode, *instruction.operands[1:])
    if opcode in SHARED_CONSTANTS:
        operands = instruction.operands
        return (opcode, operands[0], *operands[2:])
    return None


def _index_in(block: Block, instruction: Instruction) -> int:
    for index, candidate in enumerate(block.instructions):
        if candidate is instruction:
            return index
    raise ValueError(f"{instruction!r} is not in block %{block.label_id}")


def _block_index(function: Function, block: Block) -> int:
    for index, candidate in enumerate(function.blocks):
        if candidate is block:
            return index
    raise ValueError(f"block %{block.label_id} is not in the function")


def _successors(terminator: Instruction) -> list[int]:
    operands = terminator.operands
    if terminator.opcode == Op.Branch:
        return [operands[0]]
    if terminator.opcode == Op.BranchConditional:
        return operands[1:3]
    if terminator.opcode == Op.Switch:
        # Literal widths vary with the selector; a literal mistaken for a label is harmless
        # since only blocks whose phis name the old parent are touched.
        return operands[1:]
    return []


def _retarget_phis(function: Function, terminator: Instruction, old: int, new: int) -> None:
    """Phis in the successors of ``terminator`` that came from ``old`` now come from ``new``."""
    targets = set(_successors(terminator))
    if not targets:
        return
    for block in function.blocks:
        if block.label_id not in targets:
            continue
        for instruction in block.instructions:
            if instruction.opcode != Op.Phi:
                break
            operands = instruction.operands
            for at in range(3, len(operands), 2):
                if operands[at] == old:
                    operands[at] = new
