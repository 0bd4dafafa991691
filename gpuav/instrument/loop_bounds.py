"""Upper bounds, computable before a loop, of the integer values an access uses inside it.

A loop can run without checks when a test made once before it proves every check of every
iteration passes (``loop_versions``). For a range check ``index < limit`` that test is
``bound < limit``, where ``bound`` is at least the index in every iteration. This module
finds such bounds from the code alone and emits them at the end of the loop's preheader:

- a value defined before the loop bounds itself (a constant, a value computed outside);
- ``x & m`` is at most ``m``, ``x % m`` below ``m``, ``x >> c`` at most ``bound(x) >> c``;
- ``x + y`` and ``x * y`` are at most ``bound(x) + bound(y)`` and ``bound(x) * bound(y)``,
  valid only where that sum or product does not pass 2^32 (a condition joins the test);
- a function variable the loop does not store holds, throughout the loop, what it holds
  before it (read again at the end of the preheader);
- the loop's counter, compared with ``limit`` by the test that enters each iteration, is at
  most ``bound(limit) - 1`` (for a signed compare only when it starts at a constant >= 0
  and counts up by one, so that it is never negative); a counter that only counts down, to
  a limit that keeps it at or above 0 without wrapping, is at most its first value;
- a load from a push constant or a uniform block at constant indices is read again in the
  preheader (uniform data cannot change during a draw or dispatch);
- a function variable with one store, which runs before every read, holds the stored value;
- ``OpArrayLength`` is at most what the range the layer keeps for the buffer allows
  (``action_values``).

Where the layer can work a bound out for an action too (constants, what it keeps of the
buffers, the push constants it saw), the bound says how (``Described``), so that a test of a
whole entry function can be made on the host (``function_versions``).

``invariant`` gives the same for values of any type (a pointer the loop reads through), and
``span_end`` the bound of the end of a span of bytes.

Only 32-bit integers are bounded. Every bound is unsigned: a negative value is huge, and
fails the test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from gpuav.instrument import host_terms
from gpuav.instrument.local_arrays import CHAINS
from gpuav.instrument.printf_arguments import NON_SEMANTIC_PREFIX
from gpuav.spirv.analysis.control_flow import successors
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.loops import FunctionUses, Loop, dominates
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Decoration, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block

# Emits, at the builder's insert point, (the bound as a uint, bools that must all hold).
EmitBound = Callable[[Builder], tuple[int, list[int]]]
# Emits, at the builder's insert point, a value equal to one the loop uses.
EmitValue = Callable[[Builder], int]


class LayerBounds(Protocol):
    """Values the layer knows for each action (``action_values``)."""

    def length(self, instruction: Instruction) -> EmitBound | None:
        """A bound of an OpArrayLength's result, from the range the layer keeps."""

    def pushed(self, load: Instruction) -> host_terms.Bound | None:
        """What the layer can work out of a push constant's load: the word the app pushed."""


class Described:
    """An EmitBound that also says how the layer works out the same value for an action
    (``host_terms``), where it can."""

    __slots__ = ("emit", "host")

    def __init__(self, emit: EmitBound, host: host_terms.Bound | None) -> None:
        self.emit = emit
        self.host = host

    def __call__(self, builder: Builder) -> tuple[int, list[int]]:
        return self.emit(builder)


def described(bound: EmitBound) -> host_terms.Bound | None:
    """What the layer can work out of ``bound``: None where it reads what only the shader
    sees (push constants, uniforms, values it computed)."""
    return bound.host if isinstance(bound, Described) else None


_UNROLL_MAX_TRIPS = 128
# Tests that enter an iteration while the counter is below, or above, a limit.
UP = (Op.ULessThan, Op.SLessThan, Op.ULessThanEqual)
DOWN = (Op.UGreaterThan, Op.UGreaterThanEqual, Op.SGreaterThan, Op.SGreaterThanEqual)


