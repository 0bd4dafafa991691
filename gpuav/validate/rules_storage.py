"""Storage classes, variable initializers and 8/16-bit storage (Vulkan environment for SPIR-V).

Rules: only the storage classes Vulkan knows; Output not in compute or ray stages, Workgroup
only in compute, task and mesh; initializers only on Output, Private, Function and Workgroup
variables (Workgroup: OpConstantNull and shaderZeroInitializeWorkgroupMemory); 8- and 16-bit
data only in the storage classes whose storage feature is enabled; arithmetic on 8/16-bit
types only with the Int8, Int16 or Float16 capability; initializers that are constants.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from gpuav.spirv.grammar import INSTRUCTIONS, Capability, Decoration, Op
from gpuav.spirv.grammar import ExecutionModel as Model
from gpuav.spirv.grammar import StorageClass as Class
from gpuav.spirv.instruction import Instruction
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.reach import RAY_TRACING_MODELS, WORKGROUP_MEMORY_MODELS
from gpuav.validate.shader_facts import EntryPoints, enabled, enum_name

STORAGE_CLASS = "VUID-StandaloneSpirv-None-04643"
OUTPUT_STAGE = "VUID-StandaloneSpirv-None-04644"
WORKGROUP_STAGE = "VUID-StandaloneSpirv-None-04645"
INITIALIZER_CLASS = "VUID-StandaloneSpirv-OpVariable-04651"
WORKGROUP_INITIALIZER_NULL = "VUID-StandaloneSpirv-OpVariable-04734"
WORKGROUP_INITIALIZER_FEATURE = "VUID-RuntimeSpirv-shaderZeroInitializeWorkgroupMemory-06372"
STORAGE_BUFFER_8BIT = "VUID-RuntimeSpirv-storageBuffer8BitAccess-06328"
UNIFORM_8BIT = "VUID-RuntimeSpirv-uniformAndStorageBuffer8BitAccess-06329"
PUSH_CONSTANT_8BIT = "VUID-RuntimeSpirv-storagePushConstant8-06330"
STORAGE_BUFFER_16BIT = "VUID-RuntimeSpirv-storageBuffer16BitAccess-06331"
UNIFORM_16BIT = "VUID-RuntimeSpirv-uniformAndStorageBuffer16BitAccess-06332"
PUSH_CONSTANT_16BIT = "VUID-RuntimeSpirv-storagePushConstant16-06333"
INPUT_OUTPUT_16BIT = "VUID-RuntimeSpirv-storageInputOutput16-06334"
# SPV_KHR_8bit_storage / SPV_KHR_16bit_storage: the storage capabilities allow loads, stores
# and conversions only; computing on the values needs the arithmetic capability. No VUID.
SMALL_TYPE_ARITHMETIC = "GPUAV-StandaloneSpirv-SmallTypeArithmetic"
# SPIR-V OpVariable: "Initializer must be an <id> from a constant instruction or a global
# (module scope) OpVariable instruction". No Vulkan VUID.
INITIALIZER_CONSTANT = "GPUAV-StandaloneSpirv-OpVariable-ConstantInitializer"

_ALLOWED = frozenset(
    {
        Class.UniformConstant,
        Class.Input,
        Class.Uniform,
        Class.Output,
        Class.Workgroup,
        Class.Private,
        Class.Function,
        Class.PushConstant,
        Class.Image,
        Class.StorageBuffer,
        Class.RayPayloadKHR,
        Class.IncomingRayPayloadKHR,
        Class.HitAttributeKHR,
        Class.CallableDataKHR,
        Class.IncomingCallableDataKHR,
        Class.ShaderRecordBufferKHR,
        Class.PhysicalStorageBuffer,
        Class.TileImageEXT,
        # Storage classes of extensions whose own rules admit them (mesh shading, shader
        # execution reordering, tile shading, AMDX shader enqueue).
        Class.TaskPayloadWorkgroupEXT,
        Class.HitObjectAttributeNV,
        Class.HitObjectAttributeEXT,
        Class.TileAttachmentQCOM,
        Class.NodePayloadAMDX,
    }
)
_NO_OUTPUT_MODELS = RAY_TRACING_MODELS | {Model.GLCompute}
_INITIALIZABLE = (Class.Output, Class.Private, Class.Function, Class.Workgroup)
_BUFFER_CLASSES = (Class.StorageBuffer, Class.ShaderRecordBufferKHR, Class.PhysicalStorageBuffer)
# (width, storage class) -> (feature, rule); Uniform means a Block (uniform buffer) here.
_SMALL_STORAGE = {
    (8, Class.Uniform): ("uniformAndStorageBuffer8BitAccess", UNIFORM_8BIT),
    (8, Class.PushConstant): ("storagePushConstant8", PUSH_CONSTANT_8BIT),
    (16, Class.Uniform): ("uniformAndStorageBuffer16BitAccess", UNIFORM_16BIT),
    (16, Class.PushConstant): ("storagePushConstant16", PUSH_CONSTANT_16BIT),
    (16, Class.Input): ("storageInputOutput16", INPUT_OUTPUT_16BIT),
    (16, Class.Output): ("storageInputOutput16", INPUT_OUTPUT_16BIT),
} | {
    (width, buffer): (
        f"storageBuffer{width}BitAccess",
        STORAGE_BUFFER_8BIT if width == 8 else STORAGE_BUFFER_16BIT,
    )
    for width in (8, 16)
    for buffer in _BUFFER_CLASSES
}
_COMPUTING_CLASSES = ("Arithmetic", "Bit")
_COMPARING_CLASS = "Relational_and_Logical"
_CONSTANT_CLASS = "Constant-Creation"


def check(context: ValidationContext) -> Iterable[Diagnostic]:
    yield from _storage_classes(context)
    yield from _stage_classes(context)
    yield from _variables(context)
    yield from _small_type_arithmetic(context)


def _storage_classes(context: ValidationContext) -> Iterator[Diagnostic]:
    for instruction in context.module.globals:
        if instruction.opcode in (Op.TypePointer, Op.TypeForwardPointer, Op.TypeUntypedPointerKHR):
            storage = instruction.operands[1] if len(instruction.operands) > 1 else None
            if storage is not None and storage not in _ALLOWED:
                yield Diagnostic(
                    STORAGE_CLASS,
                    f"{instruction.name}: storage class {enum_name(Class, storage)} is not "
                    "allowed in Vulkan",
                    instruction.origin,
                )


def _stage_classes(context: ValidationContext) -> Iterator[Diagnostic]:
    """Output and Workgroup variables against the stages that use them: through the entry
    point's interface list, or through an instruction in a function the entry point calls."""
    entry_points = EntryPoints(context)
    for instruction in context.module.globals:
        if instruction.opcode != Op.Variable or len(instruction.operands) < 3:
            continue
        storage = instruction.operands[2]
        if storage not in (Class.Output, Class.Workgroup):
            continue
        variable = instruction.operands[1]
        models = entry_points.models_using(variable)
        if storage == Class.Output and models & _NO_OUTPUT_MODELS:
            stages = ", ".join(enum_name(Model, m) for m in sorted(models & _NO_OUTPUT_MODELS))
            yield Diagnostic(
                OUTPUT_STAGE,
                f"Output variable %{variable} used in {stages}, which have no outputs",
                instruction.origin,
            )
        if storage == Class.Workgroup and models - WORKGROUP_MEMORY_MODELS:
            stages = ", ".join(
                enum_name(Model, m) for m in sorted(models - WORKGROUP_MEMORY_MODELS)
            )
            yield Diagnostic(
                WORKGROUP_STAGE,
                f"Workgroup variable %{variable} used in {stages} (only compute, task and mesh "
                "shaders have workgroup memory)",
                instruction.origin,
            )


