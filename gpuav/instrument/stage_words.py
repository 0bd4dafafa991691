"""The stage code and stage-specific words of a record, computed once per invocation.

A module may hold entry points of several stages that share functions, so the record helper
cannot know its stage statically. Each entry point's first block instead stores
``(stage, word 0, word 1)`` (``gpuav.instrument.record``'s table) into one Private ``uvec3``
that the helper reads. The built-in inputs this needs are reused when the module already
declares them and added (and listed in the entry point's interface) otherwise.
"""

from __future__ import annotations

from gpuav.instrument.record import (
    COMPUTE_YZ_MASK,
    COMPUTE_YZ_SHIFT,
    LOCAL_INDEX_MASK,
    LOCAL_INDEX_SHIFT,
    WORKGROUP_X_MASK,
    Stage,
)
from gpuav.instrument.unsupported import DescriptorBoundsUnsupported
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.builder import Builder
from gpuav.spirv.grammar import BuiltIn, Decoration, ExecutionModel, Op, StorageClass
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.module import Function

# Execution model -> (stage code, built-in of word 0, built-in of word 1 or None for 0), for
# the stages whose words are two plain built-ins.
_STAGE_BUILTINS: dict[int, tuple[Stage, int, int | None]] = {
    ExecutionModel.Vertex: (Stage.VERTEX, BuiltIn.VertexIndex, BuiltIn.InstanceIndex),
    ExecutionModel.TessellationControl: (
        Stage.TESSELLATION_CONTROL,
        BuiltIn.InvocationId,
        BuiltIn.PrimitiveId,
    ),
    ExecutionModel.TessellationEvaluation: (
        Stage.TESSELLATION_EVALUATION,
        BuiltIn.PrimitiveId,
        None,
    ),
    ExecutionModel.Geometry: (Stage.GEOMETRY, BuiltIn.PrimitiveId, BuiltIn.InvocationId),
    ExecutionModel.Fragment: (Stage.FRAGMENT, BuiltIn.FragCoord, None),
}
# Stages identified by a uvec3 built-in: x, then y | z << 16.
_STAGE_XYZ: dict[int, tuple[Stage, int]] = {
    ExecutionModel.GLCompute: (Stage.COMPUTE, BuiltIn.GlobalInvocationId),
    ExecutionModel.RayGenerationKHR: (Stage.RAY_GENERATION, BuiltIn.LaunchIdKHR),
    ExecutionModel.IntersectionKHR: (Stage.INTERSECTION, BuiltIn.LaunchIdKHR),
    ExecutionModel.AnyHitKHR: (Stage.ANY_HIT, BuiltIn.LaunchIdKHR),
    ExecutionModel.ClosestHitKHR: (Stage.CLOSEST_HIT, BuiltIn.LaunchIdKHR),
    ExecutionModel.MissKHR: (Stage.MISS, BuiltIn.LaunchIdKHR),
    ExecutionModel.CallableKHR: (Stage.CALLABLE, BuiltIn.LaunchIdKHR),
}
# Stages identified by their workgroup and the invocation in it (record.py's packing).
_STAGE_WORKGROUP: dict[int, Stage] = {
    ExecutionModel.TaskEXT: Stage.TASK,
    ExecutionModel.MeshEXT: Stage.MESH,
}
_UVEC3_BUILTINS = (BuiltIn.GlobalInvocationId, BuiltIn.LaunchIdKHR, BuiltIn.WorkgroupId)


def check_supported(entry_point: Instruction) -> None:
    """Raise for execution models whose records have no stage code (OpenCL kernels, NV mesh)."""
    model = entry_point.operands[0]
    if model not in _STAGE_BUILTINS and model not in _STAGE_XYZ and model not in _STAGE_WORKGROUP:
        raise DescriptorBoundsUnsupported(
            f"execution model {model} of entry point "
            f"'{entry_point.string(2)}' has no stage code in the record format"
        )


def interface_ids(entry_point: Instruction) -> list[int]:
    """The ids of an OpEntryPoint's interface list."""
    return entry_point.operands[decode_string(entry_point.operands, 2)[1] :]


def add_to_interface(entry_point: Instruction, variable: int) -> None:
    if variable not in interface_ids(entry_point):
        entry_point.operands.append(variable)