@dataclass(frozen=True)
class Counter:
    """The loop's counter and the test that enters each iteration."""

    test_block: Block
    value: int  # the counter as the test reads it (an OpPhi of the header, or an OpLoad)
    variable: int | None  # the function variable that holds it, when it is not an OpPhi
    compare: int  # one of UP or DOWN: the counter on the left
    limit: int
    start: int | None  # constant first value, when known
    step: int | None  # constant increment (negative: a decrement), when it is the only one
    start_value: int | None  # the id of the first value, when known


class LoopBounds:
    def __init__(
        self,
        loop: Loop,
        def_use: DefUse,
        types: Types,
        uses: FunctionUses,
        layer: LayerBounds | None = None,
    ) -> None:
        self.loop = loop
        self.def_use = def_use
        self.uses = uses
        self.types = types
        self.layer = layer
        self._pair: int | None = None
        self.counter = self._counter()

    # -- what the analysis answers -----------------------------------------------------------

    def upper(self, value: int, block: Block) -> EmitBound | None:
        """How to emit an upper bound of ``value`` as used in ``block`` of the loop; None when
        none is known."""
        return self._upper(value, block, depth=0)

    def span_end(
        self, constant: int, terms: list[tuple[int, int]], block: Block
    ) -> EmitBound | None:
        """A bound of the end of the bytes ``constant + sum(index * stride) + [0, size)``
        (``constant`` includes the size) for the (index, stride) ``terms`` used in
        ``block``; None where an index has no bound or a stride is not positive."""
        if not 0 <= constant <= 0xFFFF_FFFF:
            return None
        end = _constant(constant)
        for index, stride in terms:
            bound = self.upper(index, block)
            if bound is None or not 0 < stride <= 0xFFFF_FFFF:
                return None
            type_id = self.types.type_of(index)
            if type_id is not None and self.types.is_signed(type_id):
                bound = _not_negative(bound)
            end = self._combined(Op.IAdd, end, self._combined(Op.IMul, bound, _constant(stride)))
        return end

    def invariant(self, value: int, block: Block) -> EmitValue | None:
        """How to emit, before the loop, a value equal to ``value`` as ``block`` of the loop
        reads it; None when it may change between iterations."""
        if self.outside(value):
            return _same(value)
        definition = self.def_use.definition(value)
        if definition is None or definition.opcode != Op.Load:
            return None
        stores = self._stores(definition.operands[2])
        if stores is None:
            return self._uniform(definition)
        if not stores or any(self._in_loop(store) for store in stores):
            # never stored: undefined, and perhaps a different value at each read
            return None
        # Stored only outside the loop: what it holds before the loop it holds throughout.
        return _reloaded(definition)

    def unroll_worth(self) -> bool:
        """Whether the loop runs a small constant number of times, so that asking the driver
        to unroll it asks for what it does on its own for such a loop without checks."""
        counter = self.counter
        if counter is None or counter.compare not in UP:
            return False
        if counter.start is None or counter.step != 1:
            return False
        limit = self.types.constant_value(counter.limit)
        if limit is None:
            return False
        if counter.compare == Op.ULessThanEqual:
            limit += 1
        return 0 <= limit - counter.start <= _UNROLL_MAX_TRIPS

    # -- bounds -------------------------------------------------------------------------------

    def _upper(self, value: int, block: Block, depth: int) -> EmitBound | None:
        if depth > 8 or not self._is_int32(value):
            return None
        constant = self.types.constant_value(value)
        if constant is not None:
            return _constant(constant & 0xFFFF_FFFF)
        same = self.invariant(value, block)
        definition = self.def_use.definition(value)
        if same is not None:
            return self._pushed(definition, self._as_bound(same))
        if definition is None:
            return None
        opcode, operands = definition.opcode, definition.operands
        if opcode == Op.Bitcast:
            return self._upper(operands[2], block, depth + 1)
        if opcode == Op.BitwiseAnd:
            # a mask set before the loop is the tightest bound and costs nothing
            masks = sorted(operands[2:4], key=lambda operand: not self.outside(operand))
            return self._upper(masks[0], block, depth + 1) or self._upper(
                masks[1], block, depth + 1
            )
        if opcode == Op.UMod:
            divisor = self._upper(operands[3], block, depth + 1)
            return None if divisor is None else _minus_one(divisor)
        if opcode == Op.ShiftRightLogical:
            shifted = self._upper(operands[2], block, depth + 1)
            if shifted is None or not self.outside(operands[3]):
                return None
            return _shifted(shifted, operands[3], self.types.constant_value(operands[3]))
        if opcode in (Op.IAdd, Op.IMul):
            left = self._upper(operands[2], block, depth + 1)
            right = self._upper(operands[3], block, depth + 1)
            if left is None or right is None:
                return None
            return self._combined(opcode, left, right)
        if opcode == Op.ArrayLength and self.layer is not None:
            return self.layer.length(definition)
        if opcode == Op.Load:
            counted = self._counted(value, block, depth)
            return counted if counted is not None else self._stored_once(definition, depth)
        if opcode == Op.Phi:
            return self._counted(value, block, depth)
        return None

    def _pushed(self, definition: Instruction | None, bound: EmitBound) -> EmitBound:
        """``bound``, the value itself read before the loop, with what the layer knows of it
        where it is a push constant."""
        if self.layer is None or definition is None or definition.opcode != Op.Load:
            return bound
        host = self.layer.pushed(definition)
        return bound if host is None else Described(bound, host)

    def _stored_once(self, load: Instruction, depth: int) -> EmitBound | None:
        """A function variable stored in one place only, where that store runs before every
        read of it (it dominates the load), holds what was stored: its bound is the stored
        value's. glslang's unoptimized code keeps every local in such a variable."""
        stores = self._stores(load.operands[2])
        if stores is None or len(stores) != 1:
            return None
        store = stores[0]
        store_place = self.def_use.place(store)
        load_place = self.def_use.place(load)
        if store_place is None or load_place is None:
            return None
        store_block, load_block = store_place[1], load_place[1]
        if store_block is load_block:
            order = store_block.instructions
            if next(k for k, i in enumerate(order) if i is store) > next(
                k for k, i in enumerate(order) if i is load
            ):
                return None
        elif not dominates(self.loop.function, store_block.label_id, load_block.label_id):
            return None
        return self._upper(store.operands[1], store_block, depth + 1)

    def _counted(self, value: int, block: Block, depth: int) -> EmitBound | None:
        """A bound of the loop's counter, read in ``block`` after the entering test passed."""
        counter = self.counter
        if counter is None or block is counter.test_block or block is self.loop.header:
            return None
        if not self._same_counter(value, block):
            return None
        if counter.compare in DOWN:
            return self._counted_down(counter, depth)
        if counter.compare == Op.SLessThan and (
            counter.start is None or counter.start < 0 or counter.step != 1
        ):
            return None
        limit = self._upper(counter.limit, counter.test_block, depth + 1)
        if limit is None:
            return None
        return limit if counter.compare == Op.ULessThanEqual else _minus_one(limit)

    def _counted_down(self, counter: Counter, depth: int) -> EmitBound | None:
        """A counter that only ever decreases is at most its first value. It must stay at or
        above 0 without wrapping: a signed test against a constant >= 0 (> -1), or an
        unsigned one that stops before 0, counting down by one."""
        if counter.step is None or counter.step >= 0 or counter.start_value is None:
            return None
        limit = self.types.constant_value(counter.limit)
        if limit is None:
            return None
        compare = counter.compare
        if compare == Op.SGreaterThanEqual and limit < 0:
            return None
        if compare == Op.SGreaterThan and limit < -1:
            return None
        if compare in (Op.UGreaterThan, Op.UGreaterThanEqual) and counter.step != -1:
            return None
        if compare == Op.UGreaterThanEqual and limit & 0xFFFF_FFFF == 0:
            return None
        return self._upper(counter.start_value, counter.test_block, depth + 1)

    def _same_counter(self, value: int, block: Block) -> bool:
        """Whether ``value`` in ``block`` is what the entering test compared."""
        counter = self.counter
        assert counter is not None
        if counter.variable is None:
            return value == counter.value
        load = self.def_use.definition(value)
        if load is None or load.opcode != Op.Load or load.operands[2] != counter.variable:
            return False
        return not self._stored_before(load, block, counter.variable)

    def _uniform(self, load: Instruction) -> EmitValue | None:
        """A load at constant indices from a push constant or uniform block: the same value
        in every iteration, so a copy of it before the loop is its bound."""
        chain = self.def_use.definition(load.operands[2])
        if chain is None:
            return None
        if chain.opcode == Op.Variable:
            variable, indices = chain, []
        elif chain.opcode in CHAINS:
            variable = self.def_use.definition(chain.operands[2])  # type: ignore[assignment]
            indices = chain.operands[3:]
        else:
            return None
        if variable is None or variable.opcode != Op.Variable:
            return None
        if not all(self.types.is_constant(index) for index in indices):
            return None
        if not self._read_only_uniform(variable):
            return None
        pointer_type = chain.operands[0]
        load_type = load.operands[0]

        def emit(builder: Builder) -> int:
            pointer = variable.operands[1]
            if indices:
                pointer = builder.op(chain.opcode, pointer_type, pointer, *indices)
            return builder.op(Op.Load, load_type, pointer, *load.operands[3:])

        return emit

    def _read_only_uniform(self, variable: Instruction) -> bool:
        storage = variable.operands[2]
        if storage == StorageClass.PushConstant:
            return True
        if storage != StorageClass.Uniform:
            return False
        pointee = self.types.pointee(variable.operands[0])
        pointee, _ = self.types.strip_arrays(pointee)
        decorated = [
            a.operands[1]
            for a in self.def_use.module.annotations
            if a.opcode == Op.Decorate and a.operands[0] == pointee
        ]
        return Decoration.Block in decorated and Decoration.BufferBlock not in decorated

    # -- the counter --------------------------------------------------------------------------

    def _counter(self) -> Counter | None:
        loop = self.loop
        header = loop.header
        blocks = {block.label_id: block for block in loop.function.blocks}
        test = header
        if header.terminator.opcode == Op.Branch:
            test = blocks[header.terminator.operands[0]]
            if test.label_id == loop.merge or test.label_id == loop.continue_target:
                return None
        terminator = test.terminator
        if terminator.opcode != Op.BranchConditional or terminator.operands[2] != loop.merge:
            return None
        condition = self.def_use.definition(terminator.operands[0])
        if condition is None or condition.opcode not in UP + DOWN:
            return None
        if self.def_use.place(condition) != (loop.function, test):
            return None
        value, limit = condition.operands[2:4]
        read = self.def_use.definition(value)
        if read is None:
            return None
        if read.opcode == Op.Phi and self.def_use.place(read) == (loop.function, header):
            first, step = self._phi_steps(read)
            start = None if first is None else self.types.constant_value(first)
            return Counter(test, value, None, condition.opcode, limit, start, step, first)
        if read.opcode == Op.Load and self.def_use.place(read) == (loop.function, test):
            variable = read.operands[2]
            if self._stores(variable) is None:
                return None
            first, step = self._variable_steps(variable)
            start = None if first is None else self.types.constant_value(first)
            return Counter(test, value, variable, condition.opcode, limit, start, step, first)
        return None

    def _stored_before(self, load: Instruction, block: Block, variable: int) -> bool:
        """Whether, in some iteration, a store to the counter's ``variable`` runs after the
        entering test and before ``load`` in ``block`` (the load then need not see the value
        the test compared)."""
        loop = self.loop
        blocks = {b.label_id: b for b in loop.function.blocks}
        header = loop.header.label_id
        stores = [s for s, _ in self.uses.get(variable, []) if s.opcode == Op.Store]
        reached: set[int] = set()
        for store in stores:
            label = self._block_of(store)
            if label not in loop.labels:
                continue
            if label == block.label_id:
                order = block.instructions
                store_at = next(k for k, i in enumerate(order) if i is store)
                if store_at < next(k for k, i in enumerate(order) if i is load):
                    return True
            stack = [label]
            while stack:
                for successor in successors(blocks[stack.pop()], loop.labels):
                    if successor != header and successor not in reached:
                        reached.add(successor)
                        stack.append(successor)
        return block.label_id in reached

    def _phi_steps(self, phi: Instruction) -> tuple[int | None, int | None]:
        """(the id of the first value, the constant added by the back edge, when it is the
        loop's only way back)."""
        first = step = None
        back = 0
        for incoming, parent in zip(phi.operands[2::2], phi.operands[3::2], strict=True):
            if parent not in self.loop.labels:
                first = incoming
            else:
                back += 1
                step = self._step(incoming, lambda operand: operand == phi.result_id)
        return first, step if back == 1 else None

    def _variable_steps(self, variable: int) -> tuple[int | None, int | None]:
        """(the id of the value stored before the loop, the constant added in the continue
        block) when those are the counter's only stores; None for what is not known."""
        stores = self._stores(variable)
        if stores is None:
            return None, None
        outside = [s for s in stores if not self._in_loop(s)]
        inside = [s for s in stores if self._in_loop(s)]
        if len(inside) != 1 or self._block_of(inside[0]) != self.loop.continue_target:
            return None, None
        first = None
        if len(outside) == 1 and self._dominates_preheader(outside[0]):
            first = outside[0].operands[1]

        def reads_counter(operand: int) -> bool:
            load = self.def_use.definition(operand)
            return load is not None and load.opcode == Op.Load and load.operands[2] == variable

        return first, self._step(inside[0].operands[1], reads_counter)

    def _step(self, value: int, is_counter: Callable[[int], bool]) -> int | None:
        """The constant ``c`` when ``value`` is the counter plus ``c`` (or minus ``-c``), as
        a signed 32-bit number."""
        change = self.def_use.definition(value)
        if change is None or change.opcode not in (Op.IAdd, Op.ISub):
            return None
        left, right = change.operands[2:4]
        if is_counter(left):
            constant = self.types.constant_value(right)
        elif is_counter(right) and change.opcode == Op.IAdd:
            constant = self.types.constant_value(left)
        else:
            return None
        if constant is None:
            return None
        constant &= 0xFFFF_FFFF
        signed = constant - (1 << 32) if constant >> 31 else constant
        return -signed if change.opcode == Op.ISub else signed

    def _combined(self, opcode: int, left: EmitBound, right: EmitBound) -> EmitBound:
        """The bound of a sum or product of two bounded values, valid where it fits 32 bits."""

        def emit(builder: Builder) -> tuple[int, list[int]]:
            a, a_conditions = left(builder)
            b, b_conditions = right(builder)
            uint, bool_ = builder.type_int(32, False), builder.type_bool()
            if self._pair is None:
                self._pair = builder.type_struct(uint, uint)
            wide = Op.IAddCarry if opcode == Op.IAdd else Op.UMulExtended
            extended = builder.op(wide, self._pair, a, b)
            value = builder.op(Op.CompositeExtract, uint, extended, 0)
            high = builder.op(Op.CompositeExtract, uint, extended, 1)
            fits = builder.op(Op.IEqual, bool_, high, builder.constant_uint(0))
            return value, [*a_conditions, *b_conditions, fits]

        hosts = described(left), described(right)
        if hosts[0] is None or hosts[1] is None:
            return emit
        kind = host_terms.Sum if opcode == Op.IAdd else host_terms.Product
        return Described(emit, kind(hosts[0], hosts[1]))

    # -- facts ----------------------------------------------------------------------------------

    def outside(self, value: int) -> bool:
        """Whether ``value`` is defined before the loop (or is a global)."""
        definition = self.def_use.definition(value)
        if definition is None:
            return False
        place = self.def_use.place(definition)
        if place is None:
            # an OpUndef may differ at each use
            return definition.opcode not in (Op.Variable, Op.Undef)
        return place[0] is self.loop.function and place[1].label_id not in self.loop.labels

    def _stores(self, variable: int) -> list[Instruction] | None:
        """The OpStores to a function variable that is only loaded and stored, else None."""
        definition = self.def_use.definition(variable)
        if (
            definition is None
            or definition.opcode != Op.Variable
            or definition.operands[2] != StorageClass.Function
            or len(definition.operands) > 3
        ):
            return None
        stores = []
        for use, _ in self.uses.get(variable, []):
            if use.opcode == Op.Store and use.operands[0] == variable:
                stores.append(use)
            elif use.opcode != Op.Load and not self._non_semantic(use):
                return None
        return stores

    def _non_semantic(self, instruction: Instruction) -> bool:
        """Whether ``instruction`` is of a NonSemantic.* set: debug info names variables,
        and changes nothing."""
        return self.def_use.id_operands.extended_set(instruction).startswith(NON_SEMANTIC_PREFIX)

    def _in_loop(self, instruction: Instruction) -> bool:
        return self._block_of(instruction) in self.loop.labels

    def _block_of(self, instruction: Instruction) -> int | None:
        place = self.def_use.place(instruction)
        return None if place is None else place[1].label_id

    def _dominates_preheader(self, instruction: Instruction) -> bool:
        preheader = self.loop.preheader
        label = self._block_of(instruction)
        return (
            preheader is not None
            and label is not None
            and dominates(self.loop.function, label, preheader.label_id)
        )

    def _is_int32(self, value: int) -> bool:
        type_id = self.types.type_of(value)
        return (
            type_id is not None
            and self.types.opcode(type_id) == Op.TypeInt
            and self.types.width(type_id) == 32
        )

    def _as_bound(self, value: EmitValue) -> EmitBound:
        def emit(builder: Builder) -> tuple[int, list[int]]:
            return self._as_uint(builder, value(builder)), []

        return emit

    def _as_uint(self, builder: Builder, value: int) -> int:
        uint = builder.type_int(32, False)
        if self.types.type_of(value) == uint:
            return value
        return builder.op(Op.Bitcast, uint, value)


