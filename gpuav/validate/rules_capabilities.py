"""Capabilities, SPIR-V extensions and the SPIR-V version against what the device enabled.

The table (capability_table.json, seed 004's "List of SPIR-V Capabilities and enabling features
or extensions" with today's names) is data: each capability or SPIR-V extension lists the
alternatives that allow it, a device feature, a device extension or a minimum Vulkan version.
A capability or extension that the table does not list is not allowed in Vulkan at all.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from gpuav.spirv.grammar import OPERAND_KINDS, Capability, Op
from gpuav.spirv.instruction import Instruction, decode_string
from gpuav.validate.context import ValidationContext
from gpuav.validate.diagnostics import Diagnostic
from gpuav.validate.target_envs import TARGET_ENVS

TABLE_PATH = Path(__file__).with_name("capability_table.json")

# VkShaderModuleCreateInfo valid usage for the capability and extension sections.
SHADER_CAPABILITY_RULE = "VUID-VkShaderModuleCreateInfo-pCode-08738"
UNKNOWN_CAPABILITY_RULE = "VUID-VkShaderModuleCreateInfo-pCode-08739"
CAPABILITY_NOT_ENABLED_RULE = "VUID-VkShaderModuleCreateInfo-pCode-08740"
UNKNOWN_EXTENSION_RULE = "VUID-VkShaderModuleCreateInfo-pCode-08741"
EXTENSION_NOT_ENABLED_RULE = "VUID-VkShaderModuleCreateInfo-pCode-08742"
# The environment's SPIR-V versions (appendix "Versions and Formats") carry no VUID.
SPIRV_VERSION_RULE = "GPUAV-spirv-version-not-in-target-env"


@dataclass(frozen=True)
class Requirement:
    """One way to allow a capability or extension: exactly one of the three fields is set."""

    feature: str | None = None
    extension: str | None = None
    version: str | None = None  # minimum target environment, "vulkan1.2"

    def met(self, context: ValidationContext, vulkan: tuple[int, int]) -> bool:
        if self.feature is not None:
            return self.feature in context.features
        if self.extension is not None:
            return self.extension in context.extensions
        return self.version is not None and vulkan >= _version_pair(self.version)

    def __str__(self) -> str:
        if self.feature is not None:
            return f"feature {self.feature}"
        if self.extension is not None:
            return f"extension {self.extension}"
        return f"Vulkan {self.version and self.version.removeprefix('vulkan')}"


@dataclass(frozen=True)
class CapabilityTable:
    """``capabilities`` by enumerant value (aliases merged), ``extensions`` by name, and the
    newest SPIR-V version (major, minor) each target environment accepts."""

    capabilities: Mapping[int, tuple[Requirement, ...]]
    extensions: Mapping[str, tuple[Requirement, ...]]
    spirv_versions: Mapping[str, tuple[int, int]]


@functools.cache
def load_table(path: Path = TABLE_PATH) -> CapabilityTable:
    """The table, parsed once; names are resolved through the SPIR-V grammar."""
    document = json.loads(path.read_text(encoding="utf-8"))
    capabilities: dict[int, tuple[Requirement, ...]] = {}
    for name, alternatives in document["capabilities"].items():
        value = getattr(Capability, name)  # a misspelt name fails here, and in the tests
        capabilities[value] = capabilities.get(value, ()) + _requirements(alternatives)
    extensions = {name: _requirements(alt) for name, alt in document["extensions"].items()}
    versions = {env: _version_pair(text) for env, text in document["spirv_versions"].items()}
    return CapabilityTable(capabilities, extensions, versions)


def check(context: ValidationContext) -> Iterator[Diagnostic]:
    table = load_table()
    vulkan = _version_pair(context.target_env)
    module = context.module
    yield from _check_version(context, table)
    if Capability.Shader not in _declared_with_implied(module.capabilities):
        yield Diagnostic(
            SHADER_CAPABILITY_RULE, "the module does not declare the Shader capability"
        )
    for instruction in module.capabilities:
        yield from _check_capability(instruction, table, context, vulkan)
    for instruction in module.extensions:
        yield from _check_extension(instruction, table, context, vulkan)


def _check_version(context: ValidationContext, table: CapabilityTable) -> Iterator[Diagnostic]:
    newest = table.spirv_versions.get(context.target_env)
    version = context.module.version_tuple
    if newest is not None and version > newest:
        yield Diagnostic(
            SPIRV_VERSION_RULE,
            f"SPIR-V {version[0]}.{version[1]} is newer than {context.target_env} accepts "
            f"(at most SPIR-V {newest[0]}.{newest[1]})",
        )


def _check_capability(
    instruction: Instruction,
    table: CapabilityTable,
    context: ValidationContext,
    vulkan: tuple[int, int],
) -> Iterator[Diagnostic]:
    if instruction.opcode != Op.Capability or not instruction.operands:
        return
    value = instruction.operands[0]
    yield from _requirement_diagnostics(
        f"capability {capability_name(value)}",
        table.capabilities.get(value),
        (UNKNOWN_CAPABILITY_RULE, CAPABILITY_NOT_ENABLED_RULE),
        context,
        vulkan,
        instruction.origin,
    )


def _check_extension(
    instruction: Instruction,
    table: CapabilityTable,
    context: ValidationContext,
    vulkan: tuple[int, int],
) -> Iterator[Diagnostic]:
    if instruction.opcode != Op.Extension:
        return
    try:
        name = decode_string(instruction.operands, 0)[0]
    except (ValueError, IndexError, UnicodeDecodeError):
        name = "<unreadable name>"
    yield from _requirement_diagnostics(
        f"SPIR-V extension {name}",
        table.extensions.get(name),
        (UNKNOWN_EXTENSION_RULE, EXTENSION_NOT_ENABLED_RULE),
        context,
        vulkan,
        instruction.origin,
    )


def _requirement_diagnostics(
    what: str,
    requirements: tuple[Requirement, ...] | None,
    rules: tuple[str, str],
    context: ValidationContext,
    vulkan: tuple[int, int],
    origin: int | None,
) -> Iterator[Diagnostic]:
    """``rules``: (not allowed in Vulkan at all, allowed but none of its requirements met)."""
    unknown_rule, not_enabled_rule = rules
    if requirements is None:
        yield Diagnostic(unknown_rule, f"{what} is not allowed in Vulkan", origin)
    elif requirements and not any(r.met(context, vulkan) for r in requirements):
        alternatives = _alternatives(requirements, context.target_env)
        yield Diagnostic(not_enabled_rule, f"{what} needs {alternatives}", origin)


def capability_name(value: int) -> str:
    """The grammar's name of a capability value, or ``Capability(<value>)`` if unknown."""
    enumerants = OPERAND_KINDS["Capability"][1]
    info = enumerants.get(value) if isinstance(enumerants, dict) else None
    return info[0] if info else f"Capability({value})"