class StageWords:
    """Fills the Private ``uvec3`` at the start of each entry point."""

    def __init__(self, builder: Builder, decorations: Decorations, variable: int) -> None:
        """``variable``: the Private ``uvec3`` the record helper reads."""
        self.builder = builder
        self.decorations = decorations
        uint = builder.type_int(32, False)
        self.uvec3 = builder.type_vector(uint, 3)
        self.variable = variable
        self._builtins: dict[int, int] = {}
        self._loaded: dict[int, int] = {}
        module = builder.module
        for instruction in module.globals:
            if instruction.opcode == Op.Variable and instruction.operands[2] == StorageClass.Input:
                builtin = decorations.builtin(instruction.operands[1])
                if builtin is not None:
                    self._builtins.setdefault(builtin, instruction.operands[1])

    def fill(self, entry_point: Instruction, function: Function) -> None:
        """Store the stage words at the start of ``function`` (the entry point's)."""
        model = entry_point.operands[0]
        self._loaded = {}  # built-in variable -> its load in this prologue
        builder = self.builder
        builder.position_after_variables(function)
        if model in _STAGE_XYZ:
            stage, builtin = _STAGE_XYZ[model]
            word0 = self._builtin_word(entry_point, builtin)
            word1 = self._packed_yz(entry_point, builtin)
        elif model in _STAGE_WORKGROUP:
            stage = _STAGE_WORKGROUP[model]
            word0 = self._workgroup_x(entry_point)
            word1 = self._packed_yz(entry_point, BuiltIn.WorkgroupId)
        else:
            stage, first, second = _STAGE_BUILTINS[model]
            word0 = self._builtin_word(entry_point, first)
            if stage is Stage.FRAGMENT:
                word1 = self._builtin_word(entry_point, first, component=1)
            elif second is None:
                word1 = builder.constant_uint(0)
            else:
                word1 = self._builtin_word(entry_point, second)
        info = builder.op(
            Op.CompositeConstruct, self.uvec3, builder.constant_uint(int(stage)), word0, word1
        )
        builder.op_void(Op.Store, self.variable, info)

    def _builtin_variable(self, entry_point: Instruction, builtin: int) -> int:
        builder = self.builder
        variable = self._builtins.get(builtin)
        if variable is None:
            uint = builder.type_int(32, False)
            if builtin == BuiltIn.FragCoord:
                pointee = builder.type_vector(builder.type_float(32), 4)
            elif builtin in _UVEC3_BUILTINS:
                pointee = builder.type_vector(uint, 3)
            else:
                pointee = uint
            pointer = builder.type_pointer(StorageClass.Input, pointee)
            variable = builder.variable(pointer, StorageClass.Input)
            builder.decorate(variable, Decoration.BuiltIn, builtin)
            self._builtins[builtin] = variable
        add_to_interface(entry_point, variable)
        return variable

    def _load_uint(self, variable: int, component: int | None) -> int:
        """Load a built-in (or one component of it) as a uint, bit for bit."""
        builder = self.builder
        pointer_type = self._type_of(variable)
        pointee = self._definition(pointer_type).operands[2]
        value = self._loaded.get(variable)
        if value is None:
            value = self._loaded[variable] = builder.op(Op.Load, pointee, variable)
        scalar_type = pointee
        if component is not None and self._definition(pointee).opcode == Op.TypeVector:
            scalar_type = self._definition(pointee).operands[1]
            value = builder.op(Op.CompositeExtract, scalar_type, value, component)
        uint = builder.type_int(32, False)
        if scalar_type != uint:
            value = builder.op(Op.Bitcast, uint, value)
        return value

    def _builtin_word(self, entry_point: Instruction, builtin: int, component: int = 0) -> int:
        return self._load_uint(self._builtin_variable(entry_point, builtin), component)

    def _packed_yz(self, entry_point: Instruction, builtin: int) -> int:
        """y | z << 16 of a uvec3 built-in (record.pack_compute_yz)."""
        builder = self.builder
        uint = builder.type_int(32, False)
        variable = self._builtin_variable(entry_point, builtin)
        y = self._load_uint(variable, 1)
        z = self._load_uint(variable, 2)
        mask = builder.constant_uint(COMPUTE_YZ_MASK)
        low = builder.op(Op.BitwiseAnd, uint, y, mask)
        high = builder.op(Op.BitwiseAnd, uint, z, mask)
        shifted = builder.op(
            Op.ShiftLeftLogical, uint, high, builder.constant_uint(COMPUTE_YZ_SHIFT)
        )
        return builder.op(Op.BitwiseOr, uint, low, shifted)

    def _workgroup_x(self, entry_point: Instruction) -> int:
        """WorkgroupId.x | LocalInvocationIndex << 22 (record.pack_workgroup_x)."""
        builder = self.builder
        uint = builder.type_int(32, False)
        x = self._builtin_word(entry_point, BuiltIn.WorkgroupId)
        local = self._builtin_word(entry_point, BuiltIn.LocalInvocationIndex)
        low = builder.op(Op.BitwiseAnd, uint, x, builder.constant_uint(WORKGROUP_X_MASK))
        high = builder.op(Op.BitwiseAnd, uint, local, builder.constant_uint(LOCAL_INDEX_MASK))
        shifted = builder.op(
            Op.ShiftLeftLogical, uint, high, builder.constant_uint(LOCAL_INDEX_SHIFT)
        )
        return builder.op(Op.BitwiseOr, uint, low, shifted)

    def _definition(self, id_: int) -> Instruction:
        def_use = self.builder.def_use
        if def_use is None:
            raise RuntimeError("StageWords needs a builder with def-use")
        return def_use.defs[id_]

    def _type_of(self, id_: int) -> int:
        type_id = self._definition(id_).type_id
        if type_id is None:
            raise RuntimeError(f"%{id_} has no type")
        return type_id
