"""The find phase of the descriptor-bounds pass: which accesses need a check, and why.

Walks forward from every descriptor variable (arrays of images, samplers, texel buffers,
acceleration structures and uniform/storage blocks) through the instructions that only *name*
a descriptor (access chains, OpLoad of an image, OpSampledImage, OpImage, OpCopyObject,
OpImageTexelPointer) to the instruction that *uses* it (an image instruction, a load, store,
atomic, copy or OpArrayLength; a ray trace or a ray query's start for an acceleration
structure). Each such use becomes a ``DescriptorAccess``: the consumer, the naming
instructions (``links``) the rewrite clones into the guarded branch, and the descriptor
lookups whose index it checks. Nothing here changes the module.

The index of an array of arrays may be spread over several access chains (and the variable
copied first, as DXC does), or the whole array passed to a function that indexes its
parameter: the chains are followed to the full index. A descriptor chosen by OpPhi or
OpSelect gets a ``MergedLookup`` once every incoming value is a known lookup (the rewrite
carries index and length through the merge, ``gpuav.instrument.merges``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from gpuav.instrument.accesses import (
    DescriptorAccess,
    DescriptorLookup,
    Findings,
    Lookup,
    MergedLookup,
    UncheckedUse,
)
from gpuav.instrument.consumers import (
    IMAGE_NAME_PREFIXES,
    NULLABLE_RESULTS,
    POINTER_OPERANDS,
    SEED_IMAGE_INSTRUCTIONS,
    STRUCTURE_CONSUMERS,
)
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import OPCODE_NAMES, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module

_ACCESS_CHAINS = (Op.AccessChain, Op.InBoundsAccessChain)
DESCRIPTOR_CLASSES = (
    StorageClass.UniformConstant,
    StorageClass.Uniform,
    StorageClass.StorageBuffer,
)
_IMAGE_TYPES = (Op.TypeImage, Op.TypeSampledImage, Op.TypeSampler)

_MERGES = (Op.Phi, Op.Select)


class _Finder:
    def __init__(self, module: Module, def_use: DefUse, types: Types, decorations: Decorations):
        self.module = module
        self.def_use = def_use
        self.types = types
        self.decorations = decorations
        # id(consumer) -> (consumer, instruction index, links by id, lookups, kind)
        self.found: dict[
            int, tuple[Instruction, int | None, dict[int, Instruction], list[Lookup], str]
        ] = {}
        self.unchecked: list[UncheckedUse] = []
        # merge result id -> (merge, what it merges, lookups of the incoming values reached)
        self.merges: dict[int, tuple[Instruction, str, dict[int, Lookup]]] = {}
        self.with_state = False  # descriptor state: every descriptor use is checked

    def run(self, include_runtime: bool) -> Findings:
        self.with_state = include_runtime
        for variable in self.module.globals:
            if variable.opcode == Op.Variable and variable.operands[2] in DESCRIPTOR_CLASSES:
                self._variable(variable, include_runtime)
        self._resolve_merges()
        findings = Findings(unchecked=self.unchecked)
        for consumer, index, links, lookups, kind in self.found.values():
            if not any(self._needs_check(lookup, include_runtime) for lookup in lookups):
                continue
            ordered = _dependency_order(links, self.def_use)
            findings.accesses.append(
                DescriptorAccess(consumer, index, tuple(ordered), tuple(lookups), kind)
            )
        return findings

    def _needs_check(self, lookup: Lookup, include_runtime: bool) -> bool:
        if isinstance(lookup, MergedLookup):
            return include_runtime or not lookup.runtime_sized
        if include_runtime and lookup.descriptor_set is not None and lookup.binding is not None:
            return True  # with descriptor state, every use checks that it was written (08114)
        if lookup.runtime_sized:
            return include_runtime
        if lookup.static_index is None:
            return True
        if lookup.static_length is None:
            return lookup.static_index != 0
        return lookup.statically_out_of_bounds

    def _variable(self, variable: Instruction, include_runtime: bool) -> None:
        types = self.types
        pointee = types.pointee(variable.operands[0])
        inner, arrays = types.strip_arrays(pointee)
        inner_op = types.opcode(inner)
        if inner_op in _IMAGE_TYPES:
            kind = "image"
        elif inner_op == Op.TypeAccelerationStructureKHR:
            kind = "acceleration structure"  # named and loaded as an image is
        elif inner_op == Op.TypeStruct and (
            self.decorations.is_block(inner) or self.decorations.is_buffer_block(inner)
        ):
            kind = "buffer"
        else:
            return
        var_id = variable.operands[1]
        if not arrays:
            whole = DescriptorLookup(
                var_id,
                (),
                (),
                static_index=0,
                static_length=1,
                descriptor_set=self.decorations.descriptor_set(var_id),
                binding=self.decorations.binding(var_id),
            )
            if kind == "buffer":  # only an OpPtrAccessChain can move a single block's index
                self._walk_pointer(var_id, whole, {})
            elif include_runtime:  # with descriptor state: was it written?
                self._walk_image_pointer(variable, whole, {}, kind)
            return
        lengths = tuple(
            None if types.is_runtime_array(array) else types.definition(array).operands[2]
            for array in arrays
        )
        for chain, indices, links in self._index_chains(var_id, len(arrays), (), {}):
            if any(length is None for length in lengths) and not include_runtime:
                self._unchecked(chain, "runtime-sized descriptor array (needs descriptor state)")
            lookup = self._lookup(var_id, indices, lengths)
            if kind != "buffer":
                self._walk_image_pointer(chain, lookup, links, kind)
            else:
                self._walk_pointer(chain.operands[1], lookup, links)

    def _index_chains(
        self,
        pointer: int,
        needed: int,
        indices: tuple[int, ...],
        links: dict[int, Instruction],
    ) -> Iterator[tuple[Instruction, tuple[int, ...], dict[int, Instruction]]]:
        """The access chains that index every array dimension of a descriptor variable.

        Compilers split them: an access chain of the outer index, then one of the inner
        (arrays of arrays), or an OpCopyObject of the variable first (DXC); the indices of
        every step are concatenated, and each step becomes a link.
        """
        for user in self.def_use.uses(pointer):
            if user.opcode == Op.FunctionCall and pointer in user.operands[3:]:
                parameter = self._parameter_for(user, pointer, indices, links)
                if parameter is not None:
                    yield from self._index_chains(parameter, needed, indices, links)
                continue
            if len(user.operands) < 3 or user.operands[2] != pointer:
                continue
            if user.opcode == Op.CopyObject:
                yield from self._index_chains(
                    user.operands[1], needed, indices, {**links, user.operands[1]: user}
                )
            elif user.opcode in _ACCESS_CHAINS:
                found = indices + tuple(user.operands[3:])
                chain_links = {**links, user.operands[1]: user}
                if len(found) >= needed:
                    yield user, found[:needed], chain_links
                else:
                    yield from self._index_chains(user.operands[1], needed, found, chain_links)
            elif indices or links:
                self._unchecked(user, f"partly indexed descriptor array used by {user.name}")

    def _parameter_for(
        self,
        call: Instruction,
        pointer: int,
        indices: tuple[int, ...],
        links: dict[int, Instruction],
    ) -> int | None:
        """The callee's parameter that receives a whole descriptor array (GLSL allows
        ``f(sampler2D s[4])``): its accesses are checked in the callee, as accesses of this
        variable, when every call passes this same variable there."""
        if indices or links:
            self._unchecked(call, "part of a descriptor array passed to a function")
            return None
        callee = next((f for f in self.module.functions if f.id == call.operands[2]), None)
        if callee is None:
            return None
        positions = [k for k, argument in enumerate(call.operands[3:]) if argument == pointer]
        for k in positions:
            if k >= len(callee.parameters):
                return None
            for other in self._calls_of(callee.id):
                if other.operands[3 + k] != pointer:
                    self._unchecked(call, "function called with different descriptor arrays")
                    return None
        if len(positions) != 1:
            self._unchecked(call, "descriptor array passed twice to one function")
            return None
        return callee.parameters[positions[0]].operands[1]

    def _calls_of(self, function: int) -> Iterator[Instruction]:
        for caller in self.module.functions:
            for block in caller.blocks:
                for instruction in block.instructions:
                    operands = instruction.operands
                    if instruction.opcode == Op.FunctionCall and operands[2] == function:
                        yield instruction

    def _lookup(
        self, variable: int, indices: tuple[int, ...], lengths: tuple[int | None, ...]
    ) -> DescriptorLookup:
        values = [self.types.constant_value(index) for index in indices]
        sizes = [
            None if length is None else self.types.constant_value(length) for length in lengths
        ]
        static_index: int | None = None
        static_length: int | None = None
        if all(size is not None for size in sizes):
            static_length = 1
            for size in sizes:
                static_length *= size or 0
        if all(value is not None for value in values) and static_length is not None:
            in_each = all(0 <= (v or 0) < (s or 0) for v, s in zip(values, sizes, strict=True))
            flat = 0
            for value, size in zip(values, sizes, strict=True):
                flat = flat * (size or 0) + (value or 0)
            # A per-dimension overflow is out of bounds even when the flat index is not.
            static_index = flat if in_each else max(flat, static_length)
        elif len(values) == 1 and values[0] is not None:
            static_index = values[0]
        return DescriptorLookup(
            variable,
            indices,
            lengths,
            None,
            static_index,
            static_length,
            self.decorations.descriptor_set(variable),
            self.decorations.binding(variable),
        )

    def _walk_image_pointer(
        self, chain: Instruction, lookup: Lookup, links: dict[int, Instruction], kind: str = "image"
    ) -> None:
        pointer = chain.operands[1]
        for user in self.def_use.uses(pointer):
            if user.opcode in _MERGES:
                self._merge(user, pointer, lookup, f"{kind} pointer")
            elif user.opcode == Op.Load and user.operands[2] == pointer:
                loaded = user.operands[1]
                self._walk_image_value(loaded, lookup, {**links, loaded: user}, kind)
            elif user.opcode == Op.ImageTexelPointer and user.operands[2] == pointer:
                texel = user.operands[1]
                texel_links = {**links, texel: user}
                for atomic in self.def_use.uses(texel):
                    if atomic.opcode in POINTER_OPERANDS:
                        self._add(atomic, user.origin, texel_links, lookup, "image")
                    else:
                        self._unchecked(atomic, f"texel pointer used by {atomic.name}")
            elif user.opcode == Op.CopyObject:
                self._walk_image_pointer(user, lookup, {**links, user.operands[1]: user}, kind)
            elif not self._call(user, lookup, links, kind):
                self._unchecked(user, f"{kind} descriptor pointer used by {user.name}")

    def _walk_image_value(
        self, value: int, lookup: Lookup, links: dict[int, Instruction], kind: str = "image"
    ) -> None:
        for user in self.def_use.uses(value):
            opcode = user.opcode
            if opcode in _MERGES:
                self._merge(user, value, lookup, kind)
            elif opcode in (Op.SampledImage, Op.Image, Op.CopyObject):
                renamed = user.operands[1]
                self._walk_image_value(renamed, lookup, {**links, renamed: user}, kind)
            elif opcode in STRUCTURE_CONSUMERS:
                self._add(user, user.origin, links, lookup, kind)
            elif opcode in SEED_IMAGE_INSTRUCTIONS or (
                OPCODE_NAMES.get(opcode, "").startswith(IMAGE_NAME_PREFIXES)
                and user.result_id != value
            ):
                self._add(user, user.origin, links, lookup, "image")
            elif not self._call(user, lookup, links, kind):
                self._unchecked(user, f"{kind} descriptor used by {user.name}")

    def _walk_pointer(
        self,
        pointer: int,
        lookup: Lookup,
        links: dict[int, Instruction],
    ) -> None:
        """Follow a pointer into a uniform/storage block to the memory accesses through it."""
        merged = isinstance(lookup, MergedLookup)
        for user in self.def_use.uses(pointer):
            opcode = user.opcode
            if opcode in _MERGES and (links or merged):
                self._merge(user, pointer, lookup, "buffer pointer")
            elif opcode in (*_ACCESS_CHAINS, Op.CopyObject) and user.operands[2] == pointer:
                self._walk_pointer(user.operands[1], lookup, {**links, user.operands[1]: user})
            elif opcode == Op.PtrAccessChain and user.operands[2] == pointer:
                moved = lookup
                if self._points_to_block(pointer):
                    moved = self._with_element(lookup, user.operands[3])
                self._walk_pointer(user.operands[1], moved, {**links, user.operands[1]: user})
            elif opcode in POINTER_OPERANDS and any(
                user.operands[at] == pointer for at in POINTER_OPERANDS[opcode]
            ):
                # A direct use of a non-arrayed variable needs a check only for being written.
                if links or merged or self.with_state:
                    self._add(user, user.origin, links, lookup, "buffer")
            elif (links or merged) and not self._call(user, lookup, links, "buffer"):
                self._unchecked(user, f"buffer descriptor pointer used by {user.name}")

    def _call(
        self, user: Instruction, lookup: Lookup, links: dict[int, Instruction], kind: str
    ) -> bool:
        """A descriptor passed to a function: the call is guarded as a whole (glslang passes
        ``sampler2D`` arguments as pointers). Its result must have a null value."""
        if user.opcode != Op.FunctionCall:
            return False
        if self.types.opcode(user.operands[0]) not in NULLABLE_RESULTS:
            return False
        self._add(user, user.origin, links, lookup, kind)
        return True

    def _points_to_block(self, pointer: int) -> bool:
        pointer_type = self.types.type_of(pointer)
        if pointer_type is None or not self.types.is_pointer(pointer_type):
            return False
        pointee = self.types.pointee(pointer_type)
        return self.types.opcode(pointee) == Op.TypeStruct and (
            self.decorations.is_block(pointee) or self.decorations.is_buffer_block(pointee)
        )

    def _with_element(self, lookup: Lookup, element: int) -> Lookup:
        """Seed 003: OpPtrAccessChain on a block pointer selects block ``index + element``."""
        if isinstance(lookup, MergedLookup):
            return lookup if lookup.element is not None else replace(lookup, element=element)
        if lookup.element is not None:
            return replace(lookup, static_index=None)  # a second move: checked at run time
        value = self.types.constant_value(element)
        static_index = None
        if value is not None and lookup.static_index is not None:
            static_index = lookup.static_index + value
        return replace(lookup, element=element, static_index=static_index)

    def _add(
        self,
        consumer: Instruction,
        index: int | None,
        links: dict[int, Instruction],
        lookup: Lookup,
        kind: str,
    ) -> None:
        type_id = consumer.type_id
        if (
            consumer.result_id is not None
            and type_id is not None
            and self.types.opcode(type_id) not in NULLABLE_RESULTS  # e.g. a loaded pointer
        ):
            self._unchecked(consumer, "a result with no null value")
            return
        entry = self.found.get(id(consumer))
        if entry is None:
            self.found[id(consumer)] = (consumer, index, dict(links), [lookup], kind)
            return
        entry[2].update(links)
        if lookup not in entry[3]:
            entry[3].append(lookup)

    def _merge(self, merge: Instruction, value: int, lookup: Lookup, what: str) -> None:
        """Note that ``value`` (from ``lookup``) flows into an OpPhi or OpSelect."""
        if merge.opcode == Op.Select and merge.operands[2] == value:
            self._unchecked(merge, f"{what} descriptor used as an OpSelect condition")
            return
        entry = self.merges.setdefault(merge.operands[1], (merge, what, {}))
        entry[2][value] = lookup

    def _resolve_merges(self) -> None:
        """Walk on from every merge whose incoming values all come from known lookups (a
        merge of merges resolves once its inner merges have)."""
        resolved: set[int] = set()
        progress = True
        while progress:
            progress = False
            for result, (merge, what, incoming) in list(self.merges.items()):
                values = _merged_values(merge)
                if result in resolved or not all(value in incoming for value in values):
                    continue
                resolved.add(result)
                progress = True
                lookup = MergedLookup(merge, tuple((value, incoming[value]) for value in values))
                if what in ("image", "acceleration structure"):
                    self._walk_image_value(result, lookup, {}, what)
                elif what in ("image pointer", "acceleration structure pointer"):
                    self._walk_image_pointer(merge, lookup, {}, what.removesuffix(" pointer"))
                else:
                    self._walk_pointer(result, lookup, {})
        for result, (merge, what, _) in self.merges.items():
            if result not in resolved:
                self._unchecked(merge, f"{what} descriptor merged with a value of unknown origin")

    def _unchecked(self, user: Instruction, reason: str) -> None:
        self.unchecked.append(UncheckedUse(user.origin, reason))


def _merged_values(merge: Instruction) -> list[int]:
    """The incoming value ids of an OpPhi or OpSelect, in operand order."""
    if merge.opcode == Op.Phi:
        return merge.operands[2::2]
    return merge.operands[3:5]


def _dependency_order(links: dict[int, Instruction], def_use: DefUse) -> list[Instruction]:
    """The links with every link after the links it uses (for cloning in order).

    A depth-first walk with its own stack: a recursive closure would refer to itself and keep
    the module's analyses alive until a full garbage collection."""
    ordered: list[Instruction] = []
    seen: set[int] = set()
    for root in links:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(def_use.id_operands.used_ids(links[root])))]
        while stack:
            result, uses = stack[-1]
            for used in uses:
                if used in links and used not in seen:
                    seen.add(used)
                    stack.append((used, iter(def_use.id_operands.used_ids(links[used]))))
                    break
            else:
                stack.pop()
                ordered.append(links[result])
    return ordered


def find_accesses(
    module: Module,
    def_use: DefUse,
    types: Types,
    decorations: Decorations,
    *,
    include_runtime: bool = False,
) -> Findings:
    """Every descriptor access that needs a bounds check (runtime arrays only on request)."""
    return _Finder(module, def_use, types, decorations).run(include_runtime)