def _requirements(alternatives: list[dict[str, str]]) -> tuple[Requirement, ...]:
    return tuple(Requirement(**alternative) for alternative in alternatives)


def _alternatives(requirements: tuple[Requirement, ...], target_env: str) -> str:
    texts = [str(requirement) for requirement in requirements]
    if len(texts) == 1:
        return f"{texts[0]}, which is not enabled ({target_env})"
    return f"one of {', '.join(texts)}; none is enabled ({target_env})"


def _version_pair(text: str) -> tuple[int, int]:
    """(major, minor) of "1.3" or "vulkan1.3"; an unknown environment counts as the newest."""
    if text.startswith("vulkan") and text not in TARGET_ENVS:
        text = TARGET_ENVS[-1]
    major, _, minor = text.removeprefix("vulkan").partition(".")
    return int(major), int(minor)


def _declared_with_implied(capabilities: list[Instruction]) -> set[int]:
    """Declared capabilities and those they implicitly declare (Geometry declares Shader)."""
    enumerants = OPERAND_KINDS["Capability"][1]
    found: set[int] = set()
    pending = [i.operands[0] for i in capabilities if i.opcode == Op.Capability and i.operands]
    while pending:
        value = pending.pop()
        if value in found:
            continue
        found.add(value)
        info = enumerants.get(value) if isinstance(enumerants, dict) else None
        if info:
            pending.extend(getattr(Capability, name) for name in info[2])
    return found
