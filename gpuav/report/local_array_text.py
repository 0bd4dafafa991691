"""What a local-array record means to a person: which variable, which of its indices, how far.

The record gives the failing index's level in the access chain, its value and the length it
was compared with. The original shader, walked back from the instruction the record names
with the pass's own ``trace_local_pointer``, gives the rest: the variable (or parameter) and
its name, its type and storage class, and the path from it to the array, vector or matrix
that was indexed, e.g. "Index 3 out of bounds of `grid[_]` (float[3]) in local array `grid`
(float[2][3], Function storage)".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from weakref import WeakKeyDictionary

from gpuav.instrument import record as layout
from gpuav.instrument.consumers import POINTER_OPERANDS
from gpuav.instrument.local_arrays import (
    DYNAMIC_VECTOR_OPS,
    VECTOR_OPERAND,
    UnknownLocalPointer,
    trace_local_pointer,
)
from gpuav.instrument.record import ErrorRecord
from gpuav.report.shader_info import ShaderInfo
from gpuav.spirv.analysis.types import Types
from gpuav.spirv.grammar import OPCODE_NAMES, RESULT_INDEX, Op, StorageClass
from gpuav.spirv.instruction import Instruction

MESSAGE_ID = "GPUAV-local-array-index-out-of-bounds"
# What GLSL calls memory of each storage class.
_STORAGE_WORDS = {
    StorageClass.Function: "local",
    StorageClass.Private: "private",
    StorageClass.Workgroup: "shared",
    StorageClass.TaskPayloadWorkgroupEXT: "task payload",
    StorageClass.RayPayloadKHR: "ray payload",
    StorageClass.IncomingRayPayloadKHR: "incoming ray payload",
    StorageClass.HitAttributeKHR: "hit attribute",
    StorageClass.CallableDataKHR: "callable data",
    StorageClass.IncomingCallableDataKHR: "incoming callable data",
}
_STORAGE_NAMES = {
    StorageClass.Function: "Function",
    StorageClass.Private: "Private",
    StorageClass.Workgroup: "Workgroup",
    StorageClass.TaskPayloadWorkgroupEXT: "TaskPayloadWorkgroupEXT",
    StorageClass.RayPayloadKHR: "RayPayloadKHR",
    StorageClass.IncomingRayPayloadKHR: "IncomingRayPayloadKHR",
    StorageClass.HitAttributeKHR: "HitAttributeKHR",
    StorageClass.CallableDataKHR: "CallableDataKHR",
    StorageClass.IncomingCallableDataKHR: "IncomingCallableDataKHR",
}
_KINDS = {Op.TypeArray: "array", Op.TypeVector: "vector", Op.TypeMatrix: "matrix"}
_VECTOR_PREFIXES = {
    (Op.TypeFloat, 32, 0): "",
    (Op.TypeFloat, 64, 0): "d",
    (Op.TypeFloat, 16, 0): "f16",
    (Op.TypeInt, 32, 1): "i",
    (Op.TypeInt, 32, 0): "u",
    (Op.TypeBool, 0, 0): "b",
}
# What a skipped access did instead, by the access's word.
_SKIPPED = {
    "read": "The read was skipped: it gave zero.",
    "write": "The write was skipped.",
    "atomic": "The atomic was skipped: it changed nothing and gave zero.",
    "copy": "The copy was skipped.",
    "component read": "The component read was skipped: it gave zero.",
    "component write": "The component write was skipped: the vector kept its value.",
}
_ACCESS_WORDS = {
    Op.Load: "read",
    Op.Store: "write",
    Op.CopyMemory: "copy",
    Op.CopyMemorySized: "copy",
    Op.VectorExtractDynamic: "component read",
    Op.VectorInsertDynamic: "component write",
}


@dataclass(frozen=True)
class LocalFacts:
    """The numbers of one local-array record."""

    level: int
    source_pointer: bool  # the index is in the source pointer of a memory copy
    index: int  # signed where the index's type is; the low 32 bits when it did not fit
    fits: bool  # the index fit in 32 bits
    length: int

    @classmethod
    def of(cls, record: ErrorRecord) -> LocalFacts:
        where = record.descriptor_index
        # A record built by hand may lack words; decoded ones never do.
        index, length = (*record.details, 0, 0)[:2]
        if where & layout.LOCAL_SIGNED and index >= 1 << 31:
            index -= 1 << 32
        return cls(
            where & layout.LOCAL_LEVEL_MASK,
            bool(where & layout.LOCAL_SOURCE_POINTER),
            index,
            not where & layout.LOCAL_WIDE,
            length,
        )


@dataclass(frozen=True)
class IndexedPlace:
    """What the failing index selected in, as the original shader says."""

    kind: str  # "array", "vector" or "matrix"
    path: str  # the expression up to the indexed container ("grid[1]", "s.items"; "" for a value)
    type_name: str  # the container's type, e.g. "float[3]"
    root_name: str | None  # the variable's (or parameter's) name
    root_kind: str  # "variable", "parameter", "pointer" or "value"
    root_type: str
    storage_class: int | None  # None for a vector value (OpVectorExtractDynamic)
    constant_copy: bool  # glslang's Function copy of a constant array ("indexable")
    outermost: bool  # the index is the first of the chain: it selects in the root itself
    root_noun: str  # "array", "vector", "matrix" or "variable" (a struct, a scalar)

    @property
    def storage_name(self) -> str | None:
        if self.storage_class is None:
            return None
        return _STORAGE_NAMES.get(self.storage_class, str(self.storage_class))


def access_word(info: ShaderInfo | None, index: int) -> str:
    if info is None or not 0 <= index < len(info.instructions):
        return "access"
    opcode = info.instructions[index].opcode
    if OPCODE_NAMES.get(opcode, "").startswith("OpAtomic"):
        return "atomic"
    return _ACCESS_WORDS.get(opcode, "access")


def indexed_place(info: ShaderInfo | None, record: ErrorRecord) -> IndexedPlace | None:
    """The container and root the record's index selected in, or None when the record does
    not fit the shader (another module, a corrupt record)."""
    if info is None or info.module is None:
        return None
    index = record.instruction_index
    if not 0 <= index < len(info.instructions):
        return None
    facts = LocalFacts.of(record)
    analysis = _analysis(info)
    instruction = info.instructions[index]
    try:
        if instruction.opcode in DYNAMIC_VECTOR_OPS:
            return _vector_value(analysis, instruction)
        return _memory_place(analysis, instruction, facts)
    except (UnknownLocalPointer, LookupError, ValueError):
        return None


@dataclass(frozen=True)
class LocalMessage:
    """The parts of a local-array message that differ from other errors'."""

    problem: str  # the first sentence
    lines: list[str]  # detail lines, after the source line
    error_fields: dict[str, Any]  # for the JSON report's "error" object


