"""NonUniform: a descriptor-array access whose index is not dynamically uniform must be
decorated NonUniform (seed 004; VUID-RuntimeSpirv-NonUniform-06274), and NonUniform indexing
of an array kind needs that kind's ...ArrayNonUniformIndexing feature.

Dynamic uniformity is undecidable in general, so this is a conservative taint analysis that
reports only what it is sure of: values derived (through arithmetic, copies, calls, phis, and
stores to and loads from Function/Private variables) from Input variables that vary per
invocation. Built-ins that are uniform across the invocation group (WorkgroupId, DrawIndex,
...) are not sources; values made non-uniform only by control flow are not followed. Its
findings are warnings: an input may still hold one value for a whole draw.

Not yet in ``api.RULE_FAMILIES``: the test corpus indexes descriptor arrays with varying values
on purpose (it exercises GPU-AV's bounds checks) and the corpus test there expects no
diagnostic at all, warnings included.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from gpuav.spirv.grammar import BuiltIn, Capability, Decoration, Dim, Op, StorageClass
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic, Severity
from gpuav.validate.shader_facts import (
    ACCESS_CHAINS,
    DESCRIPTOR_STORAGE,
    function_instructions,
    root_variable,
    strip_arrays,
    variable_storage,
    variable_type,
)

MISSING_NON_UNIFORM = "VUID-RuntimeSpirv-NonUniform-06274"
INDEXING_FEATURE = "GPUAV-NonUniform-IndexingFeature"

# Built-ins with one value across an invocation group (a draw's invocations, a workgroup).
_UNIFORM_BUILTINS = frozenset(
    {
        BuiltIn.WorkgroupId,
        BuiltIn.NumWorkgroups,
        BuiltIn.WorkgroupSize,
        BuiltIn.DrawIndex,
        BuiltIn.BaseVertex,
        BuiltIn.BaseInstance,
        BuiltIn.ViewIndex,
        BuiltIn.DeviceIndex,
        BuiltIn.SubgroupSize,
        BuiltIn.NumSubgroups,
    }
)
_TAINTABLE = frozenset({StorageClass.Function, StorageClass.Private})
_MAX_PASSES = 8


@dataclass(frozen=True)
class _Kind:
    name: str
    feature: str
    capability: int


_KINDS = {
    "sampled image": _Kind(
        "sampled image",
        "shaderSampledImageArrayNonUniformIndexing",
        Capability.SampledImageArrayNonUniformIndexing,
    ),
    "storage image": _Kind(
        "storage image",
        "shaderStorageImageArrayNonUniformIndexing",
        Capability.StorageImageArrayNonUniformIndexing,
    ),
    "uniform texel buffer": _Kind(
        "uniform texel buffer",
        "shaderUniformTexelBufferArrayNonUniformIndexing",
        Capability.UniformTexelBufferArrayNonUniformIndexing,
    ),
    "storage texel buffer": _Kind(
        "storage texel buffer",
        "shaderStorageTexelBufferArrayNonUniformIndexing",
        Capability.StorageTexelBufferArrayNonUniformIndexing,
    ),
    "input attachment": _Kind(
        "input attachment",
        "shaderInputAttachmentArrayNonUniformIndexing",
        Capability.InputAttachmentArrayNonUniformIndexing,
    ),
    "uniform buffer": _Kind(
        "uniform buffer",
        "shaderUniformBufferArrayNonUniformIndexing",
        Capability.UniformBufferArrayNonUniformIndexing,
    ),
    "storage buffer": _Kind(
        "storage buffer",
        "shaderStorageBufferArrayNonUniformIndexing",
        Capability.StorageBufferArrayNonUniformIndexing,
    ),
}


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    defs = context.def_use.defs
    accesses: list[tuple[Instruction, _Kind | None]] = []
    for instruction in function_instructions(context):
        if instruction.opcode not in ACCESS_CHAINS or len(instruction.operands) < 4:
            continue
        base = defs.get(instruction.operands[2])
        if base is None or base.opcode != Op.Variable or len(base.operands) < 3:
            continue
        if variable_storage(base) not in DESCRIPTOR_STORAGE:
            continue
        array = variable_type(defs, base)
        array_instruction = defs.get(array) if array is not None else None
        if array_instruction is None or array_instruction.opcode not in (
            Op.TypeArray,
            Op.TypeRuntimeArray,
        ):
            continue
        accesses.append((instruction, _kind(context, base)))
    if not accesses:
        return
    capabilities = {c.operands[0] for c in context.module.capabilities if c.operands}
    divergent: set[int] | None = None
    for access, kind in accesses:
        decorated = _non_uniform(context, access)
        if decorated:
            if (
                kind is not None
                and kind.feature not in context.features
                and kind.capability not in capabilities
            ):
                yield Diagnostic(
                    INDEXING_FEATURE,
                    f"NonUniform indexing of a {kind.name} array needs {kind.feature}",
                    access.origin,
                )
            continue
        if _constant(defs, access.operands[3]):
            continue
        if divergent is None:
            divergent = _divergent_values(context)
        if access.operands[3] in divergent:
            # A warning: an input may in fact hold one value for the whole draw or dispatch
            # (dynamic uniformity is a run-time property), but nothing here proves it.
            yield Diagnostic(
                MISSING_NON_UNIFORM,
                "this descriptor-array index comes from a shader input that can differ between "
                "invocations; unless it is the same for the whole draw or dispatch, the access "
                "must be decorated NonUniform (nonuniformEXT in GLSL)",
                access.origin,
                Severity.WARNING,
            )


def _constant(defs: Mapping[int, Instruction], id_: int) -> bool:
    instruction = defs.get(id_)
    return instruction is not None and instruction.opcode in (
        Op.Constant,
        Op.ConstantNull,
        Op.SpecConstant,
        Op.SpecConstantOp,
    )


def _non_uniform(context: ValidationContext, access: Instruction) -> bool:
    """The access chain, or a load of it, carries NonUniform (glslang decorates both)."""
    decorations = context.decorations
    result = access.operands[1]
    if decorations.has(result, Decoration.NonUniform):
        return True
    return any(
        user.opcode == Op.Load
        and len(user.operands) > 1
        and decorations.has(user.operands[1], Decoration.NonUniform)
        for user in context.def_use.uses(result)
    )


def _kind(context: ValidationContext, variable: Instruction) -> _Kind | None:
    defs = context.def_use.defs
    pointee = variable_type(defs, variable)
    element = defs.get(strip_arrays(defs, pointee)) if pointee is not None else None
    if element is None:
        return None
    storage = variable_storage(variable)
    if element.opcode == Op.TypeStruct:
        block = context.decorations.is_block(element.operands[0])
        if storage == StorageClass.Uniform and block:
            return _KINDS["uniform buffer"]
        return _KINDS["storage buffer"]
    if element.opcode == Op.TypeSampler:
        return _KINDS["sampled image"]
    if element.opcode == Op.TypeSampledImage and len(element.operands) > 1:
        element = defs.get(element.operands[1]) or element
    if element.opcode != Op.TypeImage or len(element.operands) < 7:
        return None
    dim, sampled = element.operands[2], element.operands[6]
    if dim == Dim.SubpassData:
        return _KINDS["input attachment"]
    if dim == Dim.Buffer:
        return _KINDS["storage texel buffer" if sampled == 2 else "uniform texel buffer"]
    return _KINDS["storage image" if sampled == 2 else "sampled image"]


def _divergent_values(context: ValidationContext) -> set[int]:
    """Ids whose value may differ between invocations because of a varying input."""
    defs, decorations = context.def_use.defs, context.decorations
    sources = set()
    for instruction in context.module.globals:
        if instruction.opcode != Op.Variable or len(instruction.operands) < 3:
            continue
        if variable_storage(instruction) != StorageClass.Input:
            continue
        builtin = decorations.builtin(instruction.operands[1])
        if builtin is None or builtin not in _UNIFORM_BUILTINS:
            sources.add(instruction.operands[1])
    divergent: set[int] = set()
    tainted: set[int] = set()  # Function/Private variables holding divergent values
    returns: set[int] = set()  # functions returning divergent values
    parameters = {
        function.id: [parameter.operands[1] for parameter in function.parameters]
        for function in context.module.functions
    }
    id_operands = context.def_use.id_operands
    instructions = [
        (instruction, id_operands.used_ids(instruction))
        for function in context.module.functions
        for block in function.blocks
        for instruction in block.instructions
    ]
    for _ in range(_MAX_PASSES):
        before = len(divergent) + len(tainted) + len(returns)
        current_function = None
        for instruction, used in instructions:
            opcode, operands = instruction.opcode, instruction.operands
            if opcode == Op.Load and len(operands) >= 3:
                root = root_variable(defs, operands[2])
                root_id = None if root is None else root.operands[1]
                if operands[2] in divergent or root_id in sources or root_id in tainted:
                    divergent.add(operands[1])
            elif opcode == Op.Store and len(operands) >= 2:
                if operands[1] in divergent:
                    root = root_variable(defs, operands[0])
                    if root is not None and variable_storage(root) in _TAINTABLE:
                        tainted.add(root.operands[1])
            elif opcode == Op.FunctionCall and len(operands) >= 3:
                callee = operands[2]
                arguments = operands[3:]
                for argument, parameter in zip(arguments, parameters.get(callee, []), strict=False):
                    if argument in divergent:
                        divergent.add(parameter)
                    root = root_variable(defs, argument)
                    if root is not None and root.operands[1] in tainted | sources:
                        divergent.add(parameter)
                if callee in returns:
                    divergent.add(operands[1])
            elif opcode == Op.ReturnValue and operands and operands[0] in divergent:
                current_function = _function_of(context, instruction)
                if current_function is not None:
                    returns.add(current_function)
            elif instruction.result_id is not None and any(value in divergent for value in used):
                divergent.add(instruction.result_id)
        if len(divergent) + len(tainted) + len(returns) == before:
            break
    return divergent


def _function_of(context: ValidationContext, instruction: Instruction) -> int | None:
    place = context.def_use.place(instruction)
    return None if place is None else place[0].id
