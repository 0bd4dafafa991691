"""Driving the passes that guard memory accesses (buffer and texel ranges, local arrays,
device addresses) over one module, and the order every guard pass takes its accesses in."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypeVar

from gpuav.instrument.binding_tables import BindingTables
from gpuav.instrument.buffer_ranges import RangeGuarder
from gpuav.instrument.buffer_spans import BufferFindings
from gpuav.instrument.device_addresses import UNCHECKABLE, AddressFindings, AddressGuarder
from gpuav.instrument.helpers import Helpers
from gpuav.instrument.local_arrays import LocalFindings
from gpuav.instrument.local_guards import LocalGuarder
from gpuav.instrument.loop_versions import version_loops
from gpuav.instrument.pass_findings import PassFindings
from gpuav.instrument.texel_buffers import TexelFindings, guard_texel_access
from gpuav.instrument.unsupported import DescriptorBoundsUnsupported
from gpuav.spirv.analysis.def_use import DefUse
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.instruction import Instruction


def guard_buffer_ranges(
    builder: Builder,
    def_use: DefUse,
    types: Types,
    helpers: Helpers,
    tables: BindingTables,
    findings: BufferFindings,
    texels: TexelFindings,
    unprovable: set[int],
) -> tuple[bool, int]:
    """Guard the buffer and texel accesses, first giving the loops whose checks a test
    before them can decide an unchecked copy (``unprovable``: the ``id()`` of the consumers
    other passes check). Returns whether a range was read from a binding's table for them,
    and how many loops got a copy."""
    if helpers.buffer_range is None or helpers.check_buffer_range is None:
        return False, 0
    guarder = RangeGuarder(
        builder,
        def_use,
        types,
        helpers.buffer_range,
        helpers.check_buffer_range,
        tables,
        helpers.range_in_table,
    )
    guarder.know(findings.accesses)
    consumers = [access.consumer for access in findings.accesses]
    copied = version_loops(builder, def_use, types, consumers, guarder.loop_proof, unprovable)
    _guard_each(findings, guarder.guard, def_use)
    if helpers.check_texel is not None:
        # Each guard finds its consumer's place afresh, so the order does not matter here.
        texels.accesses = [
            texel
            for texel in texels.accesses
            if guard_texel_access(guarder, helpers.check_texel, texel)
        ]
    return guarder.called_range_in_table, copied


def guard_local_arrays(
    builder: Builder, def_use: DefUse, types: Types, helpers: Helpers, findings: LocalFindings
) -> None:
    if helpers.report_local_index is None:
        return
    guarder = LocalGuarder(builder, def_use, types, helpers.report_local_index)
    _guard_each(findings, guarder.guard, def_use)


def guard_addresses(
    builder: Builder,
    def_use: DefUse,
    types: Types,
    helpers: Helpers,
    findings: AddressFindings,
    shader_int64: bool,
) -> None:
    if helpers.check_address is None or helpers.buffer_range is None:
        findings.accesses = []
        return
    ranges = RangeGuarder(builder, def_use, types, helpers.buffer_range, 0)
    guarder = AddressGuarder(ranges, helpers.check_address, shader_int64)
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