def local_message(record: ErrorRecord, info: ShaderInfo | None) -> LocalMessage:
    facts = LocalFacts.of(record)
    place = indexed_place(info, record)
    access = access_word(info, record.instruction_index)
    return LocalMessage(
        local_text(facts, place),
        local_details(facts, place, access),
        local_error_fields(facts, place, access),
    )


def local_text(facts: LocalFacts, place: IndexedPlace | None) -> str:
    """The message's first sentence."""
    if not facts.fits:
        index = f"64-bit index past the 32-bit range (low word {facts.index & 0xFFFF_FFFF})"
    elif facts.index == facts.length:
        index = f"Index {facts.index} (one past the end)"
    else:
        index = f"Index {facts.index}"
    if place is None:
        length = facts.length
        return f"{index} out of bounds of a local array, vector or matrix of length {length}."
    return f"{index} out of bounds of {_subject(place)}."


def local_details(facts: LocalFacts, place: IndexedPlace | None, access: str) -> list[str]:
    """The lines after the first: the length, and what was done instead of the access."""
    lines = []
    if place is not None:
        lines.append(
            f"The {place.kind} has length {facts.length}; indices run from 0 to {facts.length - 1}."
            if facts.length
            else f"The {place.kind} has length 0."
        )
    skipped = _SKIPPED.get(access)
    if skipped is not None:
        lines.append(skipped)
    return lines


