"""The one entry point the layer calls to instrument a shader, and the pass driver behind it.

``instrument_shader`` takes the app's SPIR-V words and returns instrumented words whose checks
write error records (``gpuav.instrument.record``) into the storage buffer
``{uint DataWrittenLength; uint Data[];}`` at (``descriptor_set``, binding 0), tagging each
record with ``shader_id``. A shader with nothing to check comes back unchanged. It raises a
``GpuavError`` subclass when the shader cannot be instrumented; the layer then keeps the
original shader.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuav.instrument.accesses import DescriptorAccess, DescriptorLookup, Findings, Lookup
from gpuav.instrument.action_values import ActionValues
from gpuav.instrument.binding_tables import BindingTables
from gpuav.instrument.buffer_spans import BufferFindings, find_buffer_accesses
from gpuav.instrument.descriptor_bounds import Guarder
from gpuav.instrument.descriptor_state import ContextAddressSource
from gpuav.instrument.device_addresses import (
    AddressFindings,
    find_address_accesses,
)
from gpuav.instrument.find_accesses import DESCRIPTOR_CLASSES, find_accesses
from gpuav.instrument.helpers import Helpers, build_helpers
from gpuav.instrument.host_terms import EntryVerdicts
from gpuav.instrument.local_arrays import LocalFindings, find_local_accesses, may_index_locals
from gpuav.instrument.memory_guards import (
    address_guarder,
    copy_provable_code,
    descriptor_loop_proofs,
    guard_addresses,
    guard_buffer_ranges,
    guard_local_arrays,
    last_first,
    range_guarder,
)
from gpuav.instrument.merges import MergedOperands
from gpuav.instrument.printf import PrintfSite, instrument_printf
from gpuav.instrument.resources import list_in_interfaces
from gpuav.instrument.shader_id_slot import SlottedWords, placeholder_for, slotted
from gpuav.instrument.shader_index import ShaderIndex
from gpuav.instrument.stage_words import StageWords, check_supported
from gpuav.instrument.texel_buffers import TexelFindings, find_texel_accesses
from gpuav.instrument.unsupported import DescriptorBoundsUnsupported
from gpuav.instrument.unused_links import remove_unused_links
from gpuav.spirv import read, write
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import AddressingModel, Capability, Op
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.module import Function, Module

PASS_NAME = "descriptor-bounds"
_PHYSICAL = (AddressingModel.Physical32, AddressingModel.Physical64)
_VARIABLE_POINTERS = (Capability.VariablePointers, Capability.VariablePointersStorageBuffer)
_ARRAYS = (Op.TypeArray, Op.TypeRuntimeArray)
_TYPES_OF_INTEREST = (Op.TypePointer, *_ARRAYS, Op.TypeStruct)

_DECLINED_CAPABILITIES = {
    Capability.Kernel: "Kernel (OpenCL) modules",
    Capability.Addresses: "physical addressing (Addresses capability)",
    Capability.Linkage: "modules for linking (Linkage capability)",
}


@dataclass
class InstrumentResult:
    """What the pass did: the module (changed in place) and the accesses it guarded."""

    module: Module
    findings: Findings = field(default_factory=Findings)
    buffer_findings: BufferFindings = field(default_factory=BufferFindings)
    texel_findings: TexelFindings = field(default_factory=TexelFindings)
    local_findings: LocalFindings = field(default_factory=LocalFindings)
    address_findings: AddressFindings = field(default_factory=AddressFindings)
    helpers: Helpers | None = None  # when the checks put helpers in the module
    printf_sites: list[PrintfSite] = field(default_factory=list)
    # loops given an unchecked copy, run where a test before them proves every access fits
    loops_copied: int = 0
    # entry functions given one, run where the layer found for an action that every check
    # passes: (entry point name, stage bit, the terms the layer works out for that bit)
    entry_verdicts: EntryVerdicts = ()

    @property
    def changed(self) -> bool:
        return bool(
            self.findings.accesses
            or self.buffer_findings.accesses
            or self.texel_findings.accesses
            or self.local_findings.accesses
            or self.address_findings.accesses
            or self.printf_sites
        )

    @property
    def static_findings(self) -> list[DescriptorAccess]:
        return [a for a in self.findings.accesses if a.statically_out_of_bounds]


def instrument_module(
    module: Module,
    *,
    shader_id: int,
    descriptor_set: int,
    descriptor_state: bool = False,
    context_address: ContextAddressSource | None = None,
    printf: bool = False,
    checks: bool = True,
    shader_int64: bool = False,
    unroll_loop_copies: bool = True,
) -> InstrumentResult:
    """Run the descriptor-bounds pass on ``module`` in place.

    ``descriptor_state``: also check runtime arrays against, and every checked descriptor for
    being written in, the state the layer keeps (issue 8). ``context_address``: reach our
    buffers through device addresses instead of a descriptor set. ``printf``: replace
    debugPrintfEXT with printf records (``gpuav.instrument.printf``); ``checks``: False leaves
    out every check (printf only). ``shader_int64``: the device has shaderInt64 on, so the
    device-address checks may read pointers as 64-bit integers before SPIR-V 1.5.
    ``unroll_loop_copies``: ask the driver to unroll a loop's unchecked copy where it runs a
    few times (``loop_versions``); a GPU's compiler needs the hint, llvmpipe runs slower with it.
    """
    try:
        result = InstrumentResult(module)
        if checks:
            result = _instrument(
                module,
                shader_id=shader_id,
                descriptor_set=descriptor_set,
                descriptor_state=descriptor_state,
                context_address=context_address,
                shader_int64=shader_int64 or context_address is not None,
                unroll_loop_copies=unroll_loop_copies,
            )
        if printf:
            result.printf_sites = instrument_printf(
                module,
                shader_id=shader_id,
                descriptor_set=descriptor_set,
                context_address=context_address,
                helpers=result.helpers,
            )
        return result
    except (
        LookupError,
        ValueError,
        TypeError,
        AttributeError,
        RuntimeError,
        StopIteration,
    ) as error:
        # The reader checks words, not meaning: a module whose ids or types do not fit together
        # is declined (the layer keeps the original), never a crash.
        raise DescriptorBoundsUnsupported(f"malformed module: {error!r}") from error


def _instrument(
    module: Module,
    *,
    shader_id: int,
    descriptor_set: int,
    descriptor_state: bool,
    context_address: ContextAddressSource | None,
    shader_int64: bool = False,
    unroll_loop_copies: bool = True,
) -> InstrumentResult:
    for capability in module.capabilities:
        reason = _DECLINED_CAPABILITIES.get(capability.operands[0])
        if reason is not None:
            raise DescriptorBoundsUnsupported(f"{PASS_NAME} does not instrument {reason}")
    if any(m.operands[0] in _PHYSICAL for m in module.memory_model):
        raise DescriptorBoundsUnsupported(f"{PASS_NAME} does not instrument physical addressing")
    roots = _descriptor_variables(module, every=descriptor_state)
    # Local arrays are checked with or without descriptors (and without descriptor state).
    local_indexing = may_index_locals(module)
    descriptors = bool(roots) or (descriptor_state and _has_descriptor_variables(module))
    addresses = descriptor_state and any(
        c.operands[0] == Capability.PhysicalStorageBufferAddresses for c in module.capabilities
    )
    if not descriptors and not local_indexing and not addresses:
        return InstrumentResult(module)
    def_use = ShaderIndex(module, roots)
    types = Types(def_use.defs)
    decorations = Decorations(module)
    findings = find_accesses(module, def_use, types, decorations, include_runtime=descriptor_state)
    buffer_findings = BufferFindings()
    texel_findings = TexelFindings()
    if descriptor_state:
        buffer_findings = find_buffer_accesses(module, types, decorations)
        texel_findings = find_texel_accesses(module, types, decorations)
    result = InstrumentResult(module, findings, buffer_findings, texel_findings)
    if local_indexing:
        result.local_findings = find_local_accesses(module, types)
    if addresses:
        result.address_findings = find_address_accesses(module, types, decorations)
    if not result.changed:
        return result
    for entry_point in module.entry_points:
        check_supported(entry_point)
    entry_functions = _entry_functions(module)

    builder = Builder(module, def_use)
    helpers = build_helpers(
        builder,
        descriptor_set=descriptor_set,
        shader_id=shader_id & 0xFFFF_FFFF,
        descriptor_state=descriptor_state,
        context_address=context_address,
    )
    stage_words = StageWords(builder, decorations, helpers.stage_info)
    tables = BindingTables(builder, helpers.binding_table)
    ranges = range_guarder(builder, def_use, types, helpers, tables)
    address_checks = address_guarder(builder, def_use, types, decorations, helpers, shader_int64)
    descriptor_proofs = descriptor_loop_proofs(builder, def_use, types, helpers, tables)
    action_values = (
        None
        if helpers.buffer_range is None
        else ActionValues(builder, def_use, types, decorations, helpers.buffer_range)
    )
    copied, result.loops_copied = copy_provable_code(
        builder,
        def_use,
        types,
        (ranges, buffer_findings),
        (address_checks, result.address_findings),
        (descriptor_proofs, _not_range_checked(findings.accesses, buffer_findings, texel_findings)),
        result.local_findings.accesses if helpers.report_local_index is not None else [],
        _checked_elsewhere(result),
        unroll_loop_copies,
        [
            *findings.accesses,
            *buffer_findings.accesses,
            *texel_findings.accesses,
            *result.local_findings.accesses,
            *result.address_findings.accesses,
        ],
        action_values,
        (entry_functions, helpers.action_verdict),
    )
    result.entry_verdicts = tuple(
        (decode_string(entry_point.operands, 2)[0], *copied[function.id])
        for function, entry_point in entry_functions
        if function.id in copied
    )
    ranges_read_tables = guard_buffer_ranges(
        ranges, def_use, helpers, buffer_findings, texel_findings
    )
    guard_local_arrays(builder, def_use, types, helpers, result.local_findings)
    guard_addresses(address_checks, def_use, result.address_findings)
    findings.accesses = _not_range_checked(findings.accesses, buffer_findings, texel_findings)
    guarder = Guarder(builder, def_use, types, helpers, _decorations_by_target(module), tables)
    MergedOperands(guarder).prepare(findings.accesses)
    for access in last_first(findings.accesses, def_use):
        guarder.guard(access)
    remove_unused_links(module, findings, def_use)
    if helpers.descriptor_word is not None and not guarder.called_descriptor_word:
        _drop_function(module, helpers.descriptor_word)
    unused_helpers: list[int | None] = []
    lengths_read = action_values is not None and action_values.called
    in_table = guarder.called_check_in_table
    if not in_table and not (descriptor_proofs and descriptor_proofs.called_check_in_table):
        unused_helpers.append(helpers.check_in_table)
    # gpuav_binding_fits calls gpuav_table_word_fits and gpuav_range_in_table
    binding_fits = bool(descriptor_proofs and descriptor_proofs.called_binding_fits) or bool(
        ranges and ranges.called_binding_fits
    )
    if not binding_fits:
        unused_helpers.append(helpers.binding_fits)
    if not guarder.verdicts.called and not binding_fits:
        unused_helpers.append(helpers.table_word_fits)
    if not ranges_read_tables and not binding_fits:
        unused_helpers.append(helpers.range_in_table)
    if not tables.called:
        unused_helpers.append(helpers.binding_table)
    if not buffer_findings.accesses:
        unused_helpers += [helpers.check_buffer_range, helpers.write_range_record]
    if not texel_findings.accesses:
        unused_helpers += [helpers.check_texel, helpers.write_texel_record]
    if not result.local_findings.accesses:
        unused_helpers += [helpers.report_local_index, helpers.write_local_record]
    if not result.address_findings.accesses:
        unused_helpers += [helpers.check_address, *helpers.address_writers]
    if address_checks is None or not address_checks.called_inside:
        unused_helpers.append(helpers.address_inside)
    if not buffer_findings.accesses and not texel_findings.accesses and not lengths_read:
        unused_helpers.append(helpers.buffer_range)
    if not copied:
        unused_helpers.append(helpers.action_verdict)
    for unused in unused_helpers:
        if unused is not None:
            _drop_function(module, unused)
    interface = [*helpers.variables, helpers.stage_info]
    if guarder.reports is not None and guarder.reports.variables:
        interface.extend(guarder.reports.variables)
        for function, _ in entry_functions:
            guarder.reports.write_at_returns(function)
    if helpers.address_stretch is not None:
        if result.address_findings.accesses:
            interface.append(helpers.address_stretch)
        else:
            _drop_global(module, helpers.address_stretch)
    for function, entry_point in entry_functions:
        stage_words.fill(entry_point, function)
    list_in_interfaces(builder, interface)
    result.helpers = helpers
    return result


def _checked_elsewhere(result: InstrumentResult) -> set[int]:
    """The ``id()`` of every consumer checked by a pass that makes no test before a loop."""
    return {id(c) for access in result.texel_findings.accesses for c in access.consumers}


def _not_range_checked(
    accesses: list[DescriptorAccess], buffers: BufferFindings, texels: TexelFindings
) -> list[DescriptorAccess]:
    """The descriptor accesses left to guard: a constant-index one whose range (or texel)
    check stands already needs no check of its own, since an unusable descriptor's range is 0
    (``state_reader``)."""
    ranged = {id(access.consumer) for access in buffers.accesses}
    ranged.update(id(consumer) for access in texels.accesses for consumer in access.consumers)
    return [
        access
        for access in accesses
        if id(access.consumer) not in ranged
        or not all(_constant_inside(lookup) for lookup in access.lookups)
    ]


def _constant_inside(lookup: Lookup) -> bool:
    return (
        isinstance(lookup, DescriptorLookup)
        and lookup.element is None
        and lookup.static_index is not None
        and lookup.static_length is not None
        and not lookup.statically_out_of_bounds
    )


def _has_descriptor_variables(module: Module) -> bool:
    return any(
        variable.opcode == Op.Variable and variable.operands[2] in DESCRIPTOR_CLASSES
        for variable in module.globals
    )


def _drop_global(module: Module, result_id: int) -> None:
    """Remove an unused global of the helpers (its name too)."""
    module.globals = [g for g in module.globals if g.result_id != result_id]
    module.debug_names = [
        i for i in module.debug_names if not (i.operands and i.operands[0] == result_id)
    ]


def _drop_function(module: Module, function_id: int) -> None:
    """Remove an uncalled helper (its name too) so that modules do not grow for nothing."""
    module.functions = [f for f in module.functions if f.id != function_id]
    module.debug_names = [
        i for i in module.debug_names if not (i.operands and i.operands[0] == function_id)
    ]


def _descriptor_variables(module: Module, *, every: bool = False) -> set[int]:
    """Descriptor arrays; single blocks too where variable pointers allow OpPtrAccessChain;
    ``every`` descriptor variable with descriptor state (each use checks it was written)."""
    variable_pointers = any(c.operands[0] in _VARIABLE_POINTERS for c in module.capabilities)
    types = {i.operands[0]: i for i in module.globals if i.opcode in _TYPES_OF_INTEREST}
    found: set[int] = set()
    for variable in module.globals:
        if variable.opcode != Op.Variable or variable.operands[2] not in DESCRIPTOR_CLASSES:
            continue
        pointer = types.get(variable.operands[0])
        pointee = None if pointer is None else types.get(pointer.operands[2])
        if every:
            found.add(variable.operands[1])
            continue
        if pointee is None:
            continue
        if pointee.opcode in _ARRAYS or (variable_pointers and pointee.opcode == Op.TypeStruct):
            found.add(variable.operands[1])
    return found


def _entry_functions(module: Module) -> list[tuple[Function, Instruction]]:
    """(function, entry point) once per entry function; one function, one stage."""
    functions = {function.id: function for function in module.functions}
    chosen: dict[int, Instruction] = {}
    for entry_point in module.entry_points:
        function_id = entry_point.operands[1]
        previous = chosen.setdefault(function_id, entry_point)
        if previous.operands[0] != entry_point.operands[0]:
            raise DescriptorBoundsUnsupported(
                f"function %{function_id} is the entry point of two stages"
            )
        if function_id not in functions:
            raise DescriptorBoundsUnsupported(f"entry point function %{function_id} is missing")
    return [(functions[function_id], entry) for function_id, entry in chosen.items()]


def _decorations_by_target(module: Module) -> dict[int, list[Instruction]]:
    found: dict[int, list[Instruction]] = {}
    for instruction in module.annotations:
        if instruction.opcode in (Op.Decorate, Op.DecorateId, Op.DecorateString):
            found.setdefault(instruction.operands[0], []).append(instruction)
    return found


def instrument_shader(
    words: list[int],
    *,
    shader_id: int,
    descriptor_set: int,
    descriptor_state: bool = False,
    context_address: ContextAddressSource | None = None,
    printf: bool = False,
    checks: bool = True,
    shader_int64: bool = False,
    unroll_loop_copies: bool = True,
) -> list[int]:
    """Instrumented copy of ``words``; the words themselves when nothing needs a check."""
    instrumented = instrument_read_module(
        read(words),
        shader_id=shader_id,
        descriptor_set=descriptor_set,
        descriptor_state=descriptor_state,
        context_address=context_address,
        printf=printf,
        checks=checks,
        shader_int64=shader_int64,
        unroll_loop_copies=unroll_loop_copies,
    )
    return list(words) if instrumented is None else instrumented


def instrument_read_module(
    module: Module,
    *,
    shader_id: int,
    descriptor_set: int,
    descriptor_state: bool = False,
    context_address: ContextAddressSource | None = None,
    printf: bool = False,
    checks: bool = True,
    shader_int64: bool = False,
    unroll_loop_copies: bool = True,
) -> list[int] | None:
    """``instrument_shader`` for a module already read (the layer reads each module once):
    the instrumented words, or None when nothing needs a check. The pass changes ``module``
    in place, so the caller gives it up."""
    instrumented = instrument_slotted(
        module,
        descriptor_set=descriptor_set,
        descriptor_state=descriptor_state,
        context_address=context_address,
        printf=printf,
        checks=checks,
        shader_int64=shader_int64,
        unroll_loop_copies=unroll_loop_copies,
    )
    return None if instrumented is None else instrumented.with_shader_id(shader_id)


def instrument_slotted(
    module: Module,
    *,
    descriptor_set: int,
    descriptor_state: bool = False,
    context_address: ContextAddressSource | None = None,
    printf: bool = False,
    checks: bool = True,
    shader_int64: bool = False,
    unroll_loop_copies: bool = True,
) -> SlottedWords | None:
    """``instrument_read_module`` for any shader id: the words with a placeholder where the
    id goes (``shader_id_slot``), or None when nothing needs a check."""
    placeholder = placeholder_for(module)
    result = instrument_module(
        module,
        shader_id=placeholder,
        descriptor_set=descriptor_set,
        descriptor_state=descriptor_state,
        context_address=context_address,
        printf=printf,
        checks=checks,
        shader_int64=shader_int64,
        unroll_loop_copies=unroll_loop_copies,
    )
    if not result.changed:
        return None
    return slotted(write(result.module), placeholder, result.entry_verdicts)
