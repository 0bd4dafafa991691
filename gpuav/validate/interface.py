"""Interface analysis: every Input/Output variable of every entry point and the slots it takes.

Per-vertex arrays (tessellation control inputs and outputs, tessellation evaluation and
geometry inputs, mesh outputs, fragment PerVertexKHR inputs) are counted without their outer
array level, as Vulkan's location rules say; Patch variables live in a location space of their
own; built-ins take no locations and are listed apart. The diagnostics over this table are in
``interface_rules``; transform feedback in ``transform_feedback``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuav.errors import UnsupportedShader
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import Decoration, ExecutionModel, Op, StorageClass, enumerant_name
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.module import Module
from gpuav.validate.interface_locations import LocationCounter, Slot, strip_arrays

# Decorations shown in the table's xfb column, in this order.
XFB_DECORATIONS = (Decoration.XfbBuffer, Decoration.XfbStride, Decoration.Offset, Decoration.Stream)


@dataclass(frozen=True)
class InterfaceMember:
    """A top-level member of a struct-typed interface variable, for the table."""

    index: int
    name: str
    location: int
    component: int | None
    locations_used: int
    components_used: int
    xfb: dict[str, int]


@dataclass(frozen=True)
class InterfaceVariable:
    """One user-defined (or built-in) Input/Output variable as seen by one entry point."""

    variable: int
    name: str
    storage_class: int
    type_id: int  # the pointee, without the per-vertex array level
    location: int | None
    component: int | None
    patch: bool
    per_vertex: bool
    builtin: bool
    slots: tuple[Slot, ...]
    # Block members that carry no Location while the variable has none either (04919).
    members_without_location: tuple[int, ...] = ()
    # Block members carrying a Location while the variable has one too (04918).
    members_with_location: tuple[int, ...] = ()
    xfb: dict[str, int] = field(default_factory=dict)
    index: int = 0  # the fragment output Index (dual-source blending)
    instruction_index: int | None = None
    # The Component VUID broken by a scalar/vector that does not fit after its Component.
    component_rule: str | None = None
    members: tuple[InterfaceMember, ...] = ()
    # Set when the slots could not be counted (a specialization-constant array length).
    uncounted: str | None = None

    @property
    def locations_used(self) -> int:
        return len({location for location, _ in self.slots})

    @property
    def components_used(self) -> int:
        return len(self.slots)

    @property
    def missing_location(self) -> bool:
        return not self.builtin and self.location is None and not self._block_members_located

    @property
    def _block_members_located(self) -> bool:
        return self.slots != () and not self.members_without_location


@dataclass(frozen=True)
class EntryPointInterface:
    name: str
    execution_model: int
    function: int
    variables: tuple[InterfaceVariable, ...]
    instruction_index: int | None

    @property
    def model_name(self) -> str:
        return enumerant_name("ExecutionModel", self.execution_model) or str(self.execution_model)

    def user(self, storage_class: int) -> list[InterfaceVariable]:
        return [
            variable
            for variable in self.variables
            if variable.storage_class == storage_class and not variable.builtin
        ]


def per_vertex_arrayed(model: int, storage_class: int, patch: bool, per_vertex_khr: bool) -> bool:
    """Whether the variable's outermost array is the per-vertex level that Vulkan does not count."""
    if patch:
        return False
    if model == ExecutionModel.TessellationControl:
        return storage_class in (StorageClass.Input, StorageClass.Output)
    if model in (ExecutionModel.TessellationEvaluation, ExecutionModel.Geometry):
        return storage_class == StorageClass.Input
    if model in (ExecutionModel.MeshEXT, ExecutionModel.MeshNV):
        return storage_class == StorageClass.Output
    if model == ExecutionModel.Fragment:
        return storage_class == StorageClass.Input and per_vertex_khr
    return False


def debug_names(module: Module) -> dict[int, str]:
    return {
        instruction.operands[0]: instruction.string(1)
        for instruction in module.debug_names
        if instruction.opcode == Op.Name
    }


def member_names(module: Module) -> dict[tuple[int, int], str]:
    return {
        (instruction.operands[0], instruction.operands[1]): instruction.string(2)
        for instruction in module.debug_names
        if instruction.opcode == Op.MemberName
    }