def _reloaded(load: Instruction) -> EmitValue:
    def emit(builder: Builder) -> int:
        return builder.op(Op.Load, load.operands[0], load.operands[2], *load.operands[3:])

    return emit


def _same(value: int) -> EmitValue:
    def emit(_: Builder) -> int:
        return value

    return emit


def _constant(value: int) -> EmitBound:
    def emit(builder: Builder) -> tuple[int, list[int]]:
        return builder.constant_uint(value), []

    return Described(emit, host_terms.Const(value))


def _not_negative(bound: EmitBound) -> EmitBound:
    """A signed index's bound, valid only below 2^31: a negative index reaches back."""

    def emit(builder: Builder) -> tuple[int, list[int]]:
        value, conditions = bound(builder)
        below = builder.op(
            Op.ULessThan, builder.type_bool(), value, builder.constant_uint(0x8000_0000)
        )
        return value, [*conditions, below]

    host = described(bound)
    return emit if host is None else Described(emit, host_terms.NotNegative(host))


def _minus_one(bound: EmitBound) -> EmitBound:
    """``bound - 1``: 0 wraps to the largest uint, which no test passes."""

    def emit(builder: Builder) -> tuple[int, list[int]]:
        value, conditions = bound(builder)
        uint = builder.type_int(32, False)
        return builder.op(Op.ISub, uint, value, builder.constant_uint(1)), conditions

    host = described(bound)
    return emit if host is None else Described(emit, host_terms.MinusOne(host))


def _shifted(bound: EmitBound, shift: int, shift_value: int | None) -> EmitBound:
    def emit(builder: Builder) -> tuple[int, list[int]]:
        value, conditions = bound(builder)
        uint = builder.type_int(32, False)
        return builder.op(Op.ShiftRightLogical, uint, value, shift), conditions

    host = described(bound)
    if host is None or shift_value is None or not 0 <= shift_value < 32:
        return emit
    return Described(emit, host_terms.Shifted(host, shift_value))
