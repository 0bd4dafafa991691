"""Rule family: every opcode and enumerant exists in the module's SPIR-V version, or one of the
SPIR-V extensions that add it is declared.

The SPIR-V grammar gives each instruction and enumerant (capability, storage class, built-in,
decoration, execution mode, ...) the version that introduced it and the extensions that
provide it earlier (grammar_tables.py keeps both): ``DrawParameters`` is SPIR-V 1.3 or
SPV_KHR_shader_draw_parameters, ``ShaderLayer`` SPIR-V 1.5 only. A module that uses one
without either is not valid SPIR-V (VkShaderModuleCreateInfo's "valid SPIR-V code").
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from gpuav.spirv.grammar import INSTRUCTIONS, OPERAND_KINDS, Op
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.spirv.operand_walker import OperandError, WalkContext, walk_operands
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic

RULE = "VUID-VkShaderModuleCreateInfo-pCode-08736"
_ENUM_CATEGORIES = ("ValueEnum", "BitEnum")
# The grammar's version of what only extensions provide.
_NO_VERSION = "None"


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    module = context.module
    version = module.version_tuple
    declared = _declared_extensions(module.extensions)
    walk_context = WalkContext(bound=module.bound)
    for instruction in module.instructions():
        opcode = instruction.opcode
        info = INSTRUCTIONS.get(opcode)
        if info is None:
            continue
        missing = _requirement(info[5], _enabling(info[4], info[3]), version, declared)
        if missing is not None:
            yield Diagnostic(RULE, f"{info[0]} {missing}", instruction.origin)
        if opcode in _opcodes_with_enumerants():
            yield from _enumerants(instruction, walk_context, version, declared)


def _enumerants(
    instruction: Instruction,
    walk_context: WalkContext,
    version: tuple[int, int],
    declared: frozenset[str],
) -> Iterator[Diagnostic]:
    used: list[tuple[str, int]] = []

    def visit(kind: str, first: int, _words: int) -> None:
        category, enumerants = OPERAND_KINDS.get(kind, ("", None))
        if category not in _ENUM_CATEGORIES or not isinstance(enumerants, dict):
            return
        word = instruction.operands[first]
        if category == "ValueEnum":
            used.append((kind, word))
        else:
            used.extend((kind, bit) for bit in _bits(word))

    try:
        walk_operands(instruction.opcode, instruction.operands, walk_context, visit)
    except (OperandError, IndexError, KeyError):
        return  # the reader checks operand shapes; this family only looks at known ones
    for kind, value in used:
        enumerants = OPERAND_KINDS[kind][1]
        assert isinstance(enumerants, dict)
        entry = enumerants.get(value)
        if entry is None:
            continue
        missing = _requirement(entry[4], _enabling(entry[3], entry[2]), version, declared)
        if missing is not None:
            yield Diagnostic(RULE, f"{kind} {entry[0]} {missing}", instruction.origin)


def _requirement(
    introduced: str, extensions: tuple[str, ...], version: tuple[int, int], declared: frozenset[str]
) -> str | None:
    """Why the module may not use it, or None when it may."""
    if introduced == _NO_VERSION:
        if not extensions or declared.intersection(extensions):
            return None  # reserved enumerants carry neither: nothing to check
        return f"needs one of the SPIR-V extensions {', '.join(extensions)}; none is declared"
    major, _, minor = introduced.partition(".")
    if version >= (int(major), int(minor)) or declared.intersection(extensions):
        return None
    have = f"the module is SPIR-V {version[0]}.{version[1]}"
    if not extensions:
        return f"needs SPIR-V {introduced} ({have})"
    return (
        f"needs SPIR-V {introduced} or one of the SPIR-V extensions {', '.join(extensions)} "
        f"({have} and declares none of them)"
    )


def _enabling(extensions: tuple[str, ...], capabilities: tuple[str, ...]) -> tuple[str, ...]:
    """The extensions that allow an opcode or enumerant before its version: its own, and
    those of the capabilities it needs (OpDemoteToHelperInvocation lists none itself; its
    capability lists SPV_EXT_demote_to_helper_invocation)."""
    return tuple(dict.fromkeys([*extensions, *_capability_extensions(capabilities)]))


def _capability_extensions(capabilities: tuple[str, ...]) -> list[str]:
    enumerants = OPERAND_KINDS["Capability"][1]
    assert isinstance(enumerants, dict)
    by_name = _capabilities_by_name()
    found: list[str] = []
    for name in capabilities:
        entry = enumerants.get(by_name.get(name, -1))
        if entry is not None:
            found.extend(entry[3])
    return found


@functools.cache
def _capabilities_by_name() -> dict[str, int]:
    enumerants = OPERAND_KINDS["Capability"][1]
    assert isinstance(enumerants, dict)
    return {entry[0]: value for value, entry in enumerants.items()}


def _declared_extensions(extensions: list[Instruction]) -> frozenset[str]:
    names = set()
    for instruction in extensions:
        if instruction.opcode != Op.Extension:
            continue
        try:
            names.add(decode_string(instruction.operands, 0)[0])
        except (ValueError, IndexError, UnicodeDecodeError):
            continue
    return frozenset(names)


def _bits(mask: int) -> Iterator[int]:
    bit = 1
    while bit <= mask:
        if mask & bit:
            yield bit
        bit <<= 1


@functools.cache
def _opcodes_with_enumerants() -> frozenset[int]:
    """Opcodes with an enumerant among their operands (most function-body instructions have
    none and are not walked)."""
    return frozenset(
        opcode
        for opcode, info in INSTRUCTIONS.items()
        if any(_holds_enumerant(kind) for kind, _quantifier in info[2])
    )


def _holds_enumerant(kind: str) -> bool:
    category, data = OPERAND_KINDS.get(kind, ("", None))
    if category in _ENUM_CATEGORIES:
        return True
    return category == "Composite" and isinstance(data, tuple) and any(map(_holds_enumerant, data))