class InterfaceAnalysis:
    """Builds the per-entry-point tables for a module (types and decorations shared)."""

    def __init__(self, module: Module, types: Types, decorations: Decorations) -> None:
        self.module = module
        self.types = types
        self.decorations = decorations
        self.counter = LocationCounter(types, decorations)
        self.names = debug_names(module)
        self.member_names = member_names(module)
        self.globals = {
            instruction.operands[1]: instruction
            for instruction in module.globals
            if instruction.opcode == Op.Variable
        }

    def entry_points(self) -> list[EntryPointInterface]:
        return [self.entry_point(instruction) for instruction in self.module.entry_points]

    def entry_point(self, instruction: Instruction) -> EntryPointInterface:
        model, function = instruction.operands[0], instruction.operands[1]
        name, after_name = decode_string(instruction.operands, 2)
        variables = []
        for interface_id in instruction.operands[after_name:]:
            variable = self.globals.get(interface_id)
            if variable is None or variable.operands[2] not in (
                StorageClass.Input,
                StorageClass.Output,
            ):
                continue  # SPIR-V 1.4+ lists every global; only Input/Output have locations
            variables.append(self.variable(model, variable))
        return EntryPointInterface(name, model, function, tuple(variables), instruction.origin)

    def variable(self, model: int, instruction: Instruction) -> InterfaceVariable:
        variable_id, storage_class = instruction.operands[1], instruction.operands[2]
        pointee = self.types.pointee(instruction.operands[0])
        decorations = self.decorations
        innermost = strip_arrays(self.types, pointee)
        is_struct = self.types.opcode(innermost) == Op.TypeStruct
        member_count = len(self.types.member_types(innermost)) if is_struct else 0
        patch = decorations.has(variable_id, Decoration.Patch) or any(
            decorations.member_has(innermost, member, Decoration.Patch)
            for member in range(member_count)
        )
        per_vertex = per_vertex_arrayed(
            model,
            storage_class,
            patch,
            decorations.has(variable_id, Decoration.PerVertexKHR),
        )
        type_id = pointee
        if per_vertex and self.types.is_array(pointee):
            type_id = self.types.element(pointee)
        builtin = decorations.has(variable_id, Decoration.BuiltIn) or any(
            decorations.member_has(innermost, member, Decoration.BuiltIn)
            for member in range(member_count)
        )
        location = decorations.location(variable_id)
        component = decorations.value(variable_id, Decoration.Component)
        xfb = {
            enumerant_name("Decoration", decoration) or str(decoration): value
            for decoration in XFB_DECORATIONS
            if (value := decorations.value(variable_id, decoration)) is not None
        }
        base = InterfaceVariable(
            variable=variable_id,
            # An anonymous block (glslang names it "") goes by its block type's name.
            name=self.names.get(variable_id) or self.names.get(innermost, ""),
            storage_class=storage_class,
            type_id=type_id,
            location=location,
            component=component,
            patch=patch,
            per_vertex=per_vertex,
            builtin=builtin,
            slots=(),
            xfb=xfb,
            index=decorations.value(variable_id, Decoration.Index) or 0,
            instruction_index=instruction.origin,
        )
        if builtin:
            return base
        located = (
            []
            if not is_struct
            else [
                member
                for member in range(member_count)
                if decorations.member_value(innermost, member, Decoration.Location) is not None
            ]
        )
        unlocated: tuple[int, ...] = ()
        if location is None and is_struct and type_id == innermost and located:
            unlocated = tuple(m for m in range(member_count) if m not in located)
        try:
            if location is not None:
                slots = self.counter.layout(type_id, location, component or 0).slots
            elif is_struct and type_id == innermost and located and not unlocated:
                slots = self.counter.layout(type_id, 0).slots  # members say where
            else:
                slots = ()
        except UnsupportedShader as reason:
            return replace(base, uncounted=str(reason))
        return replace(
            base,
            slots=slots,
            component_rule=self._component_rule(type_id, component),
            members=self._members(type_id, location) if slots and is_struct else (),
            members_without_location=unlocated,
            members_with_location=tuple(located) if location is not None else (),
        )

    def _members(self, struct: int, location: int | None) -> tuple[InterfaceMember, ...]:
        if self.types.opcode(struct) != Op.TypeStruct:
            return ()
        value = self.decorations.member_value
        members = []
        cursor = location or 0
        for index, member_type in enumerate(self.types.member_types(struct)):
            own = value(struct, index, Decoration.Location)
            cursor = cursor if own is None else own
            component = value(struct, index, Decoration.Component)
            layout = self.counter.layout(member_type, cursor, component or 0)
            xfb = {
                enumerant_name("Decoration", decoration) or str(decoration): found
                for decoration in XFB_DECORATIONS
                if (found := value(struct, index, decoration)) is not None
            }
            name = self.member_names.get((struct, index), str(index))
            members.append(
                InterfaceMember(
                    index, name, cursor, component, layout.locations, layout.components, xfb
                )
            )
            cursor = layout.end
        return tuple(members)

    def _component_rule(self, type_id: int, component: int | None) -> str | None:
        """The Component VUID a scalar/vector (or array of them) breaks, if any."""
        element = strip_arrays(self.types, type_id)
        if component is None or self.types.opcode(element) not in (
            Op.TypeInt,
            Op.TypeFloat,
            Op.TypeVector,
        ):
            return None
        count = self.types.component_count(element)
        if self.types.width(self.types.scalar(element)) != 64:
            return "VUID-StandaloneSpirv-Component-04921" if component + count > 4 else None
        if count > 2:
            return "VUID-StandaloneSpirv-Component-07703"
        if component in (1, 3):
            return "VUID-StandaloneSpirv-Component-04923"
        return "VUID-StandaloneSpirv-Component-04922" if component + 2 * count > 4 else None


def analyze_interfaces(module: Module) -> list[EntryPointInterface]:
    """The interface tables of every entry point of ``module``."""
    from gpuav.spirv.analysis.def_use import DefUse

    types = Types(DefUse(module).defs)
    return InterfaceAnalysis(module, types, Decorations(module)).entry_points()