def local_error_fields(
    facts: LocalFacts, place: IndexedPlace | None, access: str
) -> dict[str, Any]:
    """Facts for the JSON report's "error" object."""
    return {
        "array_length": facts.length,
        "index": facts.index,
        "index_fits_32_bits": facts.fits,
        "level": facts.level,
        "access": access,
        "indexed": None
        if place is None
        else {
            "kind": place.kind,
            "path": place.path or None,
            "type": place.type_name,
            "root": place.root_name,
            "root_kind": place.root_kind,
            "root_type": place.root_type,
            "storage_class": place.storage_name,
        },
    }


def _subject(place: IndexedPlace) -> str:
    """E.g. "local array `weights` (float[8], Function storage)", or for an inner level
    "`grid[_]` (float[3]) in local array `grid` (float[2][3], Function storage)"."""
    if place.storage_class is None:
        return f"a {place.type_name} value"
    word = _STORAGE_WORDS.get(place.storage_class, "local")
    storage = f"{place.storage_name} storage"
    if place.constant_copy:
        storage += ", glslang's copy of a constant array"
    name = f"`{place.root_name}`" if place.root_name else "(unnamed)"
    described = f"({place.root_type}, {storage})"
    if place.root_kind == "parameter":
        root = f"function parameter {name} {described}"
    elif place.root_kind == "pointer":
        root = f"a {word} pointer {described}"
    elif place.outermost:
        return f"{word} {place.kind} {name} {described}"
    else:
        root = f"{word} {place.root_noun} {name} {described}"
    if place.outermost:
        return root
    return f"`{place.path}` ({place.type_name}) in {root}"


# -- walking the original shader ------------------------------------------------------------


@dataclass
class _Analysis:
    types: Types
    names: dict[int, str]
    member_names: dict[tuple[int, int], str]


_analyses: WeakKeyDictionary[ShaderInfo, _Analysis] = WeakKeyDictionary()


def _analysis(info: ShaderInfo) -> _Analysis:
    """Definitions and names of the whole shader, built once per shader that has an error."""
    found = _analyses.get(info)
    if found is not None:
        return found
    defs: dict[int, Instruction] = {}
    names: dict[int, str] = {}
    member_names: dict[tuple[int, int], str] = {}
    for instruction in info.instructions:
        at = RESULT_INDEX.get(instruction.opcode)
        if at is not None:
            defs[instruction.operands[at]] = instruction
        elif instruction.opcode == Op.Name:
            names[instruction.operands[0]] = instruction.string(1)
        elif instruction.opcode == Op.MemberName:
            member_names[(instruction.operands[0], instruction.operands[1])] = instruction.string(2)
    found = _analyses[info] = _Analysis(Types(defs), names, member_names)
    return found


def _memory_place(
    analysis: _Analysis, instruction: Instruction, facts: LocalFacts
) -> IndexedPlace | None:
    positions = POINTER_OPERANDS.get(instruction.opcode)
    if positions is None:
        return None
    which = 1 if facts.source_pointer else 0
    if which >= len(positions):
        return None
    types = analysis.types
    path = trace_local_pointer(types, instruction.operands[positions[which]])
    if facts.level >= len(path.indices):
        return None
    container = path.containers[facts.level]
    root = types.defs.get(path.root)
    root_name = analysis.names.get(path.root) or None
    kind = _KINDS.get(types.opcode(container), "array")
    if root is not None and root.opcode == Op.Variable:
        root_kind = "variable"
    elif root is not None and root.opcode == Op.FunctionParameter:
        root_kind = "parameter"
    else:
        root_kind = "pointer"
    expression = root_name or f"%{path.root}"
    for index, step_container in zip(
        path.indices[: facts.level], path.containers[: facts.level], strict=True
    ):
        expression += _step_text(analysis, step_container, index)
    lengths = {container: facts.length}
    constant_copy = (
        root is not None
        and root.opcode == Op.Variable
        and len(root.operands) > 3
        and root_name == "indexable"
    )
    return IndexedPlace(
        kind,
        expression,
        type_name(analysis, container, lengths),
        root_name,
        root_kind,
        type_name(analysis, path.root_type, lengths),
        path.storage_class,
        constant_copy,
        facts.level == 0,
        _KINDS.get(types.opcode(path.root_type), "variable"),
    )


