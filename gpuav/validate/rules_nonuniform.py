"""NonUniform: a descriptor-array access whose index is not dynamically uniform must be
decorated NonUniform (seed 004; VUID-RuntimeSpirv-NonUniform-06274), and NonUniform indexing
of an array kind needs that kind's ...ArrayNonUniformIndexing feature.

Dynamic uniformity is undecidable in general, so this is a conservative taint analysis that
reports only what it is sure of: values derived (through arithmetic, copies, calls, phis, and
stores to and loads from Function/Private variables) from Input variables that vary per
invocation. Built-ins that are uniform across the invocation group (WorkgroupId, DrawIndex,
...) are not sources; values made non-uniform only by control flow are not followed. Its
findings are warnings: an input may still hold one value for a whole draw.

The test corpus indexes descriptor arrays with varying values on purpose (it exercises GPU-AV's
bounds checks), so this warning is the one diagnostic the corpus draws.
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
_MAX_DEPTH = 200
_NEVER_VARYING = frozenset(
    {Op.Constant, Op.ConstantNull, Op.ConstantTrue, Op.ConstantFalse, Op.ConstantComposite}
    | {Op.SpecConstant, Op.SpecConstantTrue, Op.SpecConstantFalse, Op.SpecConstantComposite}
    | {Op.SpecConstantOp, Op.Variable, Op.Undef}
)


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
    taint: _Taint | None = None
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
        taint = taint or _Taint(context)
        if taint.value(access.operands[3]):
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


class _Taint:
    """Whether a value derives from a varying input, asked on demand by walking definitions
    backwards (a slice from each index: far cheaper than a whole-module fixed point)."""

    def __init__(self, context: ValidationContext) -> None:
        self.context = context
        self.defs = context.def_use.defs
        self.memo: dict[int, bool] = {}
        self.sources: set[int] = set()
        for instruction in context.module.globals:
            if instruction.opcode != Op.Variable or len(instruction.operands) < 3:
                continue
            if variable_storage(instruction) != StorageClass.Input:
                continue
            builtin = context.decorations.builtin(instruction.operands[1])
            if builtin is None or builtin not in _UNIFORM_BUILTINS:
                self.sources.add(instruction.operands[1])
        self.functions = {function.id: function for function in context.module.functions}
        # parameter id -> (function id, position)
        self.parameters = {
            parameter.operands[1]: (function.id, position)
            for function in context.module.functions
            for position, parameter in enumerate(function.parameters)
        }

    def value(self, id_: int, depth: int = 0) -> bool:
        found = self.memo.get(id_)
        if found is not None:
            return found
        if depth > _MAX_DEPTH:
            return False
        self.memo[id_] = False  # a cycle (loop phi) adds nothing by itself
        instruction = self.defs.get(id_)
        result = instruction is not None and self._derive(instruction, depth + 1)
        self.memo[id_] = result
        return result

    def _derive(self, instruction: Instruction, depth: int) -> bool:
        opcode, operands = instruction.opcode, instruction.operands
        if opcode == Op.Load:
            return len(operands) > 2 and self.pointer(operands[2], depth)
        if opcode == Op.FunctionParameter:
            return any(
                self.value(a, depth) or self.pointer(a, depth) for a in self._arguments(operands[1])
            )
        if opcode == Op.FunctionCall:
            arguments = operands[3:]
            if any(self.value(argument, depth) for argument in arguments):
                return True
            return len(operands) > 2 and self._returns(operands[2], depth)
        if opcode in _NEVER_VARYING or instruction.result_id is None:
            return False
        used = self.context.def_use.id_operands.used_ids(instruction)
        return any(self.value(value, depth) for value in used if value != operands[0])

    def pointer(self, pointer: int, depth: int) -> bool:
        """A load through ``pointer`` may vary: a varying index, an input, or a
        Function/Private variable that was given a varying value."""
        for _ in range(_MAX_DEPTH):
            instruction = self.defs.get(pointer)
            if instruction is None:
                return False
            if instruction.opcode in ACCESS_CHAINS:
                if any(self.value(index, depth) for index in instruction.operands[3:]):
                    return True
                pointer = instruction.operands[2]
            elif instruction.opcode == Op.CopyObject:
                pointer = instruction.operands[2]
            elif instruction.opcode == Op.Variable:
                if instruction.operands[1] in self.sources:
                    return True
                if variable_storage(instruction) not in _TAINTABLE:
                    return False
                return any(self.value(stored, depth) for stored in self._stored(instruction))
            elif instruction.opcode == Op.FunctionParameter:
                return self.value(pointer, depth)
            else:
                return False
        return False

    def _stored(self, variable: Instruction) -> Iterator[int]:
        """Values stored into a variable, through access chains into it too."""
        pending, seen = [variable.operands[1]], set()
        while pending:
            pointer = pending.pop()
            if pointer in seen:
                continue
            seen.add(pointer)
            for user in self.context.def_use.uses(pointer):
                if user.opcode == Op.Store and user.operands[0] == pointer:
                    yield user.operands[1]
                elif (
                    user.opcode in ACCESS_CHAINS or user.opcode == Op.CopyObject
                ) and user.operands[2:3] == [pointer]:
                    pending.append(user.operands[1])

    def _arguments(self, parameter: int) -> Iterator[int]:
        """What every call passes for a parameter."""
        function_id, position = self.parameters.get(parameter, (None, 0))
        if function_id is None:
            return
        for call in self.context.def_use.uses(function_id):
            if call.opcode == Op.FunctionCall and len(call.operands) > 3 + position:
                yield call.operands[3 + position]

    def _returns(self, function_id: int, depth: int) -> bool:
        function = self.functions.get(function_id)
        if function is None:
            return False
        return any(
            self.value(block.terminator.operands[0], depth)
            for block in function.blocks
            if block.instructions
            and block.terminator.opcode == Op.ReturnValue
            and block.terminator.operands
        )