def _variables(context: ValidationContext) -> Iterator[Diagnostic]:
    variables = [i for i in context.module.globals if i.opcode == Op.Variable]
    for function in context.module.functions:
        for block in function.blocks[:1]:
            variables += [i for i in block.instructions if i.opcode == Op.Variable]
    widths = _small_widths(context)
    for instruction in variables:
        if len(instruction.operands) < 3:
            continue
        storage = instruction.operands[2]
        if len(instruction.operands) > 3:
            yield from _initializer(context, instruction, storage)
        pointer = context.def_use.defs.get(instruction.operands[0])
        if pointer is None or pointer.opcode != Op.TypePointer or len(pointer.operands) < 3:
            continue
        yield from _small_storage(context, instruction, storage, pointer.operands[2], widths)
    for instruction in context.module.globals:
        # Physical pointers are types, not variables: check what they point to.
        if (
            instruction.opcode == Op.TypePointer
            and len(instruction.operands) > 2
            and instruction.operands[1] == Class.PhysicalStorageBuffer
        ):
            yield from _small_storage(
                context, instruction, Class.PhysicalStorageBuffer, instruction.operands[2], widths
            )


def _initializer(
    context: ValidationContext, instruction: Instruction, storage: int
) -> Iterator[Diagnostic]:
    value = context.def_use.defs.get(instruction.operands[3])
    info = INSTRUCTIONS.get(value.opcode) if value is not None else None
    is_global_variable = (
        value is not None and value.opcode == Op.Variable and (context.def_use.place(value) is None)
    )
    if not is_global_variable and (info is None or info[1] != _CONSTANT_CLASS):
        yield Diagnostic(
            INITIALIZER_CONSTANT,
            f"the initializer of %{instruction.operands[1]} is not a constant or a module-scope "
            "variable",
            instruction.origin,
        )
    if storage not in _INITIALIZABLE:
        yield Diagnostic(
            INITIALIZER_CLASS,
            f"variable %{instruction.operands[1]} in {enum_name(Class, storage)} has an "
            "initializer (only Output, Private, Function and Workgroup variables may)",
            instruction.origin,
        )
    elif storage == Class.Workgroup:
        if value is None or value.opcode != Op.ConstantNull:
            yield Diagnostic(
                WORKGROUP_INITIALIZER_NULL,
                f"Workgroup variable %{instruction.operands[1]} must be initialized with "
                "OpConstantNull",
                instruction.origin,
            )
        if not enabled(context, "shaderZeroInitializeWorkgroupMemory"):
            yield Diagnostic(
                WORKGROUP_INITIALIZER_FEATURE,
                f"Workgroup variable %{instruction.operands[1]} has an initializer but "
                "shaderZeroInitializeWorkgroupMemory is not enabled",
                instruction.origin,
            )


