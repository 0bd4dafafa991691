"""Driving the passes that guard memory accesses (buffer and texel ranges, local arrays,
device addresses) over one module: first the entry functions whose checks the layer can
decide for each action, and then the loops whose checks a test before them can decide, get
their unchecked copies (``function_versions``, ``loop_versions``); then each pass guards its
accesses, in the order every guard pass takes them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import partial
from typing import Protocol, TypeVar

from gpuav.instrument.accesses import DescriptorAccess
from gpuav.instrument.binding_tables import BindingTables
from gpuav.instrument.buffer_ranges import RangeGuarder
from gpuav.instrument.buffer_spans import BufferFindings, SpanFinder
from gpuav.instrument.descriptor_loop_proofs import DescriptorLoopProofs
from gpuav.instrument.device_addresses import UNCHECKABLE, AddressFindings, AddressGuarder
from gpuav.instrument.function_versions import version_entry_functions
from gpuav.instrument.helpers import Helpers
from gpuav.instrument.host_terms import Term
from gpuav.instrument.local_arrays import LocalAccess, LocalFindings
from gpuav.instrument.local_guards import LocalGuarder, local_loop_proof
from gpuav.instrument.loop_bounds import LayerBounds, LoopBounds
from gpuav.instrument.loop_versions import Proof, Prover, version_loops
from gpuav.instrument.pass_findings import PassFindings
from gpuav.instrument.texel_buffers import TexelFindings, guard_texel_access
from gpuav.instrument.unsupported import DescriptorBoundsUnsupported
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Block, Function


def range_guarder(
    builder: Builder, def_use: DefUse, types: Types, helpers: Helpers, tables: BindingTables
) -> RangeGuarder | None:
    if helpers.buffer_range is None or helpers.check_buffer_range is None:
        return None
    return RangeGuarder(
        builder,
        def_use,
        types,
        helpers.buffer_range,
        helpers.check_buffer_range,
        tables,
        helpers.range_in_table,
        helpers.binding_fits,
    )


def descriptor_loop_proofs(
    builder: Builder, def_use: DefUse, types: Types, helpers: Helpers, tables: BindingTables
) -> DescriptorLoopProofs | None:
    if helpers.binding_fits is None or helpers.check_in_table is None:
        return None
    return DescriptorLoopProofs(
        builder, def_use, types, tables, helpers.binding_fits, helpers.check_in_table
    )


def address_guarder(
    builder: Builder,
    def_use: DefUse,
    types: Types,
    decorations: Decorations,
    helpers: Helpers,
    shader_int64: bool,
) -> AddressGuarder | None:
    if helpers.check_address is None or helpers.buffer_range is None:
        return None
    ranges = RangeGuarder(builder, def_use, types, helpers.buffer_range, 0)
    return AddressGuarder(
        ranges,
        helpers.check_address,
        shader_int64,
        helpers.address_inside,
        SpanFinder(types, decorations),
    )


def copy_provable_code(
    builder: Builder,
    def_use: DefUse,
    types: Types,
    ranges: tuple[RangeGuarder | None, BufferFindings],
    addresses: tuple[AddressGuarder | None, AddressFindings],
    descriptors: tuple[DescriptorLoopProofs | None, list[DescriptorAccess]],
    locals_: list[LocalAccess],
    unprovable: set[int],
    unroll: bool,
    every_finding: list[object],
    layer: LayerBounds | None,
    entry_functions: tuple[list[tuple[Function, Instruction]], int | None],
) -> tuple[dict[int, tuple[int, tuple[Term, ...]]], int]:
    """Before any guard: give each function whose checks the layer can decide for an action
    (``function_versions``), then each loop (of the other functions) whose buffer-range,
    device-address, descriptor and local-array checks a test before it can decide, an
    unchecked copy (``loop_versions``). ``unprovable``: the ``id()`` of the consumers other
    passes check; ``unroll``: ask the driver to unroll copies of short loops; ``layer``: the
    values the layer knows (array lengths, push constants); ``entry_functions``: the entry
    functions with their entry points, and the helper that reads the verdict word (None: no
    function is copied). Returns the entry functions with copies in their reach (id -> stage
    bit and terms) and the number of loops copied."""
    guarded: list[tuple[Instruction, Prover]] = []
    descriptor_proofs, descriptor_accesses = descriptors
    if descriptor_proofs is not None:
        guarded += _proven(descriptor_accesses, descriptor_proofs.loop_proof)
    else:
        unprovable.update(id(access.consumer) for access in descriptor_accesses)
    # A range proven for every descriptor of a binding holds only where the descriptor
    # check keeps the index below the binding's length.
    index_checked = {id(access.consumer) for access in descriptor_accesses}
    range_guarder, buffer_findings = ranges
    if range_guarder is not None:
        guarded += _proven(buffer_findings.accesses, range_guarder.loop_proof)
        unprovable.update(
            id(access.consumer)
            for access in buffer_findings.accesses
            if id(access.consumer) not in index_checked
            and any(
                len(span.descriptor_indices) == 1
                and range_guarder.constant_flat(span.descriptor_indices, span.descriptor_lengths)
                is None
                for span in access.spans
            )
        )
    guarded += _proven(locals_, partial(local_loop_proof, builder))
    address_guarder, address_findings = addresses
    if address_guarder is not None:
        guarded += _proven(address_findings.accesses, address_guarder.loop_proof)
    else:
        unprovable.update(id(access.consumer) for access in address_findings.accesses)
    named = [named_ids(finding) for finding in every_finding]
    named_ids_ = [n for n in named if n]
    functions, action_verdict = entry_functions
    copied: dict[int, tuple[int, tuple[Term, ...]]] = {}
    functions_copied: frozenset[int] = frozenset()
    if action_verdict is not None:
        copied, functions_copied = version_entry_functions(
            builder,
            def_use,
            types,
            guarded,
            unprovable,
            named_ids_,
            functions,
            action_verdict,
            layer,
        )
    loops = version_loops(
        builder,
        def_use,
        types,
        guarded,
        unprovable,
        named_ids_,
        unroll,
        layer,
        functions_copied,
    )
    return copied, loops


def _proven(
    accesses: Sequence[_Access], loop_proof: Callable[[_Access, LoopBounds, Block], Proof | None]
) -> list[tuple[Instruction, Prover]]:
    """Each access's consumer, with its pass's proof bound to it."""
    return [(access.consumer, partial(loop_proof, access)) for access in accesses]


def named_ids(finding: object) -> tuple[Instruction, frozenset[int]] | None:
    """A finding's consumer and every integer its fields hold (its ids, and some numbers
    that are not ids, which only make a loop copy less likely)."""
    consumer = getattr(finding, "consumer", None) or getattr(finding, "instruction", None)
    if not isinstance(consumer, Instruction):
        return None
    found: set[int] = set()
    stack: list[object] = [finding]
    while stack:
        item = stack.pop()
        if isinstance(item, (bool, Instruction)):
            continue
        if isinstance(item, int):
            found.add(item)
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
        elif dataclasses.is_dataclass(item):
            stack.extend(getattr(item, f.name) for f in dataclasses.fields(item))
    return consumer, frozenset(found)


def guard_buffer_ranges(
    guarder: RangeGuarder | None,
    def_use: DefUse,
    helpers: Helpers,
    findings: BufferFindings,
    texels: TexelFindings,
) -> bool:
    """Guard the buffer and texel accesses; whether a range was read from a binding's
    table for them."""
    if guarder is None:
        return False
    _guard_each(findings, guarder.guard, def_use)
    if helpers.check_texel is not None:
        # Each guard finds its consumer's place afresh, so the order does not matter here.
        texels.accesses = [
            texel
            for texel in texels.accesses
            if guard_texel_access(guarder, helpers.check_texel, texel)
        ]
    return guarder.called_range_in_table


def guard_local_arrays(
    builder: Builder, def_use: DefUse, types: Types, helpers: Helpers, findings: LocalFindings
) -> None:
    if helpers.report_local_index is None:
        return
    guarder = LocalGuarder(builder, def_use, types, helpers.report_local_index)
    _guard_each(findings, guarder.guard, def_use)


def guard_addresses(
    guarder: AddressGuarder | None, def_use: DefUse, findings: AddressFindings
) -> None:
    if guarder is None:
        findings.accesses = []
        return
    _guard_each(
        findings, guarder.guard, def_use, lambda: NO_NULL if guarder.readable else UNCHECKABLE
    )


class _Consumed(Protocol):
    @property
    def consumer(self) -> Instruction: ...


_Access = TypeVar("_Access", bound=_Consumed)


def last_first(accesses: list[_Access], def_use: DefUse) -> list[_Access]:
    """Later consumers of a block first, so that splitting a block never moves an earlier one."""
    order: dict[int, tuple[int, int, int]] = {}
    blocks: dict[int, tuple[int, int]] = {}
    for function_index, function in enumerate(def_use.module.functions):
        for block_index, block in enumerate(function.blocks):
            blocks[id(block)] = (function_index, block_index)
    for access in accesses:
        place = def_use.place(access.consumer)
        if place is None:
            raise DescriptorBoundsUnsupported("a descriptor access outside any block")
        block = place[1]
        position = next(k for k, i in enumerate(block.instructions) if i is access.consumer)
        order[id(access)] = (*blocks[id(block)], position)
    return sorted(accesses, key=lambda access: order[id(access)], reverse=True)


NO_NULL = "a result with no null value"


def _guard_each(
    findings: PassFindings[_Access],
    guard: Callable[[_Access], bool],
    def_use: DefUse,
    why_not: Callable[[], str] = lambda: NO_NULL,
) -> None:
    """Guard the accesses, last first; those ``guard`` declines (False) stay unchecked, with
    ``why_not()`` asked right after."""
    guarded = []
    for access in last_first(findings.accesses, def_use):
        if guard(access):
            guarded.append(access)
        else:
            findings.unchecked.append((access.consumer.origin, why_not()))
    findings.accesses = guarded
