"""Readable names for ids, as spirv-dis prints them by default.

One pass in module order: an ``OpName`` gives its target a name; otherwise types and
constants get a name built from what they are (``float``, ``v4float``,
``_ptr_Function_float``, ``_arr_float_uint_4``, ``uint_0``, ``float_0_5``, ``int_n1``,
``true``), and a variable decorated with a GLSL-visible BuiltIn gets the GLSL spelling
(``gl_GlobalInvocationID``). A type that refers to an id without a name yet uses that id's
number. Names are reduced to ``[A-Za-z0-9_]`` and made unique with ``_0``, ``_1``, ...
suffixes. Ids left without a name print as their number, which is also what ``--raw-id``
prints for every id.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from gpuav.spirv.disassembler_literals import NumericTypes, string_at
from gpuav.spirv.grammar import BuiltIn, Decoration, Op, enumerant_name
from gpuav.spirv.instruction import Instruction
from gpuav.spirv.module import Module

_NOT_IN_NAME: Final = re.compile(rb"[^A-Za-z0-9_]")

_INTEGER_ROOTS: Final = {8: "char", 16: "short", 32: "int", 64: "long"}
_FLOAT_NAMES: Final = {16: "half", 32: "float", 64: "double"}
# Types whose name does not depend on their operands.
_FIXED_NAMES: Final = {
    Op.TypeVoid: "void",
    Op.TypeBool: "bool",
    Op.TypeEvent: "Event",
    Op.TypeDeviceEvent: "DeviceEvent",
    Op.TypeReserveId: "ReserveId",
    Op.TypeQueue: "Queue",
    Op.TypePipeStorage: "PipeStorage",
    Op.TypeNamedBarrier: "NamedBarrier",
}

# The names spirv-dis gives to BuiltIn-decorated ids (observed from its output; an OpName
# takes precedence since it comes first). Keys are our grammar's canonical spellings.
_BUILT_IN_NAMES: Final = {
    getattr(BuiltIn, key): name
    for key, name in {
        "Position": "gl_Position",
        "PointSize": "gl_PointSize",
        "ClipDistance": "gl_ClipDistance",
        "CullDistance": "gl_CullDistance",
        "VertexId": "gl_VertexID",
        "InstanceId": "gl_InstanceID",
        "PrimitiveId": "gl_PrimitiveID",
        "InvocationId": "gl_InvocationID",
        "Layer": "gl_Layer",
        "ViewportIndex": "gl_ViewportIndex",
        "TessLevelOuter": "gl_TessLevelOuter",
        "TessLevelInner": "gl_TessLevelInner",
        "TessCoord": "gl_TessCoord",
        "PatchVertices": "gl_PatchVertices",
        "FragCoord": "gl_FragCoord",
        "PointCoord": "gl_PointCoord",
        "FrontFacing": "gl_FrontFacing",
        "SampleId": "gl_SampleID",
        "SamplePosition": "gl_SamplePosition",
        "SampleMask": "gl_SampleMask",
        "FragDepth": "gl_FragDepth",
        "HelperInvocation": "gl_HelperInvocation",
        "NumWorkgroups": "gl_NumWorkGroups",
        "WorkgroupSize": "gl_WorkGroupSize",
        "WorkgroupId": "gl_WorkGroupID",
        "LocalInvocationId": "gl_LocalInvocationID",
        "GlobalInvocationId": "gl_GlobalInvocationID",
        "LocalInvocationIndex": "gl_LocalInvocationIndex",
        "VertexIndex": "gl_VertexIndex",
        "InstanceIndex": "gl_InstanceIndex",
        "BaseInstance": "gl_BaseInstance",
        "WorkDim": "WorkDim",
        "GlobalSize": "GlobalSize",
        "EnqueuedWorkgroupSize": "EnqueuedWorkgroupSize",
        "GlobalOffset": "GlobalOffset",
        "GlobalLinearId": "GlobalLinearId",
        "SubgroupSize": "SubgroupSize",
        "SubgroupMaxSize": "SubgroupMaxSize",
        "NumSubgroups": "NumSubgroups",
        "NumEnqueuedSubgroups": "NumEnqueuedSubgroups",
        "SubgroupId": "SubgroupId",
        "SubgroupLocalInvocationId": "SubgroupLocalInvocationId",
        "SubgroupEqMask": "SubgroupEqMaskKHR",
        "SubgroupGeMask": "SubgroupGeMaskKHR",
        "SubgroupGtMask": "SubgroupGtMaskKHR",
        "SubgroupLeMask": "SubgroupLeMaskKHR",
        "SubgroupLtMask": "SubgroupLtMaskKHR",
    }.items()
}


def sanitize(raw: bytes) -> str:
    """Every byte outside ``[A-Za-z0-9_]`` (each byte of a multi-byte character too) -> '_'."""
    return _NOT_IN_NAME.sub(b"_", raw).decode("ascii") if raw else "_"


def friendly_names(module: Module) -> dict[int, str]:
    """id -> name for every id spirv-dis would name; the rest print as numbers."""
    namer = _Namer()
    for instruction in module.instructions():
        namer.note(instruction)
    return namer.names


class _Namer:
    def __init__(self) -> None:
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.numeric = NumericTypes()
        self.rules: dict[int, Callable[[list[int]], None]] = {
            Op.Name: self.op_name,
            Op.TypeInt: self.type_int,
            Op.TypeFloat: self.type_float,
            Op.TypeVector: lambda o: self.save(o[0], f"v{o[2]}{self.name(o[1])}"),
            Op.TypeMatrix: lambda o: self.save(o[0], f"mat{o[2]}{self.name(o[1])}"),
            Op.TypeArray: lambda o: self.save(o[0], f"_arr_{self.name(o[1])}_{self.name(o[2])}"),
            Op.TypeRuntimeArray: lambda o: self.save(o[0], f"_runtimearr_{self.name(o[1])}"),
            Op.TypePointer: self.type_pointer,
            Op.TypeStruct: lambda o: self.save(o[0], f"_struct_{o[0]}"),
            Op.TypePipe: lambda o: self.save(
                o[0], f"Pipe{enumerant_name('AccessQualifier', o[1])}"
            ),
            Op.TypeOpaque: self.type_opaque,
            Op.ConstantTrue: lambda o: self.save(o[1], "true"),
            Op.ConstantFalse: lambda o: self.save(o[1], "false"),
            Op.Constant: self.constant,
            Op.Decorate: self.decorate,
        }

    def note(self, instruction: Instruction) -> None:
        opcode = instruction.opcode
        fixed = _FIXED_NAMES.get(opcode)
        if fixed is not None:
            self.save(instruction.operands[0], fixed)
            return
        rule = self.rules.get(opcode)
        if rule is not None:
            rule(instruction.operands)

    def name(self, id_: int) -> str:
        return self.names.get(id_) or str(id_)

    def save(self, id_: int, suggested: str) -> None:
        """The first name an id is given sticks; a taken name gets the first free suffix."""
        if id_ in self.names:
            return
        base = sanitize(suggested.encode("utf-8", errors="surrogateescape"))
        name = base
        suffix = 0
        while name in self.used:
            name = f"{base}_{suffix}"
            suffix += 1
        self.used.add(name)
        self.names[id_] = name

    def op_name(self, operands: list[int]) -> None:
        self.save(operands[0], string_at(operands, 1)[0])

    def decorate(self, operands: list[int]) -> None:
        if operands[1] == Decoration.BuiltIn:
            name = _BUILT_IN_NAMES.get(operands[2])
            if name is not None:
                self.save(operands[0], name)

    def type_int(self, operands: list[int]) -> None:
        result, width, signedness = operands[0], operands[1], operands[2]
        self.numeric.note_integer(result, width, signedness)
        root = _INTEGER_ROOTS.get(width)
        if root is None:
            self.save(result, f"{'i' if signedness else 'u'}{width}")
        else:
            self.save(result, root if signedness else f"u{root}")

    def type_float(self, operands: list[int]) -> None:
        result, width = operands[0], operands[1]
        self.numeric.note_float(result, width)
        self.save(result, _FLOAT_NAMES.get(width, f"fp{width}"))

    def type_pointer(self, operands: list[int]) -> None:
        storage = enumerant_name("StorageClass", operands[1])
        self.save(operands[0], f"_ptr_{storage}_{self.name(operands[2])}")

    def type_opaque(self, operands: list[int]) -> None:
        raw = string_at(operands, 1)[0].encode("utf-8", errors="surrogateescape")
        self.save(operands[0], f"Opaque_{sanitize(raw)}")

    def constant(self, operands: list[int]) -> None:
        value = self.numeric.format(operands[0], operands[2:]).replace("-", "n")
        self.save(operands[1], f"{self.name(operands[0])}_{value}")