def _vector_value(analysis: _Analysis, instruction: Instruction) -> IndexedPlace:
    vector_type = analysis.types.type_of(instruction.operands[VECTOR_OPERAND])
    if vector_type is None:
        raise LookupError("a vector without a type")
    name = type_name(analysis, vector_type, {})
    return IndexedPlace("vector", "", name, None, "value", name, None, False, True, "vector")


def _step_text(analysis: _Analysis, container: int, index: int) -> str:
    types = analysis.types
    if types.opcode(container) == Op.TypeStruct:
        member = types.constant_value(index) or 0
        return "." + analysis.member_names.get((container, member), f"member{member}")
    value = types.constant_value(index)
    return f"[{value}]" if value is not None else "[_]"


def type_name(analysis: _Analysis, type_id: int, lengths: dict[int, int]) -> str:
    """The type in GLSL's spelling: float[8][4], vec4, mat3x4, a struct's name."""
    types = analysis.types
    definition = types.definition(type_id)
    opcode = definition.opcode
    if opcode == Op.TypeArray:
        dimensions = ""
        while types.opcode(type_id) == Op.TypeArray and len(dimensions) < 256:
            length = lengths.get(type_id)
            if length is None:
                length_id = types.definition(type_id).operands[2]
                value = types.constant_value(length_id)
                text = str(value) if value is not None else analysis.names.get(length_id, "?")
            else:
                text = str(length)
            dimensions += f"[{text}]"
            type_id = types.element(type_id)
        return type_name(analysis, type_id, lengths) + dimensions
    if opcode == Op.TypeRuntimeArray:
        return type_name(analysis, types.element(type_id), lengths) + "[]"
    if opcode in (Op.TypeVector, Op.TypeMatrix):
        count = types.component_count(type_id)
        scalar = types.scalar(type_id)
        prefix = _VECTOR_PREFIXES.get(_scalar_key(types, scalar))
        if prefix is None:
            prefix = _scalar_name(types, scalar)
        if opcode == Op.TypeVector:
            return f"{prefix}vec{count}"
        rows = types.component_count(types.element(type_id))
        return f"{prefix}mat{count}" + (f"x{rows}" if rows != count else "")
    if opcode == Op.TypeStruct:
        return analysis.names.get(type_id) or "struct"
    if opcode in (Op.TypeInt, Op.TypeFloat, Op.TypeBool):
        return _scalar_name(types, type_id)
    return OPCODE_NAMES.get(opcode, "type").removeprefix("OpType").lower()


def _scalar_key(types: Types, scalar: int) -> tuple[int, int, int]:
    definition = types.definition(scalar)
    if definition.opcode == Op.TypeBool:
        return (Op.TypeBool, 0, 0)
    signed = definition.operands[2] if definition.opcode == Op.TypeInt else 0
    return (definition.opcode, definition.operands[1], signed)


def _scalar_name(types: Types, scalar: int) -> str:
    definition = types.definition(scalar)
    if definition.opcode == Op.TypeBool:
        return "bool"
    width = definition.operands[1]
    if definition.opcode == Op.TypeFloat:
        return {32: "float", 64: "double"}.get(width, f"float{width}_t")
    unsigned = "" if definition.operands[2] else "u"
    return f"{unsigned}int" if width == 32 else f"{unsigned}int{width}_t"
