"""Which Location/Component slots an interface type consumes (Vulkan "Location Assignment").

A slot is a (location, component) pair; a location holds four 32-bit components. The rules:
a scalar or vector of 32 bits or less takes one component per element (16-bit elements take
a whole component too); a 64-bit element takes two components, so a 64-bit vec3/vec4 spills
into a second location; a matrix takes one column vector per column, each starting a new
location; an array takes its element's slots once per element; a struct takes its members'
slots in order, each member starting a new location, unless the member carries its own
Location (block members), which then says where it starts.

Results are slot lists rather than counts so that overlap checks and the split pass share
one definition of where everything lives.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpuav.errors import UnsupportedShader
from gpuav.spirv.analysis.decorations import Decorations
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import Decoration, Op

Slot = tuple[int, int]  # (location, component)

_SCALARS = (Op.TypeInt, Op.TypeFloat, Op.TypeBool)

# Far beyond any device's interface (limits are at most a few hundred locations): a type
# reaching this is reported as uncountable rather than walked slot by slot.
MAX_LOCATIONS = 4096
# Vectors of up to 16 components exist (Vector16 capability).
MAX_COMPONENTS = 16
# Deeper nesting than this only comes from a malformed (cyclic) type graph.
MAX_DEPTH = 64


@dataclass(frozen=True)
class SlotLayout:
    """The slots a type consumes from a starting location, and the next free location."""

    slots: tuple[Slot, ...]
    end: int  # first location after the type (for the next struct member)

    @property
    def locations(self) -> int:
        return len({location for location, _ in self.slots})

    @property
    def components(self) -> int:
        return len(self.slots)


class LocationCounter:
    """Counts slots over a module's types; member Location decorations come from ``decorations``."""

    def __init__(self, types: Types, decorations: Decorations | None = None) -> None:
        self.types = types
        self.decorations = decorations

    def layout(self, type_id: int, location: int = 0, component: int = 0) -> SlotLayout:
        slots: list[Slot] = []
        end = self._occupy(type_id, location, component, slots.append, 0)
        return SlotLayout(tuple(slots), end)

    def locations(self, type_id: int) -> int:
        """Locations consumed from location 0 (the span, as GLSL counts attribute slots)."""
        return self.layout(type_id).end

    def _occupy(
        self, type_id: int, location: int, component: int, add: Callable[[Slot], None], depth: int
    ) -> int:
        if location > MAX_LOCATIONS or depth > MAX_DEPTH:
            raise UnsupportedShader(
                f"type %{type_id} reaches past location {MAX_LOCATIONS} or nests deeper than "
                f"{MAX_DEPTH} levels"
            )
        definition = self.types.definition(type_id)
        opcode = definition.opcode
        if opcode in _SCALARS or opcode == Op.TypeVector:
            count = self._count(type_id, self.types.component_count(type_id), MAX_COMPONENTS)
            width = self.types.width(self.types.scalar(type_id))
            words = count * (2 if width == 64 else 1)
            for index in range(component, component + words):
                add((location + index // 4, index % 4))
            return location + (component + words + 3) // 4
        if opcode == Op.TypeMatrix:
            column = self.types.element(type_id)
            for _ in range(self._count(type_id, self.types.component_count(type_id), 4)):
                location = self._occupy(column, location, 0, add, depth + 1)
            return location
        if opcode == Op.TypeArray:
            length = self.types.array_length(type_id)
            if length is None:
                raise UnsupportedShader(
                    f"array type %{type_id} has a specialization-constant length: "
                    "its location count is not known before specialization"
                )
            element = self.types.element(type_id)
            for _ in range(self._count(type_id, length, MAX_LOCATIONS)):
                location = self._occupy(element, location, component, add, depth + 1)
            return location
        if opcode == Op.TypeStruct:
            for member, member_type in enumerate(self.types.member_types(type_id)):
                own = self._member(type_id, member, Decoration.Location)
                if own is not None:
                    location = own
                member_component = self._member(type_id, member, Decoration.Component) or 0
                location = self._occupy(member_type, location, member_component, add, depth + 1)
            return location
        raise UnsupportedShader(f"{definition.name} %{type_id} cannot be an interface type")

    @staticmethod
    def _count(type_id: int, count: int, most: int) -> int:
        """A component, column or element count, refused past what any interface can hold
        (a corrupt count would otherwise make the slot list as long as the count)."""
        if count > most:
            raise UnsupportedShader(f"type %{type_id} has {count} parts, more than {most}")
        return count

    def _member(self, struct: int, member: int, decoration: int) -> int | None:
        if self.decorations is None:
            return None
        return self.decorations.member_value(struct, member, decoration)


def strip_arrays(types: Types, type_id: int) -> int:
    """The innermost non-array type (bounded: a cyclic array chain raises UnsupportedShader)."""
    for _ in range(MAX_DEPTH):
        if not types.is_array(type_id):
            return type_id
        type_id = types.element(type_id)
    raise UnsupportedShader(f"array type %{type_id} nests deeper than {MAX_DEPTH} levels")


def has_64_bit(types: Types, type_id: int) -> bool:
    """Whether a type is or contains a 64-bit scalar (transform-feedback alignment 8)."""
    definition = types.definition(type_id)
    if definition.opcode in _SCALARS:
        return definition.opcode != Op.TypeBool and types.width(type_id) == 64
    if definition.opcode in (Op.TypeVector, Op.TypeMatrix, Op.TypeArray, Op.TypeRuntimeArray):
        return has_64_bit(types, types.element(type_id))
    if definition.opcode == Op.TypeStruct:
        return any(has_64_bit(types, member) for member in types.member_types(type_id))
    return False
