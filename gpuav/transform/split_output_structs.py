"""split-output-structs: one output variable per leaf member of a struct-typed output.

The idea of Mesa/zink's split_blocks (seed 001): an output interface without structs is easier
to capture with transform feedback and to count. Each struct-typed Output variable (not a
built-in block such as gl_PerVertex, not a struct that fits in a single location, not an
array) becomes one variable per non-struct leaf member, recursing into nested structs. A leaf
sits at its member's location (the variable's Location plus the locations of the members
before it, or the member's own Location in a block), keeps its interpolation and
transform-feedback decorations (XfbBuffer/XfbStride/Stream from the variable or member,
Offset = the capture offset of the member), and every access through the old variable is
rewritten: access chains retarget the leaf variable, a store of a whole (sub)struct becomes
one OpCompositeExtract + OpStore per leaf, and a load of one is rebuilt with
OpCompositeConstruct. The old variable leaves the entry-point interfaces, names and
decorations.

Find phase: ``plan_splits``; rewrite phase: ``split_output_structs``. A use the pass cannot
rewrite (a pointer passed to a function, OpCopyMemory, a non-constant struct index, debug
info naming the variable) raises ``UnsupportedShader``, and the caller keeps the original.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gpuav.errors import UnsupportedShader
from gpuav.spirv import read, write
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.id_operands import IdOperands
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import Decoration, Op, StorageClass
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.module import Module
from gpuav.validate.interface import debug_names, member_names
from gpuav.validate.interface_locations import LocationCounter
from gpuav.validate.transform_feedback import xfb_member_offsets

NAME = "split-output-structs"

Path = tuple[int, ...]

# Member decorations that describe the value rather than the struct layout: they move to the
# leaf variable. Location, Component and Offset are recomputed; layout ones are dropped.
_CARRIED_MEMBER_DECORATIONS = frozenset(
    {
        Decoration.Flat,
        Decoration.NoPerspective,
        Decoration.Centroid,
        Decoration.Sample,
        Decoration.Invariant,
        Decoration.Patch,
        Decoration.RelaxedPrecision,
        Decoration.PerPrimitiveEXT,
        Decoration.XfbBuffer,
        Decoration.XfbStride,
        Decoration.Stream,
    }
)
_RECOMPUTED = frozenset({Decoration.Location, Decoration.Component, Decoration.Offset})
_DECORATE_OPS = (Op.Decorate, Op.DecorateId, Op.DecorateString)
_CHAIN_OPS = (Op.AccessChain, Op.InBoundsAccessChain)


@dataclass(frozen=True)
class Leaf:
    path: Path
    type_id: int
    name: str
    decorations: tuple[tuple[int, tuple[int, ...]], ...]


@dataclass
class SplitPlan:
    variable: int
    struct: int
    leaves: dict[Path, Leaf]
    new_ids: dict[Path, int] = field(default_factory=dict)


class _Planner:
    def __init__(self, module: Module, types: Types, decorations: Decorations) -> None:
        self.types = types
        self.decorations = decorations
        self.counter = LocationCounter(types, decorations)
        self.names = debug_names(module)
        self.member_names = member_names(module)

    def plan(self, variable: Instruction) -> SplitPlan | None:
        variable_id = variable.operands[1]
        if variable.operands[2] != StorageClass.Output:
            return None
        struct = self.types.pointee(variable.operands[0])
        if self.types.opcode(struct) != Op.TypeStruct:
            return None  # arrays of structs (per-vertex outputs included) are left alone
        members = self.types.member_types(struct)
        has = self.decorations.member_has
        if self.decorations.has(variable_id, Decoration.BuiltIn) or any(
            has(struct, member, Decoration.BuiltIn) for member in range(len(members))
        ):
            return None
        if self.counter.layout(struct).locations <= 1:
            return None
        location = self.decorations.location(variable_id)
        if location is None and not all(
            has(struct, member, Decoration.Location) for member in range(len(members))
        ):
            return None  # no location to split from: a broken module, left for validation
        if len(variable.operands) > 3:
            raise UnsupportedShader(f"output %{variable_id} has an initializer")
        value = self.decorations.value
        offset = value(variable_id, Decoration.Offset)
        inherited = tuple(
            (decoration, tuple(parameters))
            for decoration, parameters in self.decorations.of(variable_id)
            if decoration not in _RECOMPUTED
        )
        leaves: dict[Path, Leaf] = {}
        name = self.names.get(variable_id, f"_{variable_id}")
        self._walk(struct, (), location or 0, offset, inherited, name, leaves, top=True)
        return SplitPlan(variable_id, struct, leaves)

    def _walk(
        self,
        struct: int,
        path: Path,
        location: int,
        offset: int | None,
        inherited: tuple[tuple[int, tuple[int, ...]], ...],
        name: str,
        leaves: dict[Path, Leaf],
        top: bool,
    ) -> int:
        """Add the leaves under ``struct``; returns the location after it."""
        implicit = xfb_member_offsets(self.types, struct)
        for member, member_type in enumerate(self.types.member_types(struct)):
            value = self.decorations.member_value
            own_location = value(struct, member, Decoration.Location)
            if own_location is not None:
                location = own_location
            own_offset = value(struct, member, Decoration.Offset)
            if offset is not None:
                member_offset: int | None = offset + (
                    own_offset if own_offset is not None and not top else implicit[member]
                )
            else:
                member_offset = own_offset if top else None
            carried = _merge(
                inherited,
                [
                    (decoration, tuple(parameters))
                    for decoration, parameters in self.decorations.by_member.get(
                        (struct, member), []
                    )
                    if decoration in _CARRIED_MEMBER_DECORATIONS
                ],
            )
            member_name = f"{name}.{self.member_names.get((struct, member), str(member))}"
            member_path = (*path, member)
            if self.types.opcode(member_type) == Op.TypeStruct:
                location = self._walk(
                    member_type,
                    member_path,
                    location,
                    member_offset,
                    carried,
                    member_name,
                    leaves,
                    top=False,
                )
                continue
            placed = [(Decoration.Location, (location,))]
            component = value(struct, member, Decoration.Component)
            if component is not None:
                placed.append((Decoration.Component, (component,)))
            if member_offset is not None:
                placed.append((Decoration.Offset, (member_offset,)))
            leaves[member_path] = Leaf(member_path, member_type, member_name, (*carried, *placed))
            location = self.counter.layout(member_type, location, component or 0).end
        return location


def _merge(
    base: tuple[tuple[int, tuple[int, ...]], ...], overrides: list[tuple[int, tuple[int, ...]]]
) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """``base`` with each decoration in ``overrides`` replacing one of the same kind."""
    kinds = {decoration for decoration, _ in overrides}
    return (*(entry for entry in base if entry[0] not in kinds), *overrides)


def plan_splits(module: Module, types: Types, decorations: Decorations) -> list[SplitPlan]:
    planner = _Planner(module, types, decorations)
    plans = []
    for instruction in module.globals:
        if instruction.opcode == Op.Variable:
            plan = planner.plan(instruction)
            if plan is not None:
                plans.append(plan)
    return plans


def split_output_structs(module: Module) -> Module:
    """Split every eligible struct-typed output of ``module`` in place; returns it."""
    try:
        def_use = DefUse(module)
        types = Types(def_use.defs)
        plans = plan_splits(module, types, Decorations(module))
        if plans:
            _Rewriter(module, types, def_use, plans).run()
    except (KeyError, IndexError, ValueError, RecursionError) as error:
        # Dangling ids or malformed (cyclic) types: not a module this pass can reason about.
        raise UnsupportedShader(
            f"{NAME}: malformed module ({type(error).__name__}: {error})"
        ) from error
    return module


def split_output_structs_words(words: Sequence[int]) -> list[int]:
    return write(split_output_structs(read(words)))


class _Rewriter:
    def __init__(
        self, module: Module, types: Types, def_use: DefUse, plans: list[SplitPlan]
    ) -> None:
        self.module = module
        self.types = types
        self.def_use = def_use
        self.plans = plans
        self.builder = Builder(module)
        self.virtual: dict[int, tuple[SplitPlan, Path]] = {
            plan.variable: (plan, ()) for plan in plans
        }
        self.substitute: dict[int, int] = {}

    def run(self) -> None:
        """Rewrite every function first, then commit: a use the pass cannot handle raises
        before the module has changed (only its id bound grows)."""
        old = {plan.variable for plan in self.plans}
        self._check_global_uses(old)
        for plan in self.plans:
            for path in plan.leaves:
                plan.new_ids[path] = self.module.new_id()
        rewritten = [
            [self._rewrite_block(block.instructions) for block in function.blocks]
            for function in self.module.functions
        ]
        for function, blocks in zip(self.module.functions, rewritten, strict=True):
            for block, instructions in zip(function.blocks, blocks, strict=True):
                block.instructions = instructions
        for plan in self.plans:
            for path, leaf in plan.leaves.items():
                pointer = self.builder.type_pointer(StorageClass.Output, leaf.type_id)
                new = plan.new_ids[path]
                self.module.globals.append(
                    Instruction(Op.Variable, [pointer, new, StorageClass.Output])
                )
                self.builder.name(new, leaf.name)
                for decoration, parameters in leaf.decorations:
                    self.builder.decorate(new, decoration, *parameters)
        self._remap_ids()
        self._retire(old)

    def _check_global_uses(self, old: set[int]) -> None:
        handled = (Op.EntryPoint, Op.Name, *_DECORATE_OPS, Op.Variable)
        for variable in old:
            for user in self.def_use.uses(variable):
                if user.opcode not in handled and self.def_use.place(user) is None:
                    raise UnsupportedShader(
                        f"output %{variable} is named by {user.name} outside a function"
                    )

    def _rewrite_block(self, instructions: list[Instruction]) -> list[Instruction]:
        out: list[Instruction] = []
        for instruction in instructions:
            operands = instruction.operands
            if instruction.opcode in _CHAIN_OPS and operands[2] in self.virtual:
                self._chain(instruction, out)
            elif instruction.opcode == Op.Store and operands[0] in self.virtual:
                plan, path = self.virtual[operands[0]]
                self._store(plan, path, operands[1], out)
            elif instruction.opcode == Op.Load and operands[2] in self.virtual:
                plan, path = self.virtual[operands[2]]
                self._load(plan, path, out, result=operands[1])
            elif any(
                used in self.virtual for used in self.def_use.id_operands.used_ids(instruction)
            ):
                raise UnsupportedShader(
                    f"{instruction.name} uses a struct output pointer in a way the pass cannot "
                    "rewrite"
                )
            else:
                out.append(instruction)
        return out

    def _chain(self, instruction: Instruction, out: list[Instruction]) -> None:
        result_type, result, base, *indices = instruction.operands
        plan, path = self.virtual[base]
        taken = 0
        while path not in plan.leaves and taken < len(indices):
            member = self.types.constant_value(indices[taken])
            if member is None:
                raise UnsupportedShader(f"struct index %{indices[taken]} is not a constant")
            path = (*path, member)
            taken += 1
        if path not in plan.leaves:
            self.virtual[result] = (plan, path)
        elif taken < len(indices):
            leaf = plan.new_ids[path]
            out.append(
                Instruction(
                    instruction.opcode,
                    [result_type, result, leaf, *indices[taken:]],
                    instruction.origin,
                )
            )
        else:
            self.substitute[result] = plan.new_ids[path]

    def _store(self, plan: SplitPlan, path: Path, value: int, out: list[Instruction]) -> None:
        for leaf_path, leaf in plan.leaves.items():
            if leaf_path[: len(path)] != path:
                continue
            part = self.module.new_id()
            out.append(
                Instruction(
                    Op.CompositeExtract, [leaf.type_id, part, value, *leaf_path[len(path) :]]
                )
            )
            out.append(Instruction(Op.Store, [plan.new_ids[leaf_path], part]))

    def _load(
        self, plan: SplitPlan, path: Path, out: list[Instruction], result: int | None = None
    ) -> int:
        result = self.module.new_id() if result is None else result
        if path in plan.leaves:
            out.append(
                Instruction(Op.Load, [plan.leaves[path].type_id, result, plan.new_ids[path]])
            )
            return result
        struct = self._type_at(plan.struct, path)
        parts = [
            self._load(plan, (*path, member), out)
            for member in range(len(self.types.member_types(struct)))
        ]
        out.append(Instruction(Op.CompositeConstruct, [struct, result, *parts]))
        return result

    def _type_at(self, struct: int, path: Path) -> int:
        for member in path:
            struct = self.types.member_types(struct)[member]
        return struct

    def _remap_ids(self) -> None:
        if not self.substitute:
            return
        id_operands = IdOperands(self.module)
        for function in self.module.functions:
            for block in function.blocks:
                for instruction in block.instructions:
                    operands = instruction.operands
                    for at in id_operands.positions(instruction):
                        operands[at] = self.substitute.get(operands[at], operands[at])

    def _retire(self, old: set[int]) -> None:
        module = self.module
        by_variable = {plan.variable: plan for plan in self.plans}
        for entry in module.entry_points:
            _name, after = decode_string(entry.operands, 2)
            interface: list[int] = []
            for interface_id in entry.operands[after:]:
                plan = by_variable.get(interface_id)
                interface.extend(plan.new_ids.values() if plan else [interface_id])
            entry.operands[after:] = interface
        module.debug_names[:] = [
            i for i in module.debug_names if not (i.opcode == Op.Name and i.operands[0] in old)
        ]
        module.annotations[:] = [
            i
            for i in module.annotations
            if not (i.opcode in _DECORATE_OPS and i.operands[0] in old)
        ]
        module.globals[:] = [
            i for i in module.globals if not (i.opcode == Op.Variable and i.operands[1] in old)
        ]