def _small_widths(context: ValidationContext) -> dict[int, frozenset[int]]:
    """type id -> the 8/16 bit widths of the scalars it contains (types are declared before
    use, so one pass in order is enough; pointers stop the walk)."""
    widths: dict[int, frozenset[int]] = {}
    for instruction in context.module.globals:
        operands = instruction.operands
        opcode = instruction.opcode
        if opcode in (Op.TypeInt, Op.TypeFloat) and len(operands) > 1:
            widths[operands[0]] = frozenset({operands[1]} & {8, 16})
        elif opcode in (Op.TypeVector, Op.TypeMatrix, Op.TypeArray, Op.TypeRuntimeArray):
            if len(operands) > 1:
                widths[operands[0]] = widths.get(operands[1], frozenset())
        elif opcode == Op.TypeStruct and operands:
            found: frozenset[int] = frozenset()
            for member in operands[1:]:
                found |= widths.get(member, frozenset())
            widths[operands[0]] = found
    return widths


def _small_storage(
    context: ValidationContext,
    instruction: Instruction,
    storage: int,
    pointee: int,
    widths: dict[int, frozenset[int]],
) -> Iterator[Diagnostic]:
    for width in sorted(widths.get(pointee, frozenset())):
        key_class = storage
        if storage == Class.Uniform and _is_buffer_block(context, pointee):
            key_class = Class.StorageBuffer  # a BufferBlock in Uniform is a storage buffer
        entry = _SMALL_STORAGE.get((width, key_class))
        if entry is None:
            continue
        feature, rule = entry
        if not enabled(context, feature):
            yield Diagnostic(
                rule,
                f"%{instruction.operands[1]} holds {width}-bit data in "
                f"{enum_name(Class, storage)} but {feature} is not enabled",
                instruction.origin,
            )


def _is_buffer_block(context: ValidationContext, type_id: int) -> bool:
    types = context.types
    try:
        inner, _arrays = types.strip_arrays(type_id)
    except KeyError:
        return False
    return context.decorations.has(inner, Decoration.BufferBlock)


def _small_type_arithmetic(context: ValidationContext) -> Iterator[Diagnostic]:
    capabilities = {c.operands[0] for c in context.module.capabilities if c.operands}
    allowed = {
        (Op.TypeInt, 8): Capability.Int8 in capabilities,
        (Op.TypeInt, 16): Capability.Int16 in capabilities,
        (Op.TypeFloat, 16): Capability.Float16 in capabilities,
    }
    if all(allowed.values()):
        return
    defs = context.def_use.defs
    for function in context.module.functions:
        for block in function.blocks:
            for instruction in block.instructions:
                info = INSTRUCTIONS.get(instruction.opcode)
                if info is None:
                    continue
                if info[1] in _COMPUTING_CLASSES:
                    type_id = instruction.type_id
                elif info[1] == _COMPARING_CLASS and len(instruction.operands) > 2:
                    # Comparisons return bool: the operand type is what is computed on.
                    type_id = context.types.type_of(instruction.operands[2])
                else:
                    continue
                scalar = defs.get(type_id) if type_id is not None else None
                # Bounded: a mutated module can make a vector its own component type.
                for _ in range(2):
                    if scalar is None or scalar.opcode not in (Op.TypeVector, Op.TypeMatrix):
                        break
                    scalar = defs.get(scalar.operands[1])
                if scalar is None or len(scalar.operands) < 2:
                    continue
                if allowed.get((scalar.opcode, scalar.operands[1]), True):
                    continue
                kind = "int" if scalar.opcode == Op.TypeInt else "float"
                needed = {8: "Int8", 16: "Int16" if kind == "int" else "Float16"}[
                    scalar.operands[1]
                ]
                yield Diagnostic(
                    SMALL_TYPE_ARITHMETIC,
                    f"{instruction.name} computes on {scalar.operands[1]}-bit {kind} values "
                    f"without the {needed} capability (storage capabilities allow only loads, "
                    "stores and conversions)",
                    instruction.origin,
                )
